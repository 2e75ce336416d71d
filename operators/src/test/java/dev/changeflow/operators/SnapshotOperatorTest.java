package dev.changeflow.operators;

import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.LocalDateTime;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * AUTO CDC FROM SNAPSHOT (semantics.md A6) through {@link SnapshotSequencer}, {@link
 * SnapshotDiffOperator} and {@link AutoCdcApplyOperator} in Flink's operator test harnesses: the
 * three exact examples of A6 (SCD type 2 and 1), every error code, a late snapshot, and snapshot →
 * restore between and inside snapshots.
 */
class SnapshotOperatorTest {
    static final String V = SnapshotVersions.VERSION_COLUMN;

    /** id BIGINT NOT NULL, then {@code columns} (STRING), then the version column. */
    static AutoCdcSpec.Builder flow(LogicalType versionType, String... columns) {
        LogicalType[] types = new LogicalType[columns.length + 2];
        String[] names = new String[columns.length + 2];
        types[0] = new BigIntType(false);
        names[0] = "id";
        for (int i = 0; i < columns.length; i++) {
            types[i + 1] = VarCharType.STRING_TYPE;
            names[i + 1] = columns[i];
        }
        types[columns.length + 1] = versionType;
        names[columns.length + 1] = V;
        return AutoCdcSpec.builder("snap", RowType.of(types, names))
                .metadataColumns(List.of(V))
                .keys("id")
                .sequenceBy(V);
    }

    static Object[] r(Object... values) {
        return values;
    }

    static TimestampData at(String time) {
        return TimestampData.fromLocalDateTime(LocalDateTime.parse("2024-01-01T" + time));
    }

    /** A6 example (a): periodic table snapshots, versions are timestamps, SCD type 2. */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void exampleA_tableSnapshotsScd2(boolean rocksDb) throws Exception {
        AutoCdcSpec spec = flow(new TimestampType(3), "v").scdType(ScdType.TYPE_2).build();
        try (SnapshotHarness h = new SnapshotHarness(spec, rocksDb)) {
            h.snapshot(at("00:00:00"), r(1L, "a1"), r(2L, "a2"));
            h.snapshot(at("12:00:00"), r(2L, "b2"), r(3L, "a3"));
            assertThat(h.table())
                    .containsExactlyInAnyOrder(
                            "(1,a1,2024-01-01T00:00,2024-01-01T12:00)",
                            "(2,a2,2024-01-01T00:00,2024-01-01T12:00)",
                            "(2,b2,2024-01-01T12:00,null)",
                            "(3,a3,2024-01-01T12:00,null)");
        }
    }

    /** A6 example (a) as SCD type 1: the target is the latest snapshot. */
    @Test
    void exampleA_tableSnapshotsScd1() throws Exception {
        AutoCdcSpec spec = flow(new TimestampType(3), "v").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, false)) {
            h.snapshot(at("00:00:00"), r(1L, "a1"), r(2L, "a2"));
            h.snapshot(at("12:00:00"), r(2L, "b2"), r(3L, "a3"));
            assertThat(h.table()).containsExactlyInAnyOrder("(2,b2)", "(3,a3)");
        }
    }

    /**
     * A6 example (b): versioned snapshots, SCD type 2 with TRACK HISTORY ON (TrackingColumn): a
     * change of the untracked column only updates the open version in place (key 4).
     */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void exampleB_trackHistory(boolean rocksDb) throws Exception {
        AutoCdcSpec spec =
                flow(new BigIntType(), "TrackingColumn", "NonTrackingColumn")
                        .scdType(ScdType.TYPE_2)
                        .trackHistory(ColumnSelection.include(List.of("TrackingColumn")))
                        .build();
        try (SnapshotHarness h = new SnapshotHarness(spec, rocksDb)) {
            h.snapshot(1L, r(1L, "a1", "b1"), r(2L, "a2", "b2"), r(4L, "a4", "b4"));
            h.snapshot(2L, r(2L, "a2_new", "b2"), r(3L, "a3", "b3"), r(4L, "a4", "b4_new"));
            assertThat(h.table())
                    .containsExactlyInAnyOrder(
                            "(1,a1,b1,1,2)",
                            "(2,a2,b2,1,2)",
                            "(2,a2_new,b2,2,null)",
                            "(3,a3,b3,2,null)",
                            "(4,a4,b4_new,1,null)");
        }
    }

    /** A6 example (c): snapshot files 1 and 2, SCD type 2. */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void exampleC_snapshotFilesScd2(boolean rocksDb) throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").scdType(ScdType.TYPE_2).build();
        try (SnapshotHarness h = new SnapshotHarness(spec, rocksDb)) {
            exampleC(h);
            assertThat(h.table()).containsExactlyInAnyOrder(EXAMPLE_C_SCD2);
        }
    }

    static final String[] EXAMPLE_C_SCD2 = {
        "(1,Oaxaca,1,2)",
        "(2,Monterrey,1,2)",
        "(2,Carmel,2,null)",
        "(3,Tijuana,1,2)",
        "(3,Los Angeles,2,null)",
        "(4,Death Valley,2,null)"
    };

    static void exampleC(SnapshotHarness h) throws Exception {
        h.snapshot(1L, r(1L, "Oaxaca"), r(2L, "Monterrey"), r(3L, "Tijuana"));
        h.snapshot(2L, r(2L, "Carmel"), r(3L, "Los Angeles"), r(4L, "Death Valley"));
    }

    /**
     * A6 example (c) as SCD type 1; the target's changes (its change feed) hold only changed rows:
     * a third snapshot that changes one row emits one update, an identical fourth nothing.
     */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void exampleC_scd1EmitsOnlyChangedRows(boolean rocksDb) throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, rocksDb)) {
            h.snapshot(1L, r(1L, "Oaxaca"), r(2L, "Monterrey"), r(3L, "Tijuana"));
            assertThat(h.takeChanges())
                    .containsExactly("+I(1,Oaxaca,1)", "+I(2,Monterrey,1)", "+I(3,Tijuana,1)");
            h.apply.take();
            h.snapshot(2L, r(2L, "Carmel"), r(3L, "Los Angeles"), r(4L, "Death Valley"));
            assertThat(h.apply.take())
                    .containsExactly(
                            "-U(2,Monterrey)",
                            "+U(2,Carmel)",
                            "-U(3,Tijuana)",
                            "+U(3,Los Angeles)",
                            "+I(4,Death Valley)",
                            "-D(1,Oaxaca)");
            assertThat(h.takeChanges())
                    .containsExactly(
                            "+U(2,Carmel,2)",
                            "+U(3,Los Angeles,2)",
                            "+I(4,Death Valley,2)",
                            "-D(1,null,2)");
            h.snapshot(3L, r(2L, "Carmel"), r(3L, "Los Angeles"), r(4L, "Furnace Creek"));
            assertThat(h.takeChanges()).containsExactly("+U(4,Furnace Creek,3)");
            assertThat(h.apply.take()).containsExactly("-U(4,Death Valley)", "+U(4,Furnace Creek)");
            h.snapshot(4L, r(4L, "Furnace Creek"), r(2L, "Carmel"), r(3L, "Los Angeles"));
            assertThat(h.takeChanges()).isEmpty();
            assertThat(h.apply.take()).isEmpty();
            assertThat(h.table())
                    .containsExactlyInAnyOrder(
                            "(2,Carmel)", "(3,Los Angeles)", "(4,Furnace Creek)");
        }
    }

    /** The examples (a), (b), (c) of docs/semantics.md A6, as written there (SCD type 2). */
    @Test
    void docsExamples() throws Exception {
        AutoCdcSpec a = flow(new TimestampType(3), "color").scdType(ScdType.TYPE_2).build();
        try (SnapshotHarness h = new SnapshotHarness(a, true)) {
            h.snapshot(march("08:00:00"), r(10L, "red"), r(20L, "blue"));
            h.snapshot(march("20:00:00"), r(20L, "green"), r(30L, "black"));
            assertThat(h.table())
                    .containsExactlyInAnyOrder(
                            "(10,red,2025-03-01T08:00,2025-03-01T20:00)",
                            "(20,blue,2025-03-01T08:00,2025-03-01T20:00)",
                            "(20,green,2025-03-01T20:00,null)",
                            "(30,black,2025-03-01T20:00,null)");
        }
        AutoCdcSpec b =
                flow(new BigIntType(), "color", "size")
                        .scdType(ScdType.TYPE_2)
                        .trackHistory(ColumnSelection.include(List.of("color")))
                        .build();
        try (SnapshotHarness h = new SnapshotHarness(b, true)) {
            h.snapshot(1L, r(1L, "red", "S"), r(2L, "blue", "M"), r(4L, "gray", "L"));
            h.snapshot(2L, r(2L, "teal", "M"), r(3L, "pink", "S"), r(4L, "gray", "XL"));
            assertThat(h.table())
                    .containsExactlyInAnyOrder(
                            "(1,red,S,1,2)",
                            "(2,blue,M,1,2)",
                            "(2,teal,M,2,null)",
                            "(3,pink,S,2,null)",
                            "(4,gray,XL,1,null)");
        }
        AutoCdcSpec c = flow(new BigIntType(), "city").scdType(ScdType.TYPE_2).build();
        try (SnapshotHarness h = new SnapshotHarness(c, true)) {
            h.snapshot(1L, r(1L, "Lyon"), r(2L, "Porto"), r(3L, "Graz"));
            h.snapshot(2L, r(2L, "Braga"), r(3L, "Linz"), r(4L, "Turku"));
            assertThat(h.table())
                    .containsExactlyInAnyOrder(
                            "(1,Lyon,1,2)",
                            "(2,Porto,1,2)",
                            "(2,Braga,2,null)",
                            "(3,Graz,1,2)",
                            "(3,Linz,2,null)",
                            "(4,Turku,2,null)");
        }
    }

    static TimestampData march(String time) {
        return TimestampData.fromLocalDateTime(LocalDateTime.parse("2025-03-01T" + time));
    }

    /**
     * A checkpoint between the two snapshots of example (c), and one inside the second: the
     * restored operators give the same table.
     */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void restoreBetweenAndInsideSnapshotsGivesTheSameTable(boolean rocksDb) throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").scdType(ScdType.TYPE_2).build();
        try (SnapshotHarness h = new SnapshotHarness(spec, rocksDb)) {
            h.snapshot(1L, r(1L, "Oaxaca"), r(2L, "Monterrey"), r(3L, "Tijuana"));
            h.restart();
            h.row(2L, 2L, "Carmel").row(2L, 3L, "Los Angeles");
            h.restart();
            h.row(2L, 4L, "Death Valley").end(2L);
            assertThat(h.table()).containsExactlyInAnyOrder(EXAMPLE_C_SCD2);
        }
    }

    /** A snapshot older than (or as old as) the applied one is skipped whole and counted. */
    @ParameterizedTest(name = "rocksDb={0}")
    @ValueSource(booleans = {false, true})
    void olderSnapshotIsSkippedAndCounted(boolean rocksDb) throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, rocksDb)) {
            h.snapshot(1L, r(1L, "Oaxaca"), r(2L, "Monterrey"));
            h.snapshot(3L, r(2L, "Carmel"), r(3L, "Los Angeles"));
            h.takeChanges();
            h.snapshot(2L, r(1L, "Oaxaca"), r(9L, "late"));
            h.snapshot(3L, r(2L, "again"));
            assertThat(h.takeChanges()).isEmpty();
            assertThat(h.skippedSnapshots()).isEqualTo(2);
            assertThat(h.table()).containsExactlyInAnyOrder("(2,Carmel)", "(3,Los Angeles)");
            h.restart();
            h.snapshot(2L, r(1L, "Oaxaca"));
            assertThat(h.skippedSnapshots()).isEqualTo(1);
            h.snapshot(4L, r(3L, "Los Angeles"));
            assertThat(h.table()).containsExactly("(3,Los Angeles)");
        }
    }

    /** An empty snapshot after the first deletes every row (only the first may not be empty). */
    @Test
    void emptyLaterSnapshotDeletesEveryRow() throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").scdType(ScdType.TYPE_2).build();
        try (SnapshotHarness h = new SnapshotHarness(spec, false)) {
            h.snapshot(1L, r(1L, "Oaxaca"));
            h.snapshot(2L);
            h.snapshot(3L, r(1L, "Oaxaca"));
            assertThat(h.table()).containsExactlyInAnyOrder("(1,Oaxaca,1,2)", "(1,Oaxaca,3,null)");
        }
    }

    @Test
    void keyTwiceInOneSnapshotIsDuplicateKeyViolation() throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, false)) {
            h.row(1L, 1L, "Oaxaca");
            assertThatThrownBy(() -> h.row(1L, 1L, "Puebla"))
                    .isInstanceOf(AutoCdcException.class)
                    .hasMessage(
                            "DUPLICATE_KEY_VIOLATION: flow 'snap': key (id=1) appears more than"
                                    + " once in snapshot 1; a snapshot holds one row per key (KEYS"
                                    + " [id])");
        }
    }

    @Test
    void emptyFirstSnapshotFails() throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, false)) {
            assertThatThrownBy(() -> h.end(1L))
                    .isInstanceOf(AutoCdcException.class)
                    .hasMessageStartingWith(
                            "FIRST_SNAPSHOT_EMPTY: flow 'snap': the first snapshot (1) has no rows");
        }
    }

    @Test
    void nullVersionFails() throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, false)) {
            assertThatThrownBy(() -> h.row(null, 1L, "Oaxaca"))
                    .isInstanceOf(AutoCdcException.class)
                    .hasMessageStartingWith(
                            "NULL_SNAPSHOT_VERSION: flow 'snap': a snapshot row has no version");
        }
    }

    @Test
    void nullKeyFails() throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, false)) {
            assertThatThrownBy(() -> h.row(1L, null, "Oaxaca"))
                    .isInstanceOf(AutoCdcException.class)
                    .hasMessage(
                            "MALFORMED_SNAPSHOT_ROW: flow 'snap': a row of snapshot 1 has a null"
                                    + " KEYS column 'id'");
        }
    }

    @Test
    void unsortableVersionsFail() throws Exception {
        assertThatThrownBy(
                        () -> new SnapshotVersions(flow(VarCharType.STRING_TYPE, "city").build()))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "SNAPSHOT_VERSION_NOT_SORTABLE: flow 'snap': snapshot version column"
                                + " '_snapshot_version' is STRING; use an integer, DATE or"
                                + " TIMESTAMP column");
        AutoCdcSpec micros = flow(new TimestampType(6), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(micros, false)) {
            TimestampData v = TimestampData.fromEpochMillis(1000L, 5000);
            assertThatThrownBy(() -> h.row(v, 1L, "Oaxaca"))
                    .isInstanceOf(AutoCdcException.class)
                    .hasMessageStartingWith(
                            "SNAPSHOT_VERSION_NOT_SORTABLE: flow 'snap': snapshot version"
                                    + " 1970-01-01T00:00:01.000005 has digits below the"
                                    + " millisecond");
        }
    }

    /**
     * A6: a source whose versions are integers (snapshot files, Iceberg sequence numbers) takes
     * only a BIGINT version column; a DATE one, sortable elsewhere, is refused naming the source.
     */
    @Test
    void integerVersionSourcesNeedABigintVersionColumn() {
        assertThat(
                        SnapshotVersions.requireBigint(
                                        flow(new BigIntType(), "city").build(), "versions are ints")
                                .index())
                .isEqualTo(2);
        assertThatThrownBy(
                        () ->
                                SnapshotVersions.requireBigint(
                                        flow(new DateType(), "city").build(),
                                        "table versions are sequence numbers"))
                .isInstanceOf(AutoCdcException.class)
                .hasMessage(
                        "SNAPSHOT_VERSION_NOT_SORTABLE: flow 'snap': table versions are sequence"
                                + " numbers; the version column '_snapshot_version' must be"
                                + " BIGINT, got DATE");
    }

    /** Names snapshot v as the file {@code /exports/snapshot_<v>.csv}, as the file source does. */
    static final SnapshotOrigin FILES = v -> "file /exports/snapshot_" + v + ".csv";

    /** With an origin (the snapshot files), every A6 error and skipped snapshot names the file. */
    @Test
    void errorsAndSkippedSnapshotsNameTheFile() throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, false, FILES)) {
            assertThatThrownBy(() -> h.end(1L))
                    .isInstanceOf(AutoCdcException.class)
                    .hasMessage(
                            "FIRST_SNAPSHOT_EMPTY: flow 'snap': the first snapshot (1, file"
                                    + " /exports/snapshot_1.csv) has no rows; an empty first"
                                    + " snapshot is refused (a wrong path or an empty export?)");
        }
        try (SnapshotHarness h = new SnapshotHarness(spec, false, FILES)) {
            assertThatThrownBy(() -> h.row(2L, null, "Oaxaca"))
                    .isInstanceOf(AutoCdcException.class)
                    .hasMessage(
                            "MALFORMED_SNAPSHOT_ROW: flow 'snap': a row of snapshot 2 (file"
                                    + " /exports/snapshot_2.csv) has a null KEYS column 'id'");
        }
        try (SnapshotHarness h = new SnapshotHarness(spec, false, FILES)) {
            h.row(3L, 1L, "Oaxaca");
            assertThatThrownBy(() -> h.row(3L, 1L, "Puebla"))
                    .isInstanceOf(AutoCdcException.class)
                    .hasMessage(
                            "DUPLICATE_KEY_VIOLATION: flow 'snap': key (id=1) appears more than"
                                    + " once in snapshot 3 (file /exports/snapshot_3.csv); a"
                                    + " snapshot holds one row per key (KEYS [id])");
        }
        try (SnapshotHarness h = new SnapshotHarness(spec, false, FILES)) {
            h.snapshot(5L, r(1L, "Oaxaca"));
            assertThat(h.skippedSnapshotNames()).isEmpty();
            h.snapshot(4L, r(1L, "late"));
            h.snapshot(5L, r(1L, "again"));
            assertThat(h.skippedSnapshots()).isEqualTo(2);
            assertThat(h.skippedSnapshotNames())
                    .isEqualTo(
                            "snapshot 4 (file /exports/snapshot_4.csv); snapshot 5 (file"
                                    + " /exports/snapshot_5.csv)");
            assertThat(h.table()).containsExactly("(1,Oaxaca)");
        }
    }

    /** The gauge names at most {@link SnapshotSequencer#SKIPPED_NAMED} snapshots, then counts. */
    @Test
    void skippedSnapshotNamesAreCapped() throws Exception {
        AutoCdcSpec spec = flow(new BigIntType(), "city").build();
        try (SnapshotHarness h = new SnapshotHarness(spec, false)) {
            h.snapshot(1000L, r(1L, "Oaxaca"));
            for (long v = 1; v <= SnapshotSequencer.SKIPPED_NAMED + 2; v++) {
                h.end(v);
            }
            assertThat(h.skippedSnapshotNames())
                    .startsWith("snapshot 1; snapshot 2; ")
                    .endsWith("; snapshot 100 ... and 2 more");
        }
    }
}
