package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;
import org.apache.flink.util.InstantiationUtil;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.SerializableTable;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.sink.RowDataTaskWriterFactory;
import org.apache.iceberg.io.TaskWriter;
import org.apache.iceberg.io.WriteResult;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes the row differences of one REPLACE WHERE refresh (docs/semantics.md S4) as Iceberg files,
 * without committing them: {@link SliceReplaceCommit} commits what every subtask wrote in one
 * snapshot.
 *
 * <p><b>Input</b>: one row per distinct whole row {@code r} whose number of copies differs between
 * the target's slice and the query's slice — the table's columns in its canonical Flink type
 * ({@code FlinkSchemaUtil.convert(schema)}), then {@code old_count BIGINT}, {@code new_count
 * BIGINT}. For such a row the writer writes
 *
 * <ul>
 *   <li>an equality delete of {@code r} on every column when {@code old_count > 0} (it removes
 *       every copy of {@code r} the table holds in {@code r}'s partition; a null matches a null),
 *       and
 *   <li>{@code new_count} copies of {@code r} to a data file.
 * </ul>
 *
 * The data files and the delete files come from two separate Iceberg task writers: the data writer
 * has no equality fields, so identical rows are all kept (Iceberg's delta writer would keep one
 * position per distinct row and position-delete the earlier copies), and the delete writer never
 * inserts, so each delete becomes an equality delete. Committed in one snapshot, an equality delete
 * does not apply to the data files of its own snapshot (same data sequence number): the new copies
 * survive, the old ones go.
 *
 * <p><b>Output</b>: at the end of its input each subtask emits one Java-serialized {@link
 * WriteResult} (data files and delete files; nothing when it wrote nothing).
 */
@Internal
public final class SliceReplaceWriter extends AbstractStreamOperator<byte[]>
        implements OneInputStreamOperator<RowData, byte[]>, BoundedOneInput {
    private static final long serialVersionUID = 1L;

    private final SerializableTable table;
    private final RowType rowType;

    private transient RowData.FieldGetter[] getters;
    private transient TaskWriter<RowData> dataWriter;
    private transient TaskWriter<RowData> deleteWriter;
    private transient boolean wrote;

    /**
     * @param table the target; its schema must have no nested column (every column is an equality
     *     field)
     */
    public SliceReplaceWriter(Table table) {
        this.table = (SerializableTable) SerializableTable.copyOf(table);
        this.rowType = FlinkSchemaUtil.convert(table.schema());
    }

    /** The canonical Flink row type of the table's columns, as the input must carry them. */
    public static RowType rowType(Table table) {
        return FlinkSchemaUtil.convert(table.schema());
    }

    @Override
    public void open() throws Exception {
        super.open();
        getters = new RowData.FieldGetter[rowType.getFieldCount()];
        for (int i = 0; i < getters.length; i++) {
            getters[i] = RowData.createFieldGetter(rowType.getTypeAt(i), i);
        }
        List<Integer> all = new ArrayList<>();
        for (Types.NestedField f : table.schema().columns()) {
            all.add(f.fieldId());
        }
        FileFormat format =
                FileFormat.fromString(
                        table.properties()
                                .getOrDefault(
                                        TableProperties.DEFAULT_FILE_FORMAT,
                                        TableProperties.DEFAULT_FILE_FORMAT_DEFAULT)
                                .toUpperCase(Locale.ROOT));
        long targetSize =
                PropertyUtil.propertyAsLong(
                        table.properties(),
                        TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
                        TableProperties.WRITE_TARGET_FILE_SIZE_BYTES_DEFAULT);
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        RowDataTaskWriterFactory data =
                new RowDataTaskWriterFactory(
                        table, rowType, targetSize, format, table.properties(), List.of(), false);
        data.initialize(subtask, attempt);
        dataWriter = data.create();
        RowDataTaskWriterFactory deletes =
                new RowDataTaskWriterFactory(
                        table, rowType, targetSize, format, table.properties(), all, false);
        // a distinct attempt number keeps the two writers' file names apart
        deletes.initialize(subtask, attempt + 1_000_000);
        deleteWriter = deletes.create();
    }

    @Override
    public void processElement(StreamRecord<RowData> element) throws Exception {
        RowData in = element.getValue();
        int n = getters.length;
        long oldCount = in.getLong(n);
        long newCount = in.getLong(n + 1);
        if (oldCount > 0) {
            deleteWriter.write(copy(in, RowKind.DELETE));
        }
        for (long i = 0; i < newCount; i++) {
            dataWriter.write(copy(in, RowKind.INSERT));
        }
    }

    private GenericRowData copy(RowData in, RowKind kind) {
        GenericRowData row = new GenericRowData(kind, getters.length);
        for (int i = 0; i < getters.length; i++) {
            row.setField(i, getters[i].getFieldOrNull(in));
        }
        return row;
    }

    @Override
    public void endInput() throws Exception {
        WriteResult result =
                WriteResult.builder()
                        .add(dataWriter.complete())
                        .add(deleteWriter.complete())
                        .build();
        wrote = true;
        if (result.dataFiles().length > 0 || result.deleteFiles().length > 0) {
            output.collect(new StreamRecord<>(InstantiationUtil.serializeObject(result)));
        }
    }

    @Override
    public void close() throws Exception {
        try {
            if (!wrote) {
                if (dataWriter != null) {
                    dataWriter.abort();
                }
                if (deleteWriter != null) {
                    deleteWriter.abort();
                }
            }
        } finally {
            super.close();
        }
    }
}
