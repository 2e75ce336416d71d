package dev.changeflow.state;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Order-preserving ("memcomparable") encoding of SEQUENCE BY values (semantics.md A1, A2): for two
 * sequences {@code a}, {@code b} of the same type, {@code Arrays.compareUnsigned(enc(a), enc(b))}
 * has the sign of {@code a.compareTo(b)}, and equal values give equal bytes. A {@code STRUCT(...)}
 * sequence is the concatenation of its fields, so it sorts field by field.
 *
 * <p>Per type (A1's orderable types): BOOLEAN 1 byte; TINYINT / SMALLINT / INT / BIGINT / DATE /
 * TIME: fixed-width big-endian with the sign bit flipped; DECIMAL(p, s): the unscaled value as 8 (p
 * &lt;= 18) or 16 bytes, sign bit flipped (the scale is fixed by the type); TIMESTAMP(p) and
 * TIMESTAMP_LTZ(p): epoch millis (8 bytes, sign flipped) plus, for p &gt; 3, nano-of-millisecond (4
 * bytes); CHAR / VARCHAR: UTF-8 bytes (Flink's own string order) with {@code 0x00} escaped as
 * {@code 0x00 0xFF} and terminated by {@code 0x00 0x01}. The encoding is decodable ({@link
 * #decode}) so SCD2 can emit {@code __START_AT}/{@code __END_AT} from the stored bytes.
 *
 * <p>Null sequence values never reach the operators (the decoder quarantines them, A2); {@link
 * #encode} throws {@link IllegalStateException} if one does. Instances are immutable.
 */
@Internal
public final class SequenceCodec {
    private final LogicalType[] types;
    private final boolean struct;

    /**
     * @param sequenceType a single orderable type, or a ROW of orderable types for {@code
     *     STRUCT(...)} (as returned by {@code AutoCdcSpec#sequenceType()})
     * @throws IllegalArgumentException when a type is not orderable (A1)
     */
    public SequenceCodec(LogicalType sequenceType) {
        if (sequenceType instanceof RowType) {
            List<LogicalType> children = sequenceType.getChildren();
            this.types = children.toArray(new LogicalType[0]);
            this.struct = true;
        } else {
            this.types = new LogicalType[] {sequenceType};
            this.struct = false;
        }
        for (LogicalType t : types) {
            if (!isOrderable(t)) {
                throw new IllegalArgumentException(
                        "SEQUENCE BY type " + t.asSummaryString() + " is not orderable (A1)");
            }
        }
    }

    /**
     * Whether {@code type} is one of A1's orderable sequence types (not a ROW: use one per field).
     */
    public static boolean isOrderable(LogicalType type) {
        switch (type.getTypeRoot()) {
            case BOOLEAN:
            case TINYINT:
            case SMALLINT:
            case INTEGER:
            case BIGINT:
            case DECIMAL:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
            case CHAR:
            case VARCHAR:
                return true;
            default:
                return false;
        }
    }

    /**
     * Appends the encoding of the sequence read from {@code row} at {@code positions} (one position
     * per sequence column, in SEQUENCE BY order).
     *
     * @throws IllegalStateException when a sequence column is null
     */
    public void encode(RowData row, int[] positions, ByteWriter out) {
        for (int f = 0; f < types.length; f++) {
            int p = positions[f];
            if (row.isNullAt(p)) {
                throw new IllegalStateException(
                        "null SEQUENCE BY value at source position "
                                + p
                                + " reached the AUTO CDC operator; the decoder must quarantine it (A2 NULL_SEQUENCE)");
            }
            writeField(types[f], row, p, out);
        }
    }

    /**
     * Encodes a sequence value as produced by {@link #decode} (a single value or a RowData for a
     * struct).
     */
    public byte[] encodeValue(Object value) {
        ByteWriter w = new ByteWriter(32);
        if (struct) {
            RowData r = (RowData) value;
            int[] pos = new int[types.length];
            for (int i = 0; i < pos.length; i++) {
                pos[i] = i;
            }
            encode(r, pos, w);
        } else {
            encode(GenericRowData.of(value), new int[] {0}, w);
        }
        return w.toByteArray();
    }

    /**
     * Decodes {@code [off, off + len)} to Flink's internal value of the sequence type: the single
     * column's value, or a {@link GenericRowData} of the struct fields.
     */
    public Object decode(byte[] bytes, int off, int len) {
        ByteReader in = new ByteReader().wrap(bytes, off, len);
        if (!struct) {
            return readField(types[0], in);
        }
        GenericRowData row = new GenericRowData(types.length);
        for (int f = 0; f < types.length; f++) {
            row.setField(f, readField(types[f], in));
        }
        return row;
    }

    public Object decode(byte[] bytes) {
        return decode(bytes, 0, bytes.length);
    }

    private static int timestampPrecision(LogicalType t) {
        return t instanceof TimestampType
                ? ((TimestampType) t).getPrecision()
                : ((LocalZonedTimestampType) t).getPrecision();
    }

    private static void writeField(LogicalType t, RowData row, int p, ByteWriter out) {
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                out.writeByte(row.getBoolean(p) ? 1 : 0);
                break;
            case TINYINT:
                out.writeByte(row.getByte(p) ^ 0x80);
                break;
            case SMALLINT:
                out.writeShortBE(row.getShort(p) ^ 0x8000);
                break;
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                out.writeIntBE(row.getInt(p) ^ Integer.MIN_VALUE);
                break;
            case BIGINT:
                out.writeLongBE(row.getLong(p) ^ Long.MIN_VALUE);
                break;
            case DECIMAL:
                {
                    DecimalType dt = (DecimalType) t;
                    DecimalData d = row.getDecimal(p, dt.getPrecision(), dt.getScale());
                    if (DecimalData.isCompact(dt.getPrecision())) {
                        out.writeLongBE(d.toUnscaledLong() ^ Long.MIN_VALUE);
                    } else {
                        byte[] b = d.toBigDecimal().unscaledValue().toByteArray();
                        byte[] wide = new byte[16];
                        byte fill = (byte) (b[0] < 0 ? 0xFF : 0x00);
                        int pad = 16 - b.length;
                        for (int i = 0; i < 16; i++) {
                            wide[i] = i < pad ? fill : b[i - pad];
                        }
                        wide[0] ^= (byte) 0x80;
                        out.writeBytes(wide);
                    }
                    break;
                }
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                {
                    int precision = timestampPrecision(t);
                    TimestampData ts = row.getTimestamp(p, precision);
                    out.writeLongBE(ts.getMillisecond() ^ Long.MIN_VALUE);
                    if (precision > 3) {
                        out.writeIntBE(ts.getNanoOfMillisecond());
                    }
                    break;
                }
            case CHAR:
            case VARCHAR:
                {
                    byte[] b = row.getString(p).toBytes();
                    for (byte x : b) {
                        out.writeByte(x);
                        if (x == 0) {
                            out.writeByte(0xFF);
                        }
                    }
                    out.writeByte(0);
                    out.writeByte(1);
                    break;
                }
            default:
                throw new IllegalArgumentException("not orderable: " + t);
        }
    }

    private static Object readField(LogicalType t, ByteReader in) {
        switch (t.getTypeRoot()) {
            case BOOLEAN:
                return in.readByte() != 0;
            case TINYINT:
                return (byte) (in.readByte() ^ 0x80);
            case SMALLINT:
                return (short) (in.readShortBE() ^ 0x8000);
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                return in.readIntBE() ^ Integer.MIN_VALUE;
            case BIGINT:
                return in.readLongBE() ^ Long.MIN_VALUE;
            case DECIMAL:
                {
                    DecimalType dt = (DecimalType) t;
                    if (DecimalData.isCompact(dt.getPrecision())) {
                        return DecimalData.fromUnscaledLong(
                                in.readLongBE() ^ Long.MIN_VALUE, dt.getPrecision(), dt.getScale());
                    }
                    byte[] wide = in.readBytes(16);
                    wide[0] ^= (byte) 0x80;
                    return DecimalData.fromBigDecimal(
                            new BigDecimal(new BigInteger(wide), dt.getScale()),
                            dt.getPrecision(),
                            dt.getScale());
                }
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                {
                    long millis = in.readLongBE() ^ Long.MIN_VALUE;
                    int nanos = timestampPrecision(t) > 3 ? in.readIntBE() : 0;
                    return TimestampData.fromEpochMillis(millis, nanos);
                }
            case CHAR:
            case VARCHAR:
                {
                    ByteWriter w = new ByteWriter(32);
                    while (true) {
                        byte x = in.readByte();
                        if (x == 0) {
                            int next = in.readUnsignedByte();
                            if (next == 0x01) {
                                break;
                            }
                            w.writeByte(0);
                        } else {
                            w.writeByte(x);
                        }
                    }
                    return StringData.fromBytes(w.toByteArray());
                }
            default:
                throw new IllegalArgumentException("not orderable: " + t);
        }
    }

    /** Debug form of an encoded sequence (hex), for logs and exception messages. */
    public static String toHex(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            sb.append(Character.forDigit((b >>> 4) & 0xF, 16))
                    .append(Character.forDigit(b & 0xF, 16));
        }
        return sb.toString();
    }

    /**
     * The MapState user key for an encoded sequence: one char per byte (ISO-8859-1),
     * order-preserving.
     */
    public static String toMapKey(byte[] bytes, int off, int len) {
        return new String(bytes, off, len, StandardCharsets.ISO_8859_1);
    }

    /** Inverse of {@link #toMapKey}. */
    public static byte[] fromMapKey(String key) {
        return key.getBytes(StandardCharsets.ISO_8859_1);
    }
}
