package dev.changeflow.sources.changes;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;

import java.util.HashMap;
import java.util.List;

/** A row type compiled for decoding: per column a {@link Column}, and a name → position index. */
@Internal
final class RowShape {
    final String[] names;
    final Column[] columns;
    final HashMap<String, Integer> index;

    RowShape(RowType type) {
        List<RowType.RowField> fields = type.getFields();
        names = new String[fields.size()];
        columns = new Column[fields.size()];
        index = new HashMap<>(fields.size() * 2);
        for (int i = 0; i < names.length; i++) {
            names[i] = fields.get(i).getName();
            columns[i] = new Column(names[i], fields.get(i).getType());
            index.put(names[i], i);
        }
    }

    int arity() {
        return names.length;
    }

    /** One column: its type root as a small code plus what conversion needs. */
    static final class Column {
        static final int BOOLEAN = 0,
                TINYINT = 1,
                SMALLINT = 2,
                INT = 3,
                BIGINT = 4,
                FLOAT = 5,
                DOUBLE = 6,
                DECIMAL = 7,
                STRING = 8,
                BYTES = 9,
                DATE = 10,
                TIME = 11,
                TIMESTAMP = 12,
                TIMESTAMP_LTZ = 13,
                ROW = 14,
                ARRAY = 15,
                MAP = 16;

        final String name;
        final LogicalType type;
        final int code;
        final boolean nullable;
        final int precision;
        final int scale;
        final RowShape nested;
        final Column element;

        Column(String name, LogicalType type) {
            this.name = name;
            this.type = type;
            this.nullable = type.isNullable();
            int p = 0, s = 0;
            RowShape n = null;
            Column e = null;
            switch (type.getTypeRoot()) {
                case BOOLEAN:
                    code = BOOLEAN;
                    break;
                case TINYINT:
                    code = TINYINT;
                    break;
                case SMALLINT:
                    code = SMALLINT;
                    break;
                case INTEGER:
                    code = INT;
                    break;
                case BIGINT:
                    code = BIGINT;
                    break;
                case FLOAT:
                    code = FLOAT;
                    break;
                case DOUBLE:
                    code = DOUBLE;
                    break;
                case DECIMAL:
                    code = DECIMAL;
                    p = ((DecimalType) type).getPrecision();
                    s = ((DecimalType) type).getScale();
                    break;
                case CHAR:
                case VARCHAR:
                    code = STRING;
                    break;
                case BINARY:
                case VARBINARY:
                    code = BYTES;
                    break;
                case DATE:
                    code = DATE;
                    break;
                case TIME_WITHOUT_TIME_ZONE:
                    code = TIME;
                    p = ((TimeType) type).getPrecision();
                    break;
                case TIMESTAMP_WITHOUT_TIME_ZONE:
                    code = TIMESTAMP;
                    p = ((TimestampType) type).getPrecision();
                    break;
                case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                    code = TIMESTAMP_LTZ;
                    p = ((LocalZonedTimestampType) type).getPrecision();
                    break;
                case ROW:
                    code = ROW;
                    n = new RowShape((RowType) type);
                    break;
                case ARRAY:
                    code = ARRAY;
                    e = new Column(name + "[]", ((ArrayType) type).getElementType());
                    break;
                case MAP:
                    code = MAP;
                    e = new Column(name + "{}", ((MapType) type).getValueType());
                    break;
                default:
                    throw new IllegalArgumentException(
                            "column '" + name + "': unsupported type " + type);
            }
            this.precision = p;
            this.scale = s;
            this.nested = n;
            this.element = e;
        }
    }
}
