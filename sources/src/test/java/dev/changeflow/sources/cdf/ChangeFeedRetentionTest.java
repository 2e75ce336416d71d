package dev.changeflow.sources.cdf;

import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;
import dev.changeflow.sources.cdf.retention.ConsumerPosition;
import dev.changeflow.sources.cdf.retention.ConsumerProgress;
import dev.changeflow.sources.cdf.retention.ConsumerRegistry;
import dev.changeflow.sources.cdf.retention.ExpiryReport;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Consumers and retention (F7, F8, K6): the consumer registry through the table's FileIO, throttled
 * progress, and changeflow's snapshot expiry keeping what live consumers need, on tables of 80
 * versions (one insert of key v in version v, commits at distinct milliseconds).
 */
class ChangeFeedRetentionTest {

    @TempDir static Path warehouse;

    private static CdfTestTables tables;
    private static Table withoutConsumers;
    private static Table withConsumers;
    private Table table;

    /** The two 80-version tables the expiry tests change (built once: each takes seconds). */
    @BeforeAll
    static void buildTables() {
        tables = new CdfTestTables(warehouse);
        withoutConsumers = tableOf("without_consumers", 80);
        withConsumers = tableOf("with_consumers", 80);
    }

    private static Table tableOf(String name, int versions) {
        Table table = tables.create(name, 2);
        for (long v = 1; v <= versions; v++) {
            table.newFastAppend()
                    .appendFile(tables.dataFile(table, row(v, "v" + v, "eu")))
                    .commit();
            CdfTestTables.clockPast(table.currentSnapshot().timestampMillis() + 1);
        }
        return table;
    }

    private Instant committed(long version) {
        for (Snapshot s : table.snapshots()) {
            if (s.sequenceNumber() == version) {
                return Instant.ofEpochMilli(s.timestampMillis());
            }
        }
        throw new IllegalArgumentException("no version " + version);
    }

    private static List<Long> versions(long from, long to) {
        return LongStream.rangeClosed(from, to).boxed().collect(Collectors.toList());
    }

    private List<String> changesFrom(long version) {
        return CdfRows.render(TableChanges.forTable(table).startingVersion(version).build());
    }

    private String notAvailable(long requested, long earliest) {
        return String.format(
                "VERSION_NOT_AVAILABLE: Version %d of table %s is not available: the snapshots it needs have "
                        + "expired. Available versions: %d to 80. Start at version %d or later, or retain snapshots "
                        + "longer (register a consumer so that changeflow's snapshot expiry keeps them).",
                requested, table.name(), earliest, earliest);
    }

    /**
     * F7/F8/K6: without consumers, expiring below 70 makes 69 unavailable, naming the earliest
     * version.
     */
    @Test
    void expiryWithoutConsumersMakesOlderVersionsUnavailable() {
        table = withoutConsumers;
        ExpiryReport report =
                ChangeFeedExpiry.forTable(table).olderThan(committed(70)).retainLast(1).execute();
        assertThat(report.expiredVersions()).isEqualTo(versions(1, 69));
        assertThat(report.oldestRetainedVersion()).isEqualTo(70L);
        assertThat(report.keptForConsumersFrom()).isNull();
        assertThat(report.liveConsumers()).isEmpty();
        assertThat(report.staleConsumers()).isEmpty();
        assertThat(report.deletedFiles()).isGreaterThan(0);

        // the earliest available version is the oldest retained ancestor whose parent is retained
        // (F8)
        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(69).build())
                .isInstanceOf(CdfException.class)
                .hasMessage(notAvailable(69, 71));
        assertThat(
                        ((CdfException)
                                        Assertions.catchThrowable(
                                                () ->
                                                        TableChanges.forTable(table)
                                                                .startingVersion(70)
                                                                .build()))
                                .code())
                .isEqualTo(CdfException.ErrorCode.VERSION_NOT_AVAILABLE);
        assertThat(changesFrom(71))
                .hasSize(10)
                .startsWith("71 insert (71, v71, eu)")
                .endsWith("80 insert (80, v80, eu)");
    }

    /**
     * F7: a live consumer at next-version 72 keeps 71 and later through an expiry of everything
     * else.
     */
    @Test
    void liveConsumerKeepsItsVersionsAndStaleConsumerIsReportedAndIgnored() {
        table = withConsumers;
        Instant now = committed(80).plusSeconds(60);
        ConsumerRegistry registry = ConsumerRegistry.forTable(table);
        registry.write("gold", 72, now.minus(Duration.ofHours(1)));
        registry.write("forgotten", 5, now.minus(Duration.ofDays(8)));

        ExpiryReport report =
                ChangeFeedExpiry.forTable(table)
                        .olderThan(now)
                        .retainLast(1)
                        .clock(Clock.fixed(now, ZoneOffset.UTC))
                        .execute();
        assertThat(report.expiredVersions()).isEqualTo(versions(1, 70));
        assertThat(report.oldestRetainedVersion()).isEqualTo(71L);
        assertThat(report.keptForConsumersFrom()).isEqualTo(71L);
        assertThat(report.cutoff()).isEqualTo(committed(71));
        assertThat(report.liveConsumers())
                .containsExactly(new ConsumerPosition("gold", 72, now.minus(Duration.ofHours(1))));
        assertThat(report.staleConsumers())
                .containsExactly(
                        new ConsumerPosition("forgotten", 5, now.minus(Duration.ofDays(8))));
        assertThat(report.describe())
                .isEqualTo(
                        String.join(
                                "\n",
                                "table: " + table.name(),
                                "expired versions: 1-70",
                                "oldest retained version: 71",
                                "cutoff: " + committed(71),
                                "kept for consumers from version: 71",
                                "live consumers: [gold@72 ("
                                        + now.minus(Duration.ofHours(1))
                                        + ")]",
                                "stale consumers (ignored): [forgotten@5 ("
                                        + now.minus(Duration.ofDays(8))
                                        + ")]",
                                "deleted files: " + report.deletedFiles()));

        // the consumer reads on from 72; 71 itself is kept as 72's parent, its own parent is gone
        // (F8)
        assertThat(changesFrom(72)).hasSize(9).startsWith("72 insert (72, v72, eu)");
        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(71).build())
                .hasMessage(notAvailable(71, 72));

        // a shorter consumer-expiry makes "gold" stale too: then only retainLast holds
        ExpiryReport second =
                ChangeFeedExpiry.forTable(table)
                        .olderThan(now)
                        .retainLast(1)
                        .consumerExpiry(Duration.ofMinutes(30))
                        .clock(Clock.fixed(now, ZoneOffset.UTC))
                        .execute();
        assertThat(second.expiredVersions()).isEqualTo(versions(71, 79));
        assertThat(second.staleConsumers())
                .extracting(ConsumerPosition::consumerId)
                .containsExactly("forgotten", "gold");
    }

    /**
     * Issue #17: the newest commit of each Iceberg Flink sink committer stays reachable from the
     * current snapshot (its restore walks there), however small retainLast; a committer whose
     * newest commit is older than the consumer expiry is stale, unless it made the newest Flink
     * commit.
     */
    @Test
    void expiryKeepsTheNewestCommitOfEachFlinkCommitterReachable() {
        table = tableOf("flink_committers", 3);
        stampedCommit("job-b", "op-b", 7); // version 4
        stampedCommit("job-a", "op-a", 3); // version 5
        stampedCommit("job-a", "op-a", 4); // version 6
        table.newFastAppend().set("changeflow.test", "compaction").commit(); // version 7
        CdfTestTables.clockPast(table.currentSnapshot().timestampMillis() + 1);
        Instant now = Instant.now();

        ExpiryReport report =
                ChangeFeedExpiry.forTable(table).olderThan(now).retainLast(1).execute();

        assertThat(report.expiredVersions()).isEqualTo(versions(1, 3));
        assertThat(report.oldestRetainedVersion()).isEqualTo(4L);
        assertThat(report.keptForFlinkCommittersFrom()).isEqualTo(4L);
        assertThat(report.flinkCommitters()).containsExactly("op-b", "op-a");
        assertThat(report.describe())
                .contains("kept for Flink sink committers from version: 4 [op-b, op-a]\n");

        // an hour later, with a consumer expiry of 30 minutes, op-b is stale; op-a made the newest
        // Flink commit and stays, however old
        Instant later = now.plus(Duration.ofHours(1));
        ExpiryReport second =
                ChangeFeedExpiry.forTable(table)
                        .olderThan(later)
                        .retainLast(1)
                        .consumerExpiry(Duration.ofMinutes(30))
                        .clock(Clock.fixed(later, ZoneOffset.UTC))
                        .execute();
        assertThat(second.expiredVersions()).isEqualTo(versions(4, 5));
        assertThat(second.oldestRetainedVersion()).isEqualTo(6L);
        assertThat(second.flinkCommitters()).containsExactly("op-a");
        table.refresh();
        assertThat(table.currentSnapshot().parentId()).isNotNull();
        assertThat(table.snapshot(table.currentSnapshot().parentId()).summary())
                .containsEntry("flink.max-committed-checkpoint-id", "4");
    }

    private void stampedCommit(String job, String operator, long checkpoint) {
        table.newFastAppend()
                .set("flink.job-id", job)
                .set("flink.operator-id", operator)
                .set("flink.max-committed-checkpoint-id", Long.toString(checkpoint))
                .commit();
        CdfTestTables.clockPast(table.currentSnapshot().timestampMillis() + 1);
    }

    @Test
    void registryWritesReadsListsAndRemovesThroughTheTablesFileIO() throws IOException {
        table = tableOf("registry", 3);
        ConsumerRegistry registry = ConsumerRegistry.forTable(table);
        assertThat(registry.list()).isEmpty();
        Instant at = Instant.parse("2026-11-30T07:00:00Z");
        registry.write("gold-job", 72, at);
        registry.write("audit.v2", 3, at);
        assertThat(registry.location("gold-job"))
                .isEqualTo(table.location() + "/changeflow/consumers/gold-job.json");
        try (InputStream in = table.io().newInputFile(registry.location("gold-job")).newStream()) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8))
                    .isEqualTo(
                            "{\"consumer-id\":\"gold-job\",\"next-version\":72,\"updated-at\":\"2026-11-30T07:00:00Z\"}");
        }
        assertThat(registry.read("gold-job")).contains(new ConsumerPosition("gold-job", 72, at));
        assertThat(registry.read("nobody")).isEmpty();
        assertThat(registry.list())
                .containsExactly(
                        new ConsumerPosition("audit.v2", 3, at),
                        new ConsumerPosition("gold-job", 72, at));
        table.refresh();
        assertThat(table.currentSnapshot().sequenceNumber()).isEqualTo(3L); // no metadata commit
        assertThat(registry.remove("audit.v2")).isTrue();
        assertThat(registry.remove("audit.v2")).isFalse();
        assertThat(registry.list())
                .extracting(ConsumerPosition::consumerId)
                .containsExactly("gold-job");

        assertThatThrownBy(() -> registry.write("../escape", 1, at))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "Consumer id '../escape' for table "
                                + table.name()
                                + " is not valid: use 1 to 128 letters, "
                                + "digits, '.', '_' or '-', not starting with '.'.");
        try (OutputStream out =
                table.io().newOutputFile(registry.location("broken")).createOrOverwrite()) {
            out.write(
                    "{\"consumer-id\":\"broken\",\"next-version\":\"soon\"}"
                            .getBytes(StandardCharsets.UTF_8));
        }
        assertThatThrownBy(registry::list)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage(
                        "Consumer file "
                                + registry.location("broken")
                                + " of table "
                                + table.name()
                                + " is malformed: "
                                + "it needs \"consumer-id\" (text), \"next-version\" (integer >= 0) and \"updated-at\" (ISO-8601 "
                                + "instant). Delete the file (the consumer is then unknown to snapshot expiry) or rewrite it.");
        // a malformed consumer stops the expiry before anything is expired
        assertThatThrownBy(
                        () -> ChangeFeedExpiry.forTable(table).olderThan(Instant.now()).execute())
                .isInstanceOf(IllegalStateException.class);
        table.refresh();
        assertThat(table.snapshots()).hasSize(3);
    }

    /** F7: positions are written after completed checkpoints, at most once a minute. */
    @Test
    void progressIsWrittenAtMostOnceAMinute() {
        table = tableOf("progress", 1);
        MutableClock clock = new MutableClock(Instant.parse("2026-11-30T07:00:00Z"));
        ConsumerRegistry registry = ConsumerRegistry.forTable(table);
        ConsumerProgress progress = ConsumerProgress.of(registry, "gold", clock);
        assertThat(progress.checkpointCompleted(10)).isTrue();
        clock.now = clock.now.plusSeconds(59);
        assertThat(progress.checkpointCompleted(11)).isFalse();
        assertThat(registry.read("gold"))
                .contains(new ConsumerPosition("gold", 10, Instant.parse("2026-11-30T07:00:00Z")));
        clock.now = clock.now.plusSeconds(1);
        assertThat(progress.checkpointCompleted(12)).isTrue();
        assertThat(registry.read("gold"))
                .contains(new ConsumerPosition("gold", 12, Instant.parse("2026-11-30T07:01:00Z")));
        assertThatThrownBy(() -> ConsumerProgress.of(registry, "", clock))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static final class MutableClock extends Clock {
        Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
