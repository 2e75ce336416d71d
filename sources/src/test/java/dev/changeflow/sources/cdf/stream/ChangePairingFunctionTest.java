package dev.changeflow.sources.cdf.stream;

import dev.changeflow.sources.cdf.StreamingAccess;
import dev.changeflow.sources.cdf.stream.pairing.ChangePairingFunction;
import dev.changeflow.sources.cdf.stream.pairing.RowIdentityKeySelector;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.Schema;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keyed pairing operator (design.md "Order and pairing — how", F2): buffers per key until the
 * version-completion watermark passes the version, then pairs, cancels carry-overs and emits in
 * version order; buffered rows survive a snapshot and restore.
 */
class ChangePairingFunctionTest {

    private static final Schema KEYED =
            new Schema(
                    List.of(
                            org.apache.iceberg.types.Types.NestedField.required(
                                    1, "id", org.apache.iceberg.types.Types.LongType.get()),
                            org.apache.iceberg.types.Types.NestedField.optional(
                                    2, "name", org.apache.iceberg.types.Types.StringType.get())),
                    Set.of(1));
    private static final Schema KEYLESS = new Schema(KEYED.columns());

    private static RowData row(long id, String name, String type, long version) {
        return GenericRowData.of(
                id,
                StringData.fromString(name),
                StringData.fromString(type),
                version,
                TimestampData.fromEpochMillis(1000 + version));
    }

    private static KeyedOneInputStreamOperatorTestHarness<Integer, RowData, RowData> harness(
            Schema schema) throws Exception {
        RowType rowType = StreamingAccess.rowType(schema);
        int[] identity =
                StreamingAccess.keyPositions(schema) != null
                        ? StreamingAccess.keyPositions(schema)
                        : new int[] {0, 1};
        KeyedOneInputStreamOperatorTestHarness<Integer, RowData, RowData> harness =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(new ChangePairingFunction(schema, rowType)),
                        new RowIdentityKeySelector(rowType, identity),
                        Types.INT);
        return harness;
    }

    /** {@code "<version> <type> (<id>, <name>)"} of the rows emitted so far, then clears them. */
    private static List<String> drain(
            KeyedOneInputStreamOperatorTestHarness<Integer, RowData, RowData> harness) {
        List<String> lines = new ArrayList<>();
        for (Object o : harness.getOutput()) {
            if (o instanceof StreamRecord<?> r) {
                RowData row = (RowData) r.getValue();
                lines.add(
                        row.getLong(3)
                                + " "
                                + row.getString(2)
                                + " ("
                                + row.getLong(0)
                                + ", "
                                + row.getString(1)
                                + ")");
            }
        }
        harness.getOutput().clear();
        return lines;
    }

    @Test
    void pairsPerVersionInVersionOrderAfterTheWatermark() throws Exception {
        try (var h = harness(KEYED)) {
            h.open();
            // version 3 arrives before version 2 (different readers); inserts before deletes
            h.processElement(row(1, "c", "insert", 3), 3);
            h.processElement(row(1, "b", "insert", 2), 2);
            h.processElement(row(1, "a", "delete", 2), 2);
            h.processElement(row(1, "b", "delete", 3), 3);
            h.processElement(row(2, "x", "insert", 2), 2);
            h.processElement(row(2, "x", "delete", 2), 2); // carried over: cancels
            h.processElement(row(3, "y", "delete", 3), 3);
            assertThat(drain(h)).isEmpty();

            h.processWatermark(new Watermark(2));
            assertThat(drain(h))
                    .containsExactlyInAnyOrder(
                            "2 update_preimage (1, a)", "2 update_postimage (1, b)");
            h.processWatermark(new Watermark(3));
            assertThat(drain(h))
                    .containsExactlyInAnyOrder(
                            "3 update_preimage (1, b)",
                            "3 update_postimage (1, c)",
                            "3 delete (3, y)");
        }
    }

    @Test
    void preimageDirectlyBeforePostimage() throws Exception {
        try (var h = harness(KEYED)) {
            h.open();
            h.processElement(row(7, "new", "insert", 5), 5);
            h.processElement(row(7, "old", "delete", 5), 5);
            h.processWatermark(new Watermark(5));
            assertThat(drain(h))
                    .containsExactly("5 update_preimage (7, old)", "5 update_postimage (7, new)");
        }
    }

    @Test
    void withoutIdentifierFieldsUpdatesStayDeleteAndInsert() throws Exception {
        try (var h = harness(KEYLESS)) {
            h.open();
            h.processElement(row(1, "a", "delete", 4), 4);
            h.processElement(row(1, "b", "insert", 4), 4);
            h.processElement(row(2, "z", "delete", 4), 4);
            h.processElement(row(2, "z", "insert", 4), 4); // identical: cancels
            h.processWatermark(new Watermark(4));
            assertThat(drain(h)).containsExactlyInAnyOrder("4 delete (1, a)", "4 insert (1, b)");
        }
    }

    /**
     * G1: in changelog mode each change leaves as a row of the table's columns, {@code
     * _commit_version} and {@code _commit_timestamp}, with its row kind — insert +I,
     * update_preimage -U, update_postimage +U, delete -D — in the per-key order of the feed.
     */
    @Test
    void changelogModeGivesRowKindsAndDropsTheChangeType() throws Exception {
        RowType rowType = StreamingAccess.rowType(KEYED);
        try (var h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(
                                new ChangePairingFunction(KEYED, rowType, false, true)),
                        new RowIdentityKeySelector(rowType, new int[] {0}),
                        Types.INT)) {
            h.open();
            h.processElement(row(1, "a", "insert", 2), 2);
            h.processElement(row(2, "x", "insert", 2), 2);
            h.processElement(row(1, "b", "insert", 3), 3);
            h.processElement(row(1, "a", "delete", 3), 3);
            h.processElement(row(2, "x", "delete", 4), 4);
            h.processElement(row(1, "b", "delete", 4), 4);
            h.processElement(row(1, "c", "insert", 4), 4);
            h.processWatermark(new Watermark(4));
            List<String> out = new ArrayList<>();
            for (RowData r : h.extractOutputValues()) {
                assertThat(r.getArity()).isEqualTo(4);
                out.add(
                        r.getRowKind().shortString()
                                + " ("
                                + r.getLong(0)
                                + ", "
                                + r.getString(1)
                                + ") v"
                                + r.getLong(2)
                                + " t"
                                + r.getTimestamp(3, 3).getMillisecond());
            }
            // per key in version order; keys interleave as their timers fire
            assertThat(out.stream().filter(l -> l.contains("(1,")))
                    .containsExactly(
                            "+I (1, a) v2 t1002",
                            "-U (1, a) v3 t1003",
                            "+U (1, b) v3 t1003",
                            "-U (1, b) v4 t1004",
                            "+U (1, c) v4 t1004");
            assertThat(out.stream().filter(l -> l.contains("(2,")))
                    .containsExactly("+I (2, x) v2 t1002", "-D (2, x) v4 t1004");
        }
    }

    /** Buffered rows and timers are checkpointed: after a restore the version completes. */
    @Test
    void bufferedRowsSurviveSnapshotAndRestore() throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = harness(KEYED)) {
            h.open();
            h.processElement(row(1, "a", "delete", 9), 9);
            snapshot = h.snapshot(1, 100);
        }
        try (var h = harness(KEYED)) {
            h.initializeState(snapshot);
            h.open();
            h.processElement(row(1, "b", "insert", 9), 9);
            h.processWatermark(new Watermark(9));
            assertThat(drain(h))
                    .containsExactly("9 update_preimage (1, a)", "9 update_postimage (1, b)");
        }
    }

    private static RowData lineageRow(long id, String name, String type, long version, Long rowId) {
        return GenericRowData.of(
                id,
                StringData.fromString(name),
                StringData.fromString(type),
                version,
                TimestampData.fromEpochMillis(1000 + version),
                rowId);
    }

    private static KeyedOneInputStreamOperatorTestHarness<Integer, RowData, RowData>
            lineageHarness() throws Exception {
        RowType rowType = StreamingAccess.rowType(KEYLESS);
        RowType sourceType = StreamingAccess.sourceRowType(KEYLESS, true);
        return new KeyedOneInputStreamOperatorTestHarness<>(
                new KeyedProcessOperator<>(new ChangePairingFunction(KEYLESS, rowType, true)),
                RowIdentityKeySelector.forRowLineage(
                        sourceType, rowType.getFieldCount(), new int[] {0, 1}),
                Types.INT);
    }

    /**
     * v3 without identifier fields: rows pair by {@code _row_id} (the source's last column, dropped
     * on output); same id and values cancel; rows without an id as without identity; buffered rows
     * survive a snapshot and restore.
     */
    @Test
    void rowLineagePairsByRowId() throws Exception {
        OperatorSubtaskState snapshot;
        try (var h = lineageHarness()) {
            h.open();
            h.processElement(lineageRow(1, "a", "delete", 4, 10L), 4);
            h.processElement(lineageRow(2, "z", "delete", 4, 11L), 4);
            h.processElement(lineageRow(2, "z", "insert", 4, 11L), 4); // carried over: cancels
            h.processElement(lineageRow(3, "y", "delete", 4, 12L), 4);
            h.processElement(
                    lineageRow(3, "y", "insert", 4, 20L), 4); // new row id: not a carry-over
            h.processElement(lineageRow(4, "p", "delete", 4, null), 4);
            h.processElement(
                    lineageRow(4, "p", "insert", 4, null), 4); // no ids, identical: cancels
            snapshot = h.snapshot(1, 100);
        }
        try (var h = lineageHarness()) {
            h.initializeState(snapshot);
            h.open();
            h.processElement(lineageRow(1, "b", "insert", 4, 10L), 4);
            h.processWatermark(new Watermark(4));
            assertThat(h.extractOutputValues())
                    .hasSize(4)
                    .allSatisfy(r -> assertThat(r.getArity()).isEqualTo(5));
            List<String> out = drain(h);
            assertThat(out)
                    .containsExactlyInAnyOrder(
                            "4 update_preimage (1, a)",
                            "4 update_postimage (1, b)",
                            "4 delete (3, y)",
                            "4 insert (3, y)");
            assertThat(out.indexOf("4 update_postimage (1, b)"))
                    .isEqualTo(out.indexOf("4 update_preimage (1, a)") + 1);
        }
    }
}
