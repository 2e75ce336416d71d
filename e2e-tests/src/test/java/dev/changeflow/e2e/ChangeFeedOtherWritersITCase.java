package dev.changeflow.e2e;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.OneBatchPerCheckpointSource;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTableSink;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sinks.iceberg.TableRows;
import dev.changeflow.sources.cdf.TableChanges;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.deletes.PositionDeleteWriter;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Differential test of the change feed (semantics.md F2) on a changeflow table that other writers
 * also commit to, interleaved with changeflow's own commits: Iceberg's Flink sink in upsert mode
 * (key-only equality deletes), a copy-on-write rewrite through Iceberg's Java API ({@code
 * newOverwrite}: a data file replaced by a copy with one row changed) and a row-level delete
 * through Iceberg's Java API ({@code newRowDelta} with a position-delete file).
 *
 * <p>One job runs a script of steps, one completed checkpoint per step ({@link
 * OneBatchPerCheckpointSource}); a step starts only once every earlier step is committed (the
 * script function awaits the table's snapshot count), so each step is exactly one version, in
 * script order. Changeflow's steps go through {@link StreamingTableSink#write} as the AUTO CDC
 * operator emits them: {@code -U}/{@code -D} carry the row changeflow's state holds — the row it
 * last wrote, blind to the other writers — so after a foreign commit the rows carried by its
 * equality deletes are stale (a key another writer updated, deleted or rewrote). The feed must
 * still give the true pre-images: for every version the exact expected change rows, and state(v−1)
 * with the changes of v applied equals state(v), both read by Iceberg's scan (the oracle of {@link
 * ChangeFeedDifferentialITCase}); the full-range read equals the per-version reads.
 */
class ChangeFeedOtherWritersITCase {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    @TempDir static Path tmp;

    private static final TableIdentifier TABLE = TableIdentifier.of("public", "mixed_writers");
    private static final String CHANGEFLOW_UID = "changeflow-sink";

    private static final RowType ROW_TYPE =
            RowType.of(
                    new LogicalType[] {new IntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
                    new String[] {"id", "v"});

    private static final OutputTag<RowData> UPSERTS =
            new OutputTag<>("iceberg-upserts", InternalTypeInfo.of(ROW_TYPE));

    /** Who commits a step. */
    private enum Writer {
        /** changeflow's changelog sink: {@code +I -U +U -D}, deletes carrying the state's row. */
        CHANGEFLOW,
        /** Iceberg's Flink sink in upsert mode: {@code +I}/{@code +U} rows, {@code -D} by key. */
        ICEBERG_UPSERT,
        /** Java API {@code newOverwrite}: the data file holding id 4 → (4, d4), (5, e). */
        COPY_ON_WRITE,
        /** Java API {@code newRowDelta}: a position delete of (5, e) in the rewritten file. */
        POSITION_DELETE
    }

    /** One step: a writer and its rows as {@code <kind> <id> <v>}, kind one of +I -U +U -D. */
    private static final class Step {
        final Writer writer;
        final List<String> rows;

        Step(Writer writer, String... rows) {
            this.writer = writer;
            this.rows = List.of(rows);
        }
    }

    /** Step i is version i + 1. */
    private static final List<Step> SCRIPT =
            List.of(
                    new Step(Writer.CHANGEFLOW, "+I 1 a", "+I 2 b", "+I 3 c", "+I 4 d", "+I 5 e"),
                    new Step(Writer.ICEBERG_UPSERT, "+U 2 b2", "-D 3 c"),
                    // changeflow's state still holds (2, b) and (3, c)
                    new Step(Writer.CHANGEFLOW, "-U 2 b", "+U 2 b3", "-U 1 a", "+U 1 a3"),
                    new Step(Writer.COPY_ON_WRITE),
                    new Step(Writer.CHANGEFLOW, "+I 6 f"),
                    // parent is changeflow's own commit, but its state holds (4, d) and (3, c)
                    new Step(Writer.CHANGEFLOW, "-D 4 d", "-U 3 c", "+U 3 c6"),
                    new Step(Writer.POSITION_DELETE),
                    new Step(Writer.CHANGEFLOW, "-U 5 e", "+U 5 e8", "-U 6 f", "+U 6 f8"),
                    new Step(Writer.ICEBERG_UPSERT, "-D 6 f8", "+I 7 g"));

    /** The exact change rows per version: {@code <version> <type> (<id>, <v>)}. */
    private static final List<List<String>> EXPECTED =
            List.of(
                    List.of(
                            "1 insert (1, a)",
                            "1 insert (2, b)",
                            "1 insert (3, c)",
                            "1 insert (4, d)",
                            "1 insert (5, e)"),
                    List.of(
                            "2 update_preimage (2, b)",
                            "2 update_postimage (2, b2)",
                            "2 delete (3, c)"),
                    // the delete file carries (2, b): the pre-image is the row it deleted, (2, b2)
                    List.of(
                            "3 update_preimage (1, a)",
                            "3 update_postimage (1, a3)",
                            "3 update_preimage (2, b2)",
                            "3 update_postimage (2, b3)"),
                    // (5, e) is copied unchanged: no change
                    List.of("4 update_preimage (4, d)", "4 update_postimage (4, d4)"),
                    List.of("5 insert (6, f)"),
                    // the delete file carries (4, d) and (3, c); 3 no longer exists
                    List.of("6 insert (3, c6)", "6 delete (4, d4)"),
                    List.of("7 delete (5, e)"),
                    // the delete file carries (5, e), deleted by position in version 7
                    List.of(
                            "8 insert (5, e8)",
                            "8 update_preimage (6, f)",
                            "8 update_postimage (6, f8)"),
                    List.of("9 delete (6, f8)", "9 insert (7, g)"));

    @Test
    void everyVersionExactWithOtherWritersInterleaved() throws Exception {
        CatalogSettings settings = CatalogSettings.localHadoop(tmp.resolve("warehouse"));
        Catalog catalog = settings.open();
        StreamingTables.ensureTable(
                catalog,
                TABLE,
                ROW_TYPE,
                List.of("id"),
                StreamingTableOptions.builder().formatVersion(2).build());

        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "disable");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.enableCheckpointing(50);
        SingleOutputStreamOperator<RowData> changelog =
                env.fromSource(
                                new OneBatchPerCheckpointSource(SCRIPT.size()),
                                WatermarkStrategy.noWatermarks(),
                                "script steps")
                        .uid("script-steps")
                        .process(new RunStep(settings.loader()), InternalTypeInfo.of(ROW_TYPE))
                        .uid("run-step")
                        .name("run step");
        StreamingTableSink.write(
                changelog,
                settings.loader(),
                TABLE,
                List.of("id"),
                StreamingTableOptions.defaults(),
                CHANGEFLOW_UID);
        FlinkSink.forRowData(changelog.getSideOutput(UPSERTS))
                .tableLoader(TableLoader.fromCatalog(settings.loader(), TABLE))
                .equalityFieldColumns(List.of("id"))
                .upsert(true)
                .writeParallelism(1)
                .uidPrefix("iceberg-upsert")
                .append();
        env.execute("change feed with other writers");

        Table table = catalog.loadTable(TABLE);
        List<Snapshot> snapshots = new ArrayList<>();
        SnapshotUtil.currentAncestors(table).forEach(snapshots::add);
        Collections.reverse(snapshots);
        // Iceberg's committers may end the bounded job with an empty commit: not a step
        snapshots = new ArrayList<>(EndOfInputCommits.withoutTrailingEmpty(snapshots));
        assertThat(snapshots).hasSize(SCRIPT.size());
        List<String> writers = new ArrayList<>();
        List<String> expectedWriters = new ArrayList<>();
        for (int i = 0; i < SCRIPT.size(); i++) {
            Snapshot snapshot = snapshots.get(i);
            assertThat(snapshot.sequenceNumber()).isEqualTo(i + 1L);
            writers.add(snapshot.summary().getOrDefault(StreamingTables.CHANGELOG_WRITER, "-"));
            expectedWriters.add(SCRIPT.get(i).writer == Writer.CHANGEFLOW ? CHANGEFLOW_UID : "-");
        }
        assertThat(writers).as("changelog writer of each version").isEqualTo(expectedWriters);

        int columns = 2;
        Map<List<String>, Integer> before = new HashMap<>();
        List<List<String>> perVersion = new ArrayList<>();
        for (int i = 0; i < snapshots.size(); i++) {
            Snapshot snapshot = snapshots.get(i);
            long v = snapshot.sequenceNumber();
            String at = "version " + v + " (" + SCRIPT.get(i).writer + ")";
            List<List<String>> changes =
                    ChangeFeedDifferentialITCase.changes(
                            TableChanges.forTable(table)
                                    .startingVersion(v)
                                    .endingVersion(v)
                                    .build(),
                            columns);
            assertThat(render(changes)).as(at).isEqualTo(EXPECTED.get(i));
            Map<List<String>, Integer> after =
                    ChangeFeedDifferentialITCase.multiset(
                            TableRows.readSnapshot(table, snapshot.snapshotId()), columns);
            ChangeFeedDifferentialITCase.assertSameRows(
                    at + ": state(v-1) + changes(v) vs state(v)",
                    ChangeFeedDifferentialITCase.apply(before, changes, columns, at),
                    after);
            perVersion.addAll(changes);
            before = after;
        }
        assertThat(
                        ChangeFeedDifferentialITCase.changes(
                                TableChanges.forTable(table).startingVersion(1).build(), columns))
                .as("the full-range read equals the per-version reads")
                .isEqualTo(perVersion);
        assertThat(render(before.keySet()))
                .containsExactlyInAnyOrder("(1, a3)", "(2, b3)", "(3, c6)", "(5, e8)", "(7, g)");
    }

    /** {@code <version> <type> (<id>, <v>)} per change row. */
    private static List<String> render(List<List<String>> changes) {
        List<String> out = new ArrayList<>();
        for (List<String> c : changes) {
            out.add(c.get(3) + " " + c.get(2) + " (" + c.get(0) + ", " + c.get(1) + ")");
        }
        return out;
    }

    private static List<String> render(Iterable<List<String>> rows) {
        List<String> out = new ArrayList<>();
        rows.forEach(r -> out.add("(" + r.get(0) + ", " + r.get(1) + ")"));
        return out;
    }

    /**
     * Runs step i once every earlier step is committed (i snapshots): changeflow's rows to the main
     * output, upserts to {@link #UPSERTS}, Java API commits directly.
     */
    private static final class RunStep extends ProcessFunction<Long, RowData> {
        private static final long serialVersionUID = 1L;
        private final CatalogLoader catalogLoader;
        private transient Catalog catalog;
        private transient DataFile rewritten;

        RunStep(CatalogLoader catalogLoader) {
            this.catalogLoader = catalogLoader;
        }

        @Override
        public void open(OpenContext context) {
            catalog = catalogLoader.loadCatalog();
        }

        @Override
        public void processElement(Long index, Context ctx, Collector<RowData> out) {
            int i = index.intValue();
            Await.until(
                    "the commits of the " + i + " steps before step " + i,
                    Duration.ofSeconds(60),
                    () -> snapshotCount() == i,
                    () -> snapshotCount() + " snapshots");
            Step step = SCRIPT.get(i);
            switch (step.writer) {
                case CHANGEFLOW:
                    step.rows.forEach(r -> out.collect(row(r)));
                    break;
                case ICEBERG_UPSERT:
                    step.rows.forEach(r -> ctx.output(UPSERTS, row(r)));
                    break;
                case COPY_ON_WRITE:
                    copyOnWrite(catalog.loadTable(TABLE), i);
                    break;
                case POSITION_DELETE:
                    positionDelete(catalog.loadTable(TABLE), i);
                    break;
                default:
                    throw new IllegalStateException(step.writer.name());
            }
        }

        private int snapshotCount() {
            Table table = catalog.loadTable(TABLE);
            int n = 0;
            for (Snapshot ignored : SnapshotUtil.currentAncestors(table)) {
                n++;
            }
            return n;
        }

        /** Replaces the data file holding id 4 (live: (4, d), (5, e)) by (4, d4), (5, e). */
        private void copyOnWrite(Table table, int step) {
            List<DataFile> holding4 = new ArrayList<>();
            try (CloseableIterable<FileScanTask> tasks =
                    table.newScan().filter(Expressions.equal("id", 4)).planFiles()) {
                tasks.forEach(t -> holding4.add(t.file()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (holding4.size() != 1) {
                throw new IllegalStateException("expected one file holding id 4: " + holding4);
            }
            GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table).build();
            DataWriter<Record> writer =
                    factory.newDataWriter(
                            files(table, step, FileFormat.PARQUET)
                                    .newOutputFile(table.spec(), null),
                            table.spec(),
                            null);
            try (writer) {
                writer.write(record(table, 4, "d4"));
                writer.write(record(table, 5, "e"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            rewritten = writer.toDataFile();
            table.newOverwrite().deleteFile(holding4.get(0)).addFile(rewritten).commit();
        }

        /** Deletes (5, e), position 1 of the rewritten file. */
        private void positionDelete(Table table, int step) {
            GenericFileWriterFactory factory = new GenericFileWriterFactory.Builder(table).build();
            PositionDeleteWriter<Record> writer =
                    factory.newPositionDeleteWriter(
                            files(table, step, FileFormat.PARQUET)
                                    .newOutputFile(table.spec(), null),
                            table.spec(),
                            null);
            try (writer) {
                writer.write(PositionDelete.<Record>create().set(rewritten.location(), 1L, null));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            DeleteFile deletes = writer.toDeleteFile();
            table.newRowDelta().addDeletes(deletes).commit();
        }

        private static OutputFileFactory files(Table table, int step, FileFormat format) {
            return OutputFileFactory.builderFor(table, 1000 + step, step).format(format).build();
        }

        private static Record record(Table table, int id, String v) {
            GenericRecord record = GenericRecord.create(table.schema());
            record.set(0, id);
            record.set(1, v);
            return record;
        }

        private static RowData row(String spec) {
            String[] parts = spec.split(" ");
            GenericRowData row =
                    GenericRowData.of(Integer.parseInt(parts[1]), StringData.fromString(parts[2]));
            switch (parts[0]) {
                case "+I":
                    row.setRowKind(RowKind.INSERT);
                    break;
                case "-U":
                    row.setRowKind(RowKind.UPDATE_BEFORE);
                    break;
                case "+U":
                    row.setRowKind(RowKind.UPDATE_AFTER);
                    break;
                case "-D":
                    row.setRowKind(RowKind.DELETE);
                    break;
                default:
                    throw new IllegalArgumentException(spec);
            }
            return row;
        }
    }
}
