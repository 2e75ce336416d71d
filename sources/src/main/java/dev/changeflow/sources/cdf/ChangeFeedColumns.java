package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.Types;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The metadata columns the change feed appends to a table's columns (F1): {@code _change_type}
 * STRING, {@code _commit_version} BIGINT and {@code _commit_timestamp} TIMESTAMP_LTZ(3), all
 * non-null.
 *
 * <p>In Iceberg terms they are required fields with fixed ids near {@link Integer#MAX_VALUE}
 * ({@code _commit_timestamp} is a {@code timestamptz} holding whole milliseconds).
 */
@PublicEvolving
public final class ChangeFeedColumns {

    public static final String CHANGE_TYPE = "_change_type";
    public static final String COMMIT_VERSION = "_commit_version";
    public static final String COMMIT_TIMESTAMP = "_commit_timestamp";

    /**
     * Names that table columns may not use (compared case-insensitively, F4 RESERVED_COLUMN_NAME).
     */
    public static final Set<String> RESERVED =
            Set.of(CHANGE_TYPE, COMMIT_VERSION, COMMIT_TIMESTAMP);

    static final Types.NestedField CHANGE_TYPE_FIELD =
            Types.NestedField.required(
                    Integer.MAX_VALUE - 2001, CHANGE_TYPE, Types.StringType.get());
    static final Types.NestedField COMMIT_VERSION_FIELD =
            Types.NestedField.required(
                    Integer.MAX_VALUE - 2002, COMMIT_VERSION, Types.LongType.get());
    static final Types.NestedField COMMIT_TIMESTAMP_FIELD =
            Types.NestedField.required(
                    Integer.MAX_VALUE - 2003, COMMIT_TIMESTAMP, Types.TimestampType.withZone());

    private ChangeFeedColumns() {}

    /** The change-feed schema: the data columns followed by the three metadata columns. */
    static Schema changeSchema(Schema dataSchema) {
        List<Types.NestedField> fields = new ArrayList<>(dataSchema.columns());
        fields.add(CHANGE_TYPE_FIELD);
        fields.add(COMMIT_VERSION_FIELD);
        fields.add(COMMIT_TIMESTAMP_FIELD);
        return new Schema(fields, dataSchema.identifierFieldIds());
    }

    /** The Flink row type of the change feed; {@code _commit_timestamp} is TIMESTAMP_LTZ(3). */
    static RowType rowType(Schema dataSchema) {
        RowType data = FlinkSchemaUtil.convert(dataSchema);
        List<RowType.RowField> fields = new ArrayList<>(data.getFields());
        fields.add(new RowType.RowField(CHANGE_TYPE, notNull(VarCharType.STRING_TYPE)));
        fields.add(new RowType.RowField(COMMIT_VERSION, new BigIntType(false)));
        fields.add(new RowType.RowField(COMMIT_TIMESTAMP, new LocalZonedTimestampType(false, 3)));
        return new RowType(false, fields);
    }

    /**
     * The Flink row type of a changelog read (G1): the data columns, {@code _commit_version} and
     * {@code _commit_timestamp} — {@link #rowType} without {@code _change_type}.
     */
    static RowType changelogRowType(Schema dataSchema) {
        List<RowType.RowField> fields = new ArrayList<>(rowType(dataSchema).getFields());
        fields.remove(dataSchema.columns().size());
        return new RowType(false, fields);
    }

    private static LogicalType notNull(LogicalType type) {
        return type.copy(false);
    }

    static boolean isReserved(String columnName) {
        return RESERVED.contains(columnName.toLowerCase(Locale.ROOT));
    }
}
