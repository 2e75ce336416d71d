package dev.changeflow.sources.snapshots;

import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.SnapshotVersions;
import dev.changeflow.sources.cdf.CdfException;
import dev.changeflow.sources.cdf.CdfTestTables;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.api.connector.source.mocks.MockSplitEnumeratorContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.metrics.groups.SourceReaderMetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.SimpleUserCodeClassLoader;
import org.apache.flink.util.UserCodeClassLoader;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Table;
import org.apache.iceberg.flink.TableLoader;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static dev.changeflow.sources.cdf.CdfTestTables.row;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Iceberg-table snapshot source (semantics.md A6, "Iceberg table versions") over a real
 * HadoopCatalog table: versions in order with v2 position and equality deletes applied, replace
 * snapshots skipped, {@code latest}, restore inside and between versions, and the checks of the
 * table and the declared columns.
 */
class IcebergSnapshotsTest {
    static final String V = SnapshotVersions.VERSION_COLUMN;

    @TempDir Path warehouse;

    private CdfTestTables tables;
    private Table table;

    @BeforeEach
    void setUp() {
        tables = new CdfTestTables(warehouse);
        table = tables.create("t", 2);
    }

    static AutoCdcSpec spec(RowType columns) {
        List<RowType.RowField> fields = new ArrayList<>(columns.getFields());
        fields.add(new RowType.RowField(V, new BigIntType()));
        return AutoCdcSpec.builder("people", new RowType(fields))
                .metadataColumns(List.of(V))
                .keys("id")
                .sequenceBy(V)
                .build();
    }

    private AutoCdcSpec spec() {
        return spec(IcebergSnapshots.columns(table, null, "people"));
    }

    private TableLoader loader() {
        return TableLoader.fromHadoopTable(
                table.location(), new org.apache.hadoop.conf.Configuration());
    }

    /**
     * v1: 1, 2, 3 in one file; v2: 1 updated by an equality delete and a new file; v3: a compaction
     * (replace, skipped); v4: 3 removed by a position delete, 4 added.
     *
     * @return the sequence numbers of v1, v2, v4
     */
    private long[] commitFourVersions() {
        DataFile first =
                tables.dataFile(table, row(1L, "a", "eu"), row(2L, "b", "us"), row(3L, "c", "eu"));
        table.newAppend().appendFile(first).commit();
        long v1 = table.currentSnapshot().sequenceNumber();
        table.newRowDelta()
                .addDeletes(
                        tables.equalityDeletes(
                                table, table.schema().select("id"), row(1L, null, null)))
                .addRows(tables.dataFile(table, row(1L, "a2", "eu")))
                .commit();
        long v2 = table.currentSnapshot().sequenceNumber();
        DataFile copy = tables.dataFile(table, row(2L, "b", "us"), row(3L, "c", "eu"));
        table.newRewrite()
                .validateFromSnapshot(table.currentSnapshot().snapshotId())
                .rewriteFiles(Set.of(first), Set.of(copy))
                .commit();
        table.newRowDelta()
                .addDeletes(tables.positionDeletes(table, copy, 1))
                .addRows(tables.dataFile(table, row(4L, "d", "us")))
                .commit();
        long v4 = table.currentSnapshot().sequenceNumber();
        return new long[] {v1, v2, v4};
    }

    /** Rows as {@code v:id,name,region}, each version's rows sorted, then {@code end v}. */
    static List<String> render(List<RowData> out) {
        List<String> result = new ArrayList<>();
        List<String> version = new ArrayList<>();
        for (RowData r : out) {
            long v = r.getLong(3);
            if (SnapshotVersions.isEnd(r)) {
                version.sort(null);
                result.addAll(version);
                version.clear();
                result.add("end " + v);
            } else {
                version.add(v + ":" + r.getLong(0) + "," + r.getString(1) + "," + r.getString(2));
            }
        }
        result.addAll(version);
        return result;
    }

    @Test
    void versionsInOrderWithDeletesApplied() throws Exception {
        long[] v = commitFourVersions();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        List<RowData> out = new ArrayList<>();
        try (CloseableIterator<RowData> it =
                IcebergSnapshots.stream(env, loader(), spec(), IcebergSnapshots.Versions.ALL, null)
                        .executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        assertThat(render(out))
                .containsExactly(
                        v[0] + ":1,a,eu",
                        v[0] + ":2,b,us",
                        v[0] + ":3,c,eu",
                        "end " + v[0],
                        v[1] + ":1,a2,eu",
                        v[1] + ":2,b,us",
                        v[1] + ":3,c,eu",
                        "end " + v[1],
                        v[2] + ":1,a2,eu",
                        v[2] + ":2,b,us",
                        v[2] + ":4,d,us",
                        "end " + v[2]);
    }

    @Test
    void latestReadsOnlyTheCurrentVersion() throws Exception {
        long[] v = commitFourVersions();
        assertThat(
                        IcebergSnapshots.versionsAfter(
                                table, IcebergSnapshots.Versions.LATEST, Long.MIN_VALUE))
                .extracting(s -> s.version)
                .containsExactly(v[2]);
        assertThat(IcebergSnapshots.versionsAfter(table, IcebergSnapshots.Versions.LATEST, v[2]))
                .isEmpty();
        assertThat(IcebergSnapshots.versionsAfter(table, IcebergSnapshots.Versions.ALL, v[0]))
                .extracting(s -> s.version)
                .containsExactly(v[1], v[2]);
        assertThat(IcebergSnapshots.newestVersion(table)).isEqualTo(v[2]);
    }

    /** A reader restored inside a version skips what it emitted: no row twice, none lost. */
    @Test
    void restoreInsideAVersion() throws Exception {
        long[] v = commitFourVersions();
        AutoCdcSpec spec = spec();
        SnapshotVersions versions = new SnapshotVersions(spec);
        TableVersionSplit split = new TableVersionSplit(snapshotIdOf(v[2]), v[2], 0);

        List<RowData> whole = new ArrayList<>();
        TableVersionReader uninterrupted = reader(spec, versions);
        uninterrupted.addSplits(List.of(split));
        uninterrupted.notifyNoMoreSplits();
        drain(uninterrupted, whole, Integer.MAX_VALUE);

        List<RowData> before = new ArrayList<>();
        TableVersionReader first = reader(spec, versions);
        first.addSplits(List.of(split));
        drain(first, before, 2);
        List<TableVersionSplit> state = first.snapshotState(1);
        first.close();
        assertThat(state).hasSize(1);
        assertThat(state.get(0).emitted).isEqualTo(2);
        TableVersionSplit restored =
                TableVersionSplit.Serializer.INSTANCE.deserialize(
                        1, TableVersionSplit.Serializer.INSTANCE.serialize(state.get(0)));

        List<RowData> after = new ArrayList<>();
        TableVersionReader second = reader(spec, versions);
        second.addSplits(List.of(restored));
        second.notifyNoMoreSplits();
        drain(second, after, Integer.MAX_VALUE);

        List<RowData> joined = new ArrayList<>(before);
        joined.addAll(after);
        assertThat(after).hasSize(2); // one row and the end marker
        assertThat(rawRender(joined)).containsExactlyElementsOf(rawRender(whole));
        assertThat(render(joined))
                .containsExactly(
                        v[2] + ":1,a2,eu", v[2] + ":2,b,us", v[2] + ":4,d,us", "end " + v[2]);
    }

    /** An enumerator restored between versions hands out the next version, then no more. */
    @Test
    void restoreBetweenVersions() throws Exception {
        long[] v = commitFourVersions();
        try (MockSplitEnumeratorContext<TableVersionSplit> context =
                new MockSplitEnumeratorContext<>(1)) {
            context.registerReader(new ReaderInfo(0, "localhost"));
            TableVersionEnumerator enumerator =
                    new TableVersionEnumerator(
                            context, loader(), IcebergSnapshots.Versions.ALL, 0, null);
            enumerator.start();
            enumerator.handleSplitRequest(0, "localhost");
            assertThat(assigned(context)).containsExactly(v[0]);
            byte[] state =
                    new TableVersionEnumState.Serializer().serialize(enumerator.snapshotState(1));
            enumerator.close();

            table.newAppend().appendFile(tables.dataFile(table, row(5L, "e", "eu"))).commit();
            long v5 = table.currentSnapshot().sequenceNumber();
            try (MockSplitEnumeratorContext<TableVersionSplit> again =
                    new MockSplitEnumeratorContext<>(1)) {
                again.registerReader(new ReaderInfo(0, "localhost"));
                TableVersionEnumerator restored =
                        new TableVersionEnumerator(
                                again,
                                loader(),
                                IcebergSnapshots.Versions.ALL,
                                0,
                                new TableVersionEnumState.Serializer().deserialize(1, state));
                restored.start();
                for (int i = 0; i < 4; i++) {
                    restored.handleSplitRequest(0, "localhost");
                }
                assertThat(assigned(again)).containsExactly(v[1], v[2], v5);
                assertThat(again.hasNoMoreSplits(0)).isTrue();
                restored.close();
            }
        }
    }

    /** Continuous: a version committed while the source runs is found at the next look. */
    @Test
    void continuousFindsNewVersions() throws Throwable {
        long[] v = commitFourVersions();
        try (MockSplitEnumeratorContext<TableVersionSplit> context =
                new MockSplitEnumeratorContext<>(1)) {
            context.registerReader(new ReaderInfo(0, "localhost"));
            TableVersionEnumerator enumerator =
                    new TableVersionEnumerator(
                            context,
                            loader(),
                            IcebergSnapshots.Versions.LATEST,
                            1000,
                            new TableVersionEnumState(v[2], List.of()));
            enumerator.start();
            context.runPeriodicCallable(0);
            enumerator.handleSplitRequest(0, "localhost");
            assertThat(assigned(context)).isEmpty();
            assertThat(context.hasNoMoreSplits(0)).isFalse();
            table.newAppend().appendFile(tables.dataFile(table, row(5L, "e", "eu"))).commit();
            table.newAppend().appendFile(tables.dataFile(table, row(6L, "f", "eu"))).commit();
            context.runPeriodicCallable(0);
            assertThat(assigned(context)).containsExactly(table.currentSnapshot().sequenceNumber());
            enumerator.close();
        }
    }

    @Test
    void formatV1TableIsRefused() {
        Table v1 = tables.create("old", 1);
        assertThatThrownBy(() -> IcebergSnapshots.check(v1, "people"))
                .isInstanceOf(CdfException.class)
                .hasMessageContaining("flow 'people'")
                .hasMessageContaining("format version 1");
    }

    @Test
    void declaredColumnsMustBeTableColumnsOfTheSameType() {
        RowType declared =
                RowType.of(
                        new org.apache.flink.table.types.logical.LogicalType[] {
                            new BigIntType(false), VarCharType.STRING_TYPE
                        },
                        new String[] {"id", "region"});
        assertThat(IcebergSnapshots.columns(table, declared, "people").getFieldNames())
                .containsExactly("id", "region");
        RowType unknown =
                RowType.of(
                        new org.apache.flink.table.types.logical.LogicalType[] {
                            new BigIntType(), VarCharType.STRING_TYPE
                        },
                        new String[] {"id", "city"});
        assertThatThrownBy(() -> IcebergSnapshots.columns(table, unknown, "people"))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("UNKNOWN_COLUMN")
                .hasMessageContaining("'city'")
                .hasMessageContaining("flow 'people'");
        RowType wrongType =
                RowType.of(
                        new org.apache.flink.table.types.logical.LogicalType[] {new IntType()},
                        new String[] {"id"});
        assertThatThrownBy(() -> IcebergSnapshots.columns(table, wrongType, "people"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("declared column 'id' is INT")
                .hasMessageContaining("BIGINT");
    }

    @Test
    void reservedVersionColumnInTheTableIsRefused() {
        Table t =
                tables.create(
                        "reserved",
                        new org.apache.iceberg.Schema(
                                org.apache.iceberg.types.Types.NestedField.required(
                                        1, "id", org.apache.iceberg.types.Types.LongType.get()),
                                org.apache.iceberg.types.Types.NestedField.optional(
                                        2, V, org.apache.iceberg.types.Types.LongType.get())),
                        PartitionSpec.unpartitioned(),
                        2,
                        Map.of());
        assertThatThrownBy(() -> IcebergSnapshots.columns(t, null, "people"))
                .isInstanceOf(AutoCdcException.class)
                .hasMessageContaining("RESERVED_COLUMN_NAME");
    }

    private long snapshotIdOf(long version) {
        for (org.apache.iceberg.Snapshot s : table.snapshots()) {
            if (s.sequenceNumber() == version) {
                return s.snapshotId();
            }
        }
        throw new IllegalArgumentException("no version " + version);
    }

    private static List<Long> assigned(MockSplitEnumeratorContext<TableVersionSplit> context) {
        List<Long> versions = new ArrayList<>();
        for (SplitsAssignment<TableVersionSplit> a : context.getSplitsAssignmentSequence()) {
            a.assignment().values().forEach(l -> l.forEach(s -> versions.add(s.version)));
        }
        return versions;
    }

    private static List<String> rawRender(List<RowData> rows) {
        List<String> out = new ArrayList<>();
        for (RowData r : rows) {
            out.add(r.getRowKind() + " " + (r.isNullAt(0) ? "null" : String.valueOf(r.getLong(0))));
        }
        return out;
    }

    private TableVersionReader reader(AutoCdcSpec spec, SnapshotVersions versions) {
        TableVersionReader reader =
                new TableVersionReader(new Context(), loader(), spec.sourceType(), versions);
        reader.start();
        return reader;
    }

    /** Polls {@code reader} until {@code limit} records or the end of its splits. */
    private static void drain(TableVersionReader reader, List<RowData> out, int limit)
            throws Exception {
        Output output = new Output(out);
        while (out.size() < limit) {
            InputStatus status = reader.pollNext(output);
            if (status != InputStatus.MORE_AVAILABLE) {
                return;
            }
        }
    }

    /** A reader context of one subtask (split requests are not needed: splits are added). */
    private static final class Context implements SourceReaderContext {
        @Override
        public SourceReaderMetricGroup metricGroup() {
            return UnregisteredMetricsGroup.createSourceReaderMetricGroup();
        }

        @Override
        public Configuration getConfiguration() {
            return new Configuration();
        }

        @Override
        public String getLocalHostName() {
            return "localhost";
        }

        @Override
        public int getIndexOfSubtask() {
            return 0;
        }

        @Override
        public void sendSplitRequest() {}

        @Override
        public void sendSourceEventToCoordinator(SourceEvent sourceEvent) {}

        @Override
        public UserCodeClassLoader getUserCodeClassLoader() {
            return SimpleUserCodeClassLoader.create(getClass().getClassLoader());
        }
    }

    /** Collects the records a reader emits. */
    private static final class Output implements ReaderOutput<RowData> {
        private final List<RowData> rows;

        Output(List<RowData> rows) {
            this.rows = rows;
        }

        @Override
        public void collect(RowData record) {
            rows.add(record);
        }

        @Override
        public void collect(RowData record, long timestamp) {
            rows.add(record);
        }

        @Override
        public void emitWatermark(Watermark watermark) {}

        @Override
        public void markIdle() {}

        @Override
        public void markActive() {}

        @Override
        public SourceOutput<RowData> createOutputForSplit(String splitId) {
            return this;
        }

        @Override
        public void releaseOutputForSplit(String splitId) {}
    }
}
