package dev.changeflow.jobs.sql;

import dev.changeflow.jobs.sql.SqlStatement.Schedule;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Quartz and EVERY schedules as Kubernetes cron expressions, and what cannot convert (S3). */
class KubernetesCronTest {
    private static final SqlPosition P = new SqlPosition("p.sql", 1, 1);

    private static String every(int n, Schedule.Unit unit) {
        return KubernetesCron.of(new Schedule.Every(P, n, unit));
    }

    private static void refused(String quartz, String why) {
        assertThatThrownBy(() -> KubernetesCron.fromQuartz(quartz))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cron '" + quartz + "' has no Kubernetes cron expression: " + why);
    }

    @Test
    void quartzFieldsMapToTheFiveKubernetesFields() {
        assertThat(KubernetesCron.fromQuartz("0 0 * * * ?")).isEqualTo("0 * * * *");
        assertThat(KubernetesCron.fromQuartz("0 30 2 ? * MON-FRI")).isEqualTo("30 2 * * MON-FRI");
        assertThat(KubernetesCron.fromQuartz("0 15 10 ? * 2-6")).isEqualTo("15 10 * * 1-5");
        assertThat(KubernetesCron.fromQuartz("0 0 12 ? * 1,7")).isEqualTo("0 12 * * 0,6");
        assertThat(KubernetesCron.fromQuartz("0 0 12 ? * sun")).isEqualTo("0 12 * * SUN");
        assertThat(KubernetesCron.fromQuartz("0 0/15 * * * ?")).isEqualTo("0-59/15 * * * *");
        assertThat(KubernetesCron.fromQuartz("0 */10 8-18 * * ?")).isEqualTo("*/10 8-18 * * *");
        assertThat(KubernetesCron.fromQuartz("0 0 0 1,15 JAN-JUN ?"))
                .isEqualTo("0 0 1,15 JAN-JUN *");
        assertThat(KubernetesCron.fromQuartz("0 0 6 ? 3 3/2")).isEqualTo("0 6 * 3 2-6/2");
        assertThat(KubernetesCron.fromQuartz("  0 5 4 * * ? *  ")).isEqualTo("5 4 * * *");
        assertThat(KubernetesCron.fromQuartz("0 5 4 * * ? ?")).isEqualTo("5 4 * * *");
    }

    @Test
    void quartzThatKubernetesCannotExpressIsRefusedNamingTheField() {
        refused(
                "0 0 12 * *",
                "a Quartz expression has 6 or 7 fields (second minute hour day-of-month month"
                        + " day-of-week [year]), this one has 5");
        refused(
                "*/5 * * * * ?",
                "the second field is '*/5': a Kubernetes CronJob fires at whole minutes, so the"
                        + " second must be 0");
        refused(
                "0 0 12 * * ? 2027",
                "the year field is '2027': a Kubernetes cron expression has no year (use * or leave"
                        + " it out)");
        refused("0 0 12 ? * ?", "'?' may stand in only one of day-of-month and day-of-week");
        refused(
                "0 0 12 1 * MON",
                "give '?' in day-of-month or in day-of-week (Quartz does not combine both)");
        refused(
                "0 0 12 L * ?",
                "'L' in the day-of-month field uses L, W or # (last day, nearest weekday, n-th"
                        + " weekday), which a Kubernetes cron expression cannot express");
        refused(
                "0 0 12 15W * ?",
                "'15W' in the day-of-month field uses L, W or # (last day, nearest weekday, n-th"
                        + " weekday), which a Kubernetes cron expression cannot express");
        refused(
                "0 0 12 ? * 6#3",
                "'6#3' in the day-of-week field uses L, W or # (last day, nearest weekday, n-th"
                        + " weekday), which a Kubernetes cron expression cannot express");
        refused(
                "0 0 12 ? * 0",
                "'0' is out of range for the day-of-week field (1–7, Quartz numbers Sunday as 1)");
        refused("0 60 12 * * ?", "'60' is out of range for the minute field (0–59)");
        refused("0 0 24 * * ?", "'24' is out of range for the hour field (0–23)");
        refused("0 0 12 * 13 ?", "'13' is out of range for the month field (1–12)");
        refused(
                "0 0 12 ? * FRI-MON",
                "range 'FRI-MON' of the day-of-week field wraps around; write it as two ranges");
        refused(
                "0 0 12 ? * FUN",
                "'FUN' is not a value of the day-of-week field (SUN..., or a number)");
        refused("0 0/0 12 * * ?", "step /0 of the minute field is out of range");
    }

    @Test
    void everyConvertsOnlyPeriodsThatACronExpressionKeeps() {
        assertThat(every(1, Schedule.Unit.HOURS)).isEqualTo("0 * * * *");
        assertThat(every(6, Schedule.Unit.HOURS)).isEqualTo("0 */6 * * *");
        assertThat(every(12, Schedule.Unit.HOURS)).isEqualTo("0 */12 * * *");
        assertThat(every(24, Schedule.Unit.HOURS)).isEqualTo("0 0 * * *");
        assertThat(every(1, Schedule.Unit.DAYS)).isEqualTo("0 0 * * *");
        assertThat(every(7, Schedule.Unit.DAYS)).isEqualTo("0 0 * * 0");
        assertThat(every(168, Schedule.Unit.HOURS)).isEqualTo("0 0 * * 0");
        assertThat(every(1, Schedule.Unit.WEEKS)).isEqualTo("0 0 * * 0");
        assertThat(KubernetesCron.of(new Schedule.Cron(P, "0 0 6 ? * 2", "UTC")))
                .isEqualTo("0 6 * * 1");
        for (Schedule.Every e :
                new Schedule.Every[] {
                    new Schedule.Every(P, 5, Schedule.Unit.HOURS),
                    new Schedule.Every(P, 48, Schedule.Unit.HOURS),
                    new Schedule.Every(P, 2, Schedule.Unit.DAYS),
                    new Schedule.Every(P, 2, Schedule.Unit.WEEKS)
                }) {
            assertThatThrownBy(() -> KubernetesCron.of(e))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage(
                            "SCHEDULE EVERY "
                                    + e.count()
                                    + " "
                                    + e.unit()
                                    + " has no Kubernetes cron expression: a CronJob fires at"
                                    + " fixed times of the day, so EVERY converts only for 1, 2,"
                                    + " 3, 4, 6, 8, 12 or 24 hours, 1 or 7 days and 1 week; write"
                                    + " the times with SCHEDULE CRON '<quartz>' instead (e.g. CRON"
                                    + " '0 0 0 */2 * ?' for every second day of the month)");
        }
    }
}
