package dev.changeflow.sinks.iceberg;

import dev.changeflow.operators.AutoCdcException;

import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.io.FileAppender;
import org.apache.iceberg.io.OutputFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link StatelessStartMarker} in Flink's operator test harness against a Hadoop catalog: it writes
 * its reset marker only for a stateless start whose job id already committed to the table through
 * the same committer, only once, only from subtask 0, and passes every record through.
 */
class StatelessStartMarkerTest {
    private static final TableIdentifier ID = TableIdentifier.parse("db.t");
    private static final String COMMITTER_UID = "t" + StreamingTableSink.COMMITTER_UID_SUFFIX;

    @TempDir Path warehouse;

    private CatalogSettings settings;
    private Catalog catalog;

    @BeforeEach
    void createTable() {
        settings = CatalogSettings.localHadoop(warehouse);
        catalog = settings.open();
        StreamingTables.ensureTable(
                catalog,
                ID,
                RowType.of(new IntType(false)),
                List.of("f0"),
                StreamingTableOptions.defaults());
    }

    @AfterEach
    void closeCatalog() throws Exception {
        if (catalog instanceof Closeable) {
            ((Closeable) catalog).close();
        }
    }

    private OneInputStreamOperatorTestHarness<RowData, RowData> harness(
            int parallelism, int subtask) throws Exception {
        StatelessStartMarker marker =
                new StatelessStartMarker(
                        TableLoader.fromCatalog(settings.loader(), ID), COMMITTER_UID);
        return new OneInputStreamOperatorTestHarness<>(marker, 128, parallelism, subtask);
    }

    /** An (empty) commit stamped as Iceberg's committer stamps them. */
    private void committed(String jobId, String operatorId, long checkpointId) {
        catalog.loadTable(ID)
                .newAppend()
                .set("flink.job-id", jobId)
                .set("flink.operator-id", operatorId)
                .set("flink.max-committed-checkpoint-id", Long.toString(checkpointId))
                .commit();
    }

    private List<Map<String, String>> summaries() {
        Table t = catalog.loadTable(ID);
        List<Map<String, String>> out = new ArrayList<>();
        for (Snapshot s : t.snapshots()) {
            out.add(
                    Map.of(
                            "job", s.summary().getOrDefault("flink.job-id", ""),
                            "op", s.summary().getOrDefault("flink.operator-id", ""),
                            "max",
                                    s.summary()
                                            .getOrDefault("flink.max-committed-checkpoint-id", ""),
                            "files", s.summary().getOrDefault("added-data-files", "0")));
        }
        return out;
    }

    @Test
    void statelessStartOfAJobIdThatCommittedWritesOneResetMarker() throws Exception {
        String op = StatelessStartMarker.operatorId(COMMITTER_UID);
        try (OneInputStreamOperatorTestHarness<RowData, RowData> h = harness(2, 0)) {
            String job = h.getEnvironment().getJobID().toString();
            committed(job, op, 7);
            h.initializeEmptyState();
            h.open();
            h.processElement(new StreamRecord<>(GenericRowData.of(1)));
            assertThat(h.extractOutputValues()).containsExactly(GenericRowData.of(1));
            assertThat(summaries())
                    .containsExactly(
                            Map.of("job", job, "op", op, "max", "7", "files", "0"),
                            Map.of("job", job, "op", op, "max", "-1", "files", "0"));
            assertThat(StatelessStartMarker.newestOf(catalog.loadTable(ID), job, op).summary())
                    .containsEntry("flink.max-committed-checkpoint-id", "-1");
        }
    }

    /**
     * Flink sends no restore to a task none of whose operators holds state, and the writer task the
     * marker sits in holds none of Flink's own: the marker's own state, in every snapshot of every
     * subtask, is what tells it a restore from a start without state.
     */
    @Test
    void everySnapshotHoldsTheMarkersOwnState() throws Exception {
        for (int subtask = 0; subtask < 2; subtask++) {
            try (OneInputStreamOperatorTestHarness<RowData, RowData> h = harness(2, subtask)) {
                h.initializeEmptyState();
                h.open();
                OperatorSubtaskState state = h.snapshot(1L, 1L);
                assertThat(state.hasState()).isTrue();
                assertThat(state.getManagedOperatorState()).hasSize(1);
                assertThat(
                                state.getManagedOperatorState()
                                        .iterator()
                                        .next()
                                        .getStateNameToPartitionOffsets())
                        .containsOnlyKeys(StatelessStartMarker.SEEN.getName());
            }
        }
    }

    @Test
    void noMarkerWhenRestoredForAnotherJobIdOnOtherSubtasksOrAlreadyReset() throws Exception {
        String op = StatelessStartMarker.operatorId(COMMITTER_UID);
        committed("0123456789abcdef0123456789abcdef", op, 7);
        OperatorSubtaskState state;
        try (OneInputStreamOperatorTestHarness<RowData, RowData> h = harness(1, 0)) {
            // another job id committed: nothing to reset
            h.initializeEmptyState();
            h.open();
            state = h.snapshot(1L, 1L);
        }
        assertThat(summaries()).hasSize(1);
        try (OneInputStreamOperatorTestHarness<RowData, RowData> h = harness(1, 0)) {
            // restored from a checkpoint (failover, savepoint): the committer's lookup is right
            committed(h.getEnvironment().getJobID().toString(), op, 9);
            h.initializeState(state);
            h.open();
        }
        assertThat(summaries()).hasSize(2);
        try (OneInputStreamOperatorTestHarness<RowData, RowData> h = harness(2, 1)) {
            // subtask 1 of 2: subtask 0 writes the marker
            committed(h.getEnvironment().getJobID().toString(), op, 5);
            h.initializeEmptyState();
            h.open();
        }
        assertThat(summaries()).hasSize(3);
        try (OneInputStreamOperatorTestHarness<RowData, RowData> h = harness(1, 0)) {
            // the newest snapshot of this job id already says -1
            committed(h.getEnvironment().getJobID().toString(), op, -1);
            h.initializeEmptyState();
            h.open();
        }
        assertThat(summaries()).hasSize(4);
    }

    @Test
    void anAutoCdcTableWithRowsFailsAStartWithoutState() throws Exception {
        Table t = catalog.loadTable(ID);
        OutputFile out = t.io().newOutputFile(t.location() + "/data/one.parquet");
        FileAppender<Record> appender =
                new GenericAppenderFactory(t.schema()).newAppender(out, FileFormat.PARQUET);
        try (appender) {
            appender.add(GenericRecord.create(t.schema()).copy("f0", 1));
        }
        t.newAppend()
                .appendFile(
                        DataFiles.builder(t.spec())
                                .withInputFile(out.toInputFile())
                                .withMetrics(appender.metrics())
                                .withFormat(FileFormat.PARQUET)
                                .build())
                .commit();
        StatelessStartMarker marker =
                new StatelessStartMarker(
                        TableLoader.fromCatalog(settings.loader(), ID), COMMITTER_UID, true);
        try (OneInputStreamOperatorTestHarness<RowData, RowData> h =
                new OneInputStreamOperatorTestHarness<>(marker, 128, 1, 0)) {
            AutoCdcException e =
                    Assertions.assertThrows(AutoCdcException.class, h::initializeEmptyState);
            assertThat(e.code()).isEqualTo(AutoCdcException.Code.STATE_MISSING_FOR_EXISTING_TABLE);
            assertThat(e.getMessage())
                    .contains("table " + t.name() + " already holds rows but job ")
                    .contains("Start the job from its latest checkpoint or savepoint");
        }
        // restored (a failover, a savepoint): no check
        StatelessStartMarker restored =
                new StatelessStartMarker(
                        TableLoader.fromCatalog(settings.loader(), ID), COMMITTER_UID, true);
        OperatorSubtaskState state;
        try (OneInputStreamOperatorTestHarness<RowData, RowData> h = harness(1, 0)) {
            h.initializeEmptyState();
            h.open();
            state = h.snapshot(1L, 1L);
        }
        try (OneInputStreamOperatorTestHarness<RowData, RowData> h =
                new OneInputStreamOperatorTestHarness<>(restored, 128, 1, 0)) {
            h.initializeState(state);
            h.open();
        }
    }
}
