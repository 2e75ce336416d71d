package dev.changeflow.sources.cdf;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.changeflow.sources.cdf.CdfTestTables.format;
import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Version model, ranges and errors of the change feed: F1 (versions), F3, F4, F8, K6. */
class TableChangesRangeTest {

    @TempDir Path warehouse;

    private CdfTestTables tables;

    @BeforeEach
    void setUp() {
        tables = new CdfTestTables(warehouse);
    }

    /** A table with versions 1..n, one insert of key i per version, commits at distinct millis. */
    private Table tableWithVersions(int n) {
        Table table = tables.create("t", 2);
        for (long i = 1; i <= n; i++) {
            table.newAppend().appendFile(tables.dataFile(table, row(i, "v" + i, "eu"))).commit();
            CdfTestTables.clockPast(table.currentSnapshot().timestampMillis() + 2);
        }
        return table;
    }

    private static long millisOf(Table table, long version) {
        for (Snapshot s : table.snapshots()) {
            if (s.sequenceNumber() == version) {
                return s.timestampMillis();
            }
        }
        throw new IllegalArgumentException("no version " + version);
    }

    /** F1/F8: a table without snapshot is at version 0; reading from 0 is empty, from 1 fails. */
    @Test
    void f1TableWithoutSnapshotIsVersionZero() {
        Table table = tables.create("t", 2);
        TableChanges changes = TableChanges.forTable(table).startingVersion(0).build();
        assertThat(changes.versions()).isEmpty();
        assertThat(CdfRows.render(changes)).isEmpty();
        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(1).build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "START_AFTER_LATEST_COMMIT: The starting version 1 of the change feed of table %s is after "
                                + "the latest version 0. Start at version 0 or earlier, or set "
                                + "'timestamp-out-of-range.enabled' = 'true' to get an empty result.",
                        table.name());
    }

    /** F3: inclusive version range; versions are sequence numbers. */
    @Test
    void f3InclusiveVersionRange() {
        Table table = tableWithVersions(4);
        assertThat(
                        CdfRows.render(
                                TableChanges.forTable(table)
                                        .startingVersion(2)
                                        .endingVersion(3)
                                        .build()))
                .containsExactly("2 insert (2, v2, eu)", "3 insert (3, v3, eu)");
        assertThat(CdfRows.render(TableChanges.forTable(table).startingVersion(4).build()))
                .containsExactly("4 insert (4, v4, eu)");
    }

    /** F3: both a starting version and a starting timestamp is an error; so is neither. */
    @Test
    void f3StartingVersionAndTimestampConflict() {
        Table table = tableWithVersions(1);
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .startingVersion(1)
                                        .startingTimestamp("2024-01-01")
                                        .build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Both 'starting-version' (1) and 'starting-timestamp' ('2024-01-01') are "
                                + "set for the change feed of table %s. Set only one of them.",
                        table.name());
        assertThatThrownBy(() -> TableChanges.forTable(table).build())
                .hasMessage(
                        "INVALID_CDC_OPTIONS: Neither 'starting-version' nor 'starting-timestamp' is set for the "
                                + "change feed of table %s. Set one of them.",
                        table.name());
    }

    /** F3: timestamps: exact match inclusive, offsets, date-only, options map. */
    @Test
    void f3TimestampsResolveInclusive() {
        Table table = tableWithVersions(4);
        long t2 = millisOf(table, 2);
        long t3 = millisOf(table, 3);
        TableChanges exact =
                TableChanges.forTable(table)
                        .startingTimestamp(format(t2))
                        .endingTimestamp(format(t3))
                        .build();
        assertThat(exact.versions()).containsExactly(2L, 3L);

        String withOffset =
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSXXX")
                        .format(Instant.ofEpochMilli(t2).atOffset(ZoneOffset.ofHours(2)));
        assertThat(
                        TableChanges.forTable(table)
                                .startingTimestamp(withOffset)
                                .endingVersion(2)
                                .build()
                                .versions())
                .containsExactly(2L);
        assertThat(TableChanges.forTable(table).startingTimestamp("1970-01-02").build().versions())
                .containsExactly(1L, 2L, 3L, 4L);
        assertThat(
                        TableChanges.forTable(table)
                                .options(
                                        Map.of(
                                                "starting-timestamp",
                                                format(t2 + 1),
                                                "ending-version",
                                                "3"))
                                .build()
                                .versions())
                .containsExactly(3L);
    }

    /** F3: two timestamps between the same pair of commits give an empty result, not an error. */
    @Test
    void f3TimestampsBetweenTheSameCommitsAreEmpty() {
        Table table = tableWithVersions(3);
        long t1 = millisOf(table, 1);
        long t2 = millisOf(table, 2);
        TableChanges changes =
                TableChanges.forTable(table)
                        .startingTimestamp(format(t1 + 1))
                        .endingTimestamp(format(t2 - 1))
                        .build();
        assertThat(changes.versions()).isEmpty();
        assertThat(CdfRows.render(changes)).isEmpty();
    }

    /** F3: other timestamp forms are INVALID_TIMESTAMP. */
    @Test
    void f3InvalidTimestamp() {
        Table table = tableWithVersions(1);
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .startingTimestamp("2024/01/01 10:00")
                                        .build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "INVALID_TIMESTAMP: 'starting-timestamp' = '2024/01/01 10:00' for the change feed of table %s "
                                + "is not a timestamp. Use yyyy-MM-dd, yyyy-MM-dd HH:mm:ss or yyyy-MM-dd HH:mm:ss.SSS, "
                                + "optionally followed by an offset such as Z or +02:00 (no offset means UTC).",
                        table.name());
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .startingTimestamp("2024-01-01 10:00:00.5")
                                        .build())
                .hasMessageStartingWith(
                        "INVALID_TIMESTAMP: 'starting-timestamp' = '2024-01-01 10:00:00.5'");
    }

    /** F4: end before start. */
    @Test
    void f4InvalidCdcRange() {
        Table table = tableWithVersions(3);
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .startingVersion(3)
                                        .endingVersion(2)
                                        .build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "INVALID_CDC_RANGE: The ending version 2 of the change feed of table %s is before its "
                                + "starting version 3. Give an ending version at or after the starting version.",
                        table.name());
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .startingTimestamp("2024-01-02")
                                        .endingTimestamp("2024-01-01")
                                        .build())
                .hasMessage(
                        "INVALID_CDC_RANGE: The ending timestamp '2024-01-01' of the change feed of table %s is "
                                + "before its starting timestamp '2024-01-02'. Give an ending timestamp at or after "
                                + "the starting timestamp.",
                        table.name());
    }

    /** F4: start after the latest version, with and without the tolerance option. */
    @Test
    void f4StartAfterLatestCommit() {
        Table table = tableWithVersions(2);
        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(3).build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "START_AFTER_LATEST_COMMIT: The starting version 3 of the change feed of table %s is after "
                                + "the latest version 2. Start at version 2 or earlier, or set "
                                + "'timestamp-out-of-range.enabled' = 'true' to get an empty result.",
                        table.name());
        assertThat(
                        TableChanges.forTable(table)
                                .startingVersion(3)
                                .timestampOutOfRangeEnabled(true)
                                .build()
                                .versions())
                .isEmpty();

        long t2 = millisOf(table, 2);
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .startingTimestamp(format(t2 + 1))
                                        .build())
                .hasMessage(
                        "START_AFTER_LATEST_COMMIT: The starting timestamp '%s' of the change feed of table %s is "
                                + "after the last commit: the last commit is version 2 at %s. Give an earlier "
                                + "starting timestamp, or set 'timestamp-out-of-range.enabled' = 'true' to get an "
                                + "empty result.",
                        format(t2 + 1), table.name(), Instant.ofEpochMilli(t2));
        TableChanges tolerated =
                TableChanges.forTable(table)
                        .startingTimestamp(format(t2 + 1))
                        .timestampOutOfRangeEnabled(true)
                        .build();
        assertThat(CdfRows.render(tolerated)).isEmpty();
    }

    /** F4: end after the latest version, with and without the tolerance option. */
    @Test
    void f4EndAfterLatestCommit() {
        Table table = tableWithVersions(2);
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .startingVersion(1)
                                        .endingVersion(5)
                                        .build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "END_AFTER_LATEST_COMMIT: The ending version 5 of the change feed of table %s is after the "
                                + "latest version 2. End at version 2 or earlier, or set "
                                + "'timestamp-out-of-range.enabled' = 'true' to read up to the latest version.",
                        table.name());
        assertThat(
                        CdfRows.render(
                                TableChanges.forTable(table)
                                        .startingVersion(2)
                                        .endingVersion(5)
                                        .timestampOutOfRangeEnabled(true)
                                        .build()))
                .containsExactly("2 insert (2, v2, eu)");

        long t2 = millisOf(table, 2);
        assertThatThrownBy(
                        () ->
                                TableChanges.forTable(table)
                                        .startingVersion(1)
                                        .endingTimestamp(format(t2 + 1))
                                        .build())
                .hasMessage(
                        "END_AFTER_LATEST_COMMIT: The ending timestamp '%s' of the change feed of table %s is after "
                                + "the last commit: the last commit is version 2 at %s. Give an ending timestamp at "
                                + "or before that commit, or set 'timestamp-out-of-range.enabled' = 'true' to read "
                                + "up to the latest version.",
                        format(t2 + 1), table.name(), Instant.ofEpochMilli(t2));
        assertThat(
                        TableChanges.forTable(table)
                                .startingVersion(1)
                                .endingTimestamp(format(t2 + 1))
                                .timestampOutOfRangeEnabled(true)
                                .build()
                                .versions())
                .containsExactly(1L, 2L);
    }

    /**
     * F4/F8: expired versions; the earliest available version is the oldest ancestor with a parent.
     */
    @Test
    void f4VersionNotAvailable() {
        Table table = tableWithVersions(4);
        table.expireSnapshots().expireSnapshotId(snapshotAt(table, 1).snapshotId()).commit();
        table.refresh();

        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(2).build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "VERSION_NOT_AVAILABLE: Version 2 of table %s is not available: the snapshots it needs have "
                                + "expired. Available versions: 3 to 4. Start at version 3 or later, or retain "
                                + "snapshots longer (register a consumer so that changeflow's snapshot expiry keeps "
                                + "them).",
                        table.name());
        assertThat(CdfRows.render(TableChanges.forTable(table).startingVersion(3).build()))
                .containsExactly("3 insert (3, v3, eu)", "4 insert (4, v4, eu)");
    }

    /** K6: a version whose files were removed fails as a whole, never a partial answer. */
    @Test
    void k6MissingFileIsVersionNotAvailable() {
        Table table = tableWithVersions(3);
        DataFile file = table.currentSnapshot().addedDataFiles(table.io()).iterator().next();
        assertThat(new File(file.location()).delete()).isTrue();
        TableChanges changes = TableChanges.forTable(table).startingVersion(1).build();
        List<String> seen = new ArrayList<>();
        assertThatThrownBy(() -> changes.read().forEach(r -> seen.add(String.valueOf(r.get(4)))))
                .isInstanceOf(CdfException.class)
                .hasMessageStartingWith(
                        String.format(
                                "VERSION_NOT_AVAILABLE: Version 3 of table %s is not available: a file it needs is "
                                        + "missing (",
                                table.name()))
                .hasMessageEndingWith("). Read from a later version, or restore the file.");
        assertThat(seen).containsExactly("1", "2");
    }

    /** F4: a range spanning a dropped column fails, naming the version; additive changes do not. */
    @Test
    void f4IncompatibleSchemaChange() {
        Table table = tableWithVersions(2);
        table.updateSchema().deleteColumn("region").commit();
        table.newAppend()
                .appendFile(tables.dataFile(table, row(table.schema(), 3L, "v3")))
                .commit();
        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(1).build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "INCOMPATIBLE_SCHEMA_CHANGE: The change feed of table %s from version 1 to version 3 spans a "
                                + "non-additive schema change at version 3 (column 'region' dropped). Read versions 1 "
                                + "to 2 and versions 3 to 3 separately.",
                        table.name());
        assertThat(CdfRows.render(TableChanges.forTable(table).startingVersion(3).build()))
                .containsExactly("3 insert (3, v3)");
    }

    /** F4: table columns named like the metadata columns. */
    @Test
    void f4ReservedColumnName() {
        Schema schema =
                new Schema(
                        Types.NestedField.required(1, "id", Types.LongType.get()),
                        Types.NestedField.optional(2, "_commit_version", Types.LongType.get()));
        Table table = tables.create("r", schema, PartitionSpec.unpartitioned(), 2, Map.of());
        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(0).build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "RESERVED_COLUMN_NAME: Table %s has a column named '_commit_version', which the change feed "
                                + "uses for its metadata columns (_change_type, _commit_version, _commit_timestamp). "
                                + "Rename the column to read the table's change feed.",
                        table.name());
    }

    /** design.md: format v1 tables are rejected. */
    @Test
    void formatV1IsRejected() {
        Table table = tables.create("v1", 1);
        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(0).build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "UNSUPPORTED_FORMAT_VERSION: Table %s has format version 1; the change feed needs format "
                                + "version 2 or 3 (versions are snapshot sequence numbers, which v1 does not have). "
                                + "Upgrade the table with the table property 'format-version' = '2'.",
                        table.name());
    }

    /**
     * F8: gaps are normal (a staged snapshot takes a sequence number); a start in a gap begins
     * next.
     */
    @Test
    void f8GapsAndStartBetweenVersions() {
        Table table = tableWithVersions(1);
        table.newAppend()
                .appendFile(tables.dataFile(table, row(99L, "staged", "eu")))
                .stageOnly()
                .commit();
        table.newAppend().appendFile(tables.dataFile(table, row(3L, "v3", "eu"))).commit();
        table.refresh();

        TableChanges changes = TableChanges.forTable(table).startingVersion(2).build();
        assertThat(changes.versions()).containsExactly(3L);
        assertThat(CdfRows.render(changes)).containsExactly("3 insert (3, v3, eu)");
        assertThat(TableChanges.forTable(table).startingVersion(0).build().versions())
                .containsExactly(1L, 3L);
    }

    /** F8: a range over versions removed from main by a rollback fails. */
    @Test
    void f8TableHistoryRewritten() {
        Table table = tableWithVersions(3);
        table.manageSnapshots().rollbackTo(snapshotAt(table, 1).snapshotId()).commit();
        table.newAppend().appendFile(tables.dataFile(table, row(4L, "v4", "eu"))).commit();
        table.refresh();

        assertThatThrownBy(() -> TableChanges.forTable(table).startingVersion(2).build())
                .isInstanceOf(CdfException.class)
                .hasMessage(
                        "TABLE_HISTORY_REWRITTEN: The history of table %s was rewritten: versions 2 to 3 were the "
                                + "table's current version once but are no longer ancestors of the current version 4 "
                                + "(a rollback), so the changes from version 4 to 4 cannot be read as one history. "
                                + "Read only versions before 2, or re-read the table's state as of version 4 and "
                                + "read the changes after it.",
                        table.name());
        assertThat(
                        CdfRows.render(
                                TableChanges.forTable(table)
                                        .startingVersion(0)
                                        .endingVersion(1)
                                        .build()))
                .containsExactly("1 insert (1, v1, eu)");
    }

    private static Snapshot snapshotAt(Table table, long version) {
        for (Snapshot s : table.snapshots()) {
            if (s.sequenceNumber() == version) {
                return s;
            }
        }
        throw new IllegalArgumentException("no version " + version);
    }
}
