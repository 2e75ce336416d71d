package dev.changeflow.sources.cdf.stream;

import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.ChangeFeedOptions;
import dev.changeflow.sources.cdf.stream.enumerator.PlanningPosition;

import org.apache.flink.api.connector.source.Boundedness;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Option validation and start resolution of {@link ChangeFeedSource.Builder} (F3, F4, F6, F8). */
class ChangeFeedSourceBuilderTest {

    @TempDir Path warehouse;

    private Table table;
    private TableLoader loader;

    @BeforeEach
    void setUp() {
        Schema schema =
                new Schema(
                        List.of(Types.NestedField.required(1, "id", Types.LongType.get())),
                        Set.of(1));
        String location = warehouse.resolve("t").toString();
        table =
                new HadoopTables(new Configuration())
                        .create(
                                schema,
                                PartitionSpec.unpartitioned(),
                                Map.of(TableProperties.FORMAT_VERSION, "2"),
                                location);
        for (int i = 0; i < 3; i++) {
            if (table.currentSnapshot() != null) {
                long last = table.currentSnapshot().timestampMillis();
                while (System.currentTimeMillis() <= last) {
                    Thread.onSpinWait(); // distinct commit times, no sleep
                }
            }
            table.newAppend().appendFile(file(i)).commit(); // versions 1..3 (metadata only)
        }
        loader = TableLoader.fromHadoopTable(location);
    }

    private DataFile file(int i) {
        return DataFiles.builder(PartitionSpec.unpartitioned())
                .withPath(warehouse.resolve("f" + i + ".parquet").toString())
                .withFileSizeInBytes(10)
                .withRecordCount(1)
                .build();
    }

    private static void assertCode(Runnable build, CdfException.ErrorCode code, String message) {
        assertThatThrownBy(build::run)
                .isInstanceOfSatisfying(
                        CdfException.class, e -> assertThat(e.code()).isEqualTo(code))
                .hasMessageContaining(message);
    }

    @Test
    void startPositions() {
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startingVersion(4)
                                .buildSource()
                                .getBoundedness())
                .isEqualTo(Boundedness.CONTINUOUS_UNBOUNDED);
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startingVersion(2)
                                .bounded(true)
                                .buildSource()
                                .getBoundedness())
                .isEqualTo(Boundedness.BOUNDED);
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .options(Map.of("starting-version", "LATEST"))
                                .buildSource()
                                .rowType()
                                .asSummaryString())
                .isEqualTo(
                        "ROW<`id` BIGINT NOT NULL, `_change_type` STRING NOT NULL, `_commit_version` BIGINT NOT NULL, "
                                + "`_commit_timestamp` TIMESTAMP_LTZ(3) NOT NULL> NOT NULL");
    }

    /**
     * F6: no position → the current snapshot; latest; a version; a timestamp (first commit at or
     * after it).
     */
    @Test
    void startResolution() {
        long v2Millis = 0;
        for (Snapshot s : table.snapshots()) {
            if (s.sequenceNumber() == 2) {
                v2Millis = s.timestampMillis();
            }
        }
        String v2 =
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS")
                        .withZone(ZoneOffset.UTC)
                        .format(Instant.ofEpochMilli(v2Millis));

        assertThat(ChangeFeedSource.forTable(loader).buildSource().startPosition())
                .isEqualTo(
                        PlanningPosition.initialSnapshot(table.currentSnapshot().snapshotId(), 3));
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startingLatest()
                                .buildSource()
                                .startPosition()
                                .nextVersion())
                .isEqualTo(4);
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startingVersion(4)
                                .buildSource()
                                .startPosition()
                                .nextVersion())
                .isEqualTo(4);
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startingVersion(0)
                                .buildSource()
                                .startPosition()
                                .nextVersion())
                .isEqualTo(1);
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startingTimestamp(v2)
                                .buildSource()
                                .startPosition()
                                .nextVersion())
                .isEqualTo(2);
    }

    /**
     * G1 snapshot-then-changes from N: the table as of N − 1 (its newest snapshot at or before it)
     * as inserts first, then the changes from N; the same resolution for a start resolver.
     */
    @Test
    void snapshotThenChangesStartsWithTheSnapshotBeforeTheVersion() {
        long[] ids = new long[4];
        for (Snapshot s : table.snapshots()) {
            ids[(int) s.sequenceNumber()] = s.snapshotId();
        }
        PlanningPosition v2 = PlanningPosition.initialSnapshot(ids[2], 2);
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .snapshotThenChanges(3)
                                .buildSource()
                                .startPosition())
                .isEqualTo(v2);
        assertThat(ChangeFeedStart.snapshotThenChanges(3).resolve(table)).isEqualTo(v2);
        // at latest + 1: the current snapshot, as without a starting position
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .snapshotThenChanges(4)
                                .buildSource()
                                .startPosition())
                .isEqualTo(PlanningPosition.initialSnapshot(ids[3], 3));
        // nothing before version 1: its changes only
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .snapshotThenChanges(1)
                                .buildSource()
                                .startPosition())
                .isEqualTo(PlanningPosition.at(1));
        assertThat(ChangeFeedStart.changesFrom(3).resolve(table)).isEqualTo(PlanningPosition.at(3));
        assertThat(ChangeFeedStart.currentSnapshot().resolve(table))
                .isEqualTo(PlanningPosition.initialSnapshot(ids[3], 3));
        assertCode(
                () -> ChangeFeedSource.forTable(loader).snapshotThenChanges(5).buildSource(),
                CdfException.ErrorCode.START_AFTER_LATEST_COMMIT,
                "The starting version 5 of the change feed of table");
        assertCode(
                () ->
                        ChangeFeedSource.forTable(loader)
                                .snapshotThenChanges(2)
                                .startingVersion(2)
                                .buildSource(),
                CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                "More than one starting position");
        // the snapshot before an expired version is gone with it
        table.expireSnapshots()
                .expireOlderThan(table.currentSnapshot().timestampMillis())
                .retainLast(1)
                .commit();
        assertCode(
                () -> ChangeFeedSource.forTable(loader).snapshotThenChanges(3).buildSource(),
                CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                "Version 3 of table");
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .snapshotThenChanges(4)
                                .buildSource()
                                .startPosition())
                .isEqualTo(PlanningPosition.initialSnapshot(ids[3], 3));
    }

    /**
     * G1 start modes: a changelog starts with the table as of N − 1 unless {@code start-mode} is
     * {@code changes-only}, for every way of naming N (a version, a timestamp, {@code latest},
     * none); a change-feed stream keeps F6's start unless the mode is given; an unknown mode names
     * the option and the accepted values.
     */
    @Test
    void startModes() {
        long[] ids = new long[4];
        long v2Millis = 0;
        for (Snapshot s : table.snapshots()) {
            ids[(int) s.sequenceNumber()] = s.snapshotId();
            if (s.sequenceNumber() == 2) {
                v2Millis = s.timestampMillis();
            }
        }
        String v2 =
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS")
                        .withZone(ZoneOffset.UTC)
                        .format(Instant.ofEpochMilli(v2Millis));
        PlanningPosition snapshot1 = PlanningPosition.initialSnapshot(ids[1], 1);
        PlanningPosition snapshot2 = PlanningPosition.initialSnapshot(ids[2], 2);
        PlanningPosition current = PlanningPosition.initialSnapshot(ids[3], 3);
        Map<Map<String, String>, List<PlanningPosition>> expected =
                Map.of(
                        // options -> [changelog default, changelog changes-only]
                        Map.of("starting-version", "3"),
                        List.of(snapshot2, PlanningPosition.at(3)),
                        Map.of("starting-timestamp", v2),
                        List.of(snapshot1, PlanningPosition.at(2)),
                        Map.of("starting-version", "latest"),
                        List.of(current, PlanningPosition.at(4)),
                        Map.of(),
                        List.of(current, PlanningPosition.at(4)));
        expected.forEach(
                (options, positions) -> {
                    assertThat(
                                    ChangeFeedSource.forTable(loader)
                                            .options(options)
                                            .changelog(true)
                                            .buildSource()
                                            .startPosition())
                            .as("changelog %s", options)
                            .isEqualTo(positions.get(0));
                    Map<String, String> changesOnly = new HashMap<>(options);
                    changesOnly.put("start-mode", "CHANGES-ONLY");
                    assertThat(
                                    ChangeFeedSource.forTable(loader)
                                            .options(changesOnly)
                                            .changelog(true)
                                            .buildSource()
                                            .startPosition())
                            .as("changelog %s", changesOnly)
                            .isEqualTo(positions.get(1));
                });
        // the change feed: F6 unless a mode is given
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startingVersion(3)
                                .buildSource()
                                .startPosition())
                .isEqualTo(PlanningPosition.at(3));
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startingVersion(3)
                                .startMode(ChangeFeedOptions.StartMode.SNAPSHOT_THEN_CHANGES)
                                .buildSource()
                                .startPosition())
                .isEqualTo(snapshot2);
        assertThat(
                        ChangeFeedSource.forTable(loader)
                                .startMode(ChangeFeedOptions.StartMode.CHANGES_ONLY)
                                .buildSource()
                                .startPosition())
                .isEqualTo(PlanningPosition.at(4));
        assertCode(
                () ->
                        ChangeFeedSource.forTable(loader)
                                .options(Map.of("start-mode", "snapshot-only"))
                                .changelog(true)
                                .buildSource(),
                CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                "'start-mode' = 'snapshot-only' for the change feed of table "
                        + loader
                        + " is not one of 'snapshot-then-changes', 'changes-only'.");
    }

    /**
     * F8: a stream may start at latest + 1 (the replay case); later starts fail as in batch, with
     * advice a stream accepts (G1: also the changelog's): an earlier start or {@code
     * starting-version} = {@code latest}, never the batch option {@code
     * timestamp-out-of-range.enabled}.
     */
    @Test
    void startAfterLatestPlusOneFails() {
        table.refresh();
        Snapshot last = table.currentSnapshot();
        for (boolean changelog : List.of(false, true)) {
            assertThatThrownBy(
                            () ->
                                    ChangeFeedSource.forTable(loader)
                                            .changelog(changelog)
                                            .startingVersion(5)
                                            .buildSource())
                    .isInstanceOf(CdfException.class)
                    .hasMessage(
                            "START_AFTER_LATEST_COMMIT: The starting version 5 of the change feed of "
                                    + "table %s is after the latest version 3. Start at version 4 or "
                                    + "earlier; 'starting-version' = 'latest' starts after the latest "
                                    + "commit.",
                            table.name());
            assertThatThrownBy(
                            () ->
                                    ChangeFeedSource.forTable(loader)
                                            .changelog(changelog)
                                            .options(Map.of("starting-timestamp", "2999-01-01"))
                                            .buildSource())
                    .isInstanceOf(CdfException.class)
                    .hasMessage(
                            "START_AFTER_LATEST_COMMIT: The starting timestamp '2999-01-01' of the change "
                                    + "feed of table %s is after the last commit: the last commit is "
                                    + "version 3 at %s. Give an earlier starting timestamp, or set "
                                    + "'starting-version' = 'latest' instead to start after the latest "
                                    + "commit.",
                            table.name(), Instant.ofEpochMilli(last.timestampMillis()));
        }
    }

    @Test
    void expiredStartFails() {
        table.expireSnapshots()
                .expireOlderThan(table.currentSnapshot().timestampMillis())
                .retainLast(1)
                .commit();
        assertCode(
                () -> ChangeFeedSource.forTable(loader).startingVersion(2).buildSource(),
                CdfException.ErrorCode.VERSION_NOT_AVAILABLE,
                "Version 2 of table");
    }

    @Test
    void invalidOptions() {
        assertCode(
                () ->
                        ChangeFeedSource.forTable(loader)
                                .startingVersion(1)
                                .startingTimestamp("2026-01-01")
                                .buildSource(),
                CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                "More than one starting position");
        assertCode(
                () -> ChangeFeedSource.forTable(loader).options(Map.of("starting-version", "soon")),
                CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                "'starting-version' = 'soon' for the change feed of table");
        assertCode(
                () -> ChangeFeedSource.forTable(loader).options(Map.of("ending-version", "3")),
                CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                "a stream has no ending bound");
        assertCode(
                () ->
                        ChangeFeedSource.forTable(loader)
                                .options(Map.of("max-files-per-cycle", "0"))
                                .buildSource(),
                CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                "'max-files-per-cycle' = 0");
        assertCode(
                () -> ChangeFeedSource.forTable(loader).options(Map.of("bounded", "yes")),
                CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                "'bounded' = 'yes' for the change feed of table ");
        assertCode(
                () ->
                        ChangeFeedSource.forTable(loader)
                                .startingTimestamp("yesterday")
                                .buildSource(),
                CdfException.ErrorCode.INVALID_TIMESTAMP,
                "yesterday");
    }

    /** The README's option table of the streaming feed lists exactly the builder's options. */
    @Test
    void readmeListsEveryOption() throws Exception {
        Path p = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        String readme = Files.readString(p.resolve("README.md"));
        int start = readme.indexOf("## Change data feed (streaming, Java API)");
        String section = readme.substring(start, readme.indexOf("\n## ", start));
        Set<String> table = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\| `([a-z-]+)` \\|").matcher(section);
        while (m.find()) {
            table.add(m.group(1));
        }
        assertThat(table)
                .containsExactlyInAnyOrder(
                        ChangeFeedOptions.STARTING_VERSION.key(),
                        ChangeFeedOptions.STARTING_TIMESTAMP.key(),
                        ChangeFeedOptions.START_MODE.key(),
                        ChangeFeedOptions.MONITOR_INTERVAL.key(),
                        ChangeFeedOptions.MAX_FILES_PER_CYCLE.key(),
                        ChangeFeedOptions.MAX_BYTES_PER_CYCLE.key(),
                        ChangeFeedOptions.DELETE_FILE_CACHE_SIZE.key(),
                        ChangeFeedOptions.BOUNDED.key(),
                        ChangeFeedOptions.CONSUMER_ID.key());
    }
}
