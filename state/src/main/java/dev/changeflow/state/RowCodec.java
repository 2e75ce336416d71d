package dev.changeflow.state;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericMapData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.MapData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.MultisetType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * changeflow's compact binary encoding of a {@link RowData} of a fixed {@link RowType}
 * (semantics.md A4: keyed-state values never use Kryo or POJO serialization).
 *
 * <p>Layout of a row (no version byte: the enclosing state layout carries it): a null bitmap of
 * {@code ceil(arity / 8)} bytes (bit {@code i} set = field {@code i} is null), then each non-null
 * field in order:
 *
 * <ul>
 *   <li>BOOLEAN, TINYINT: 1 byte; SMALLINT, INT, DATE (days), TIME (millis of day): zig-zag varint;
 *       BIGINT: zig-zag varlong; FLOAT / DOUBLE: IEEE-754 bits, 4 / 8 bytes big-endian;
 *   <li>DECIMAL(p, s): p &lt;= 18: zig-zag varlong of the unscaled value, else varint length + the
 *       unscaled two's-complement bytes;
 *   <li>CHAR / VARCHAR: varint length + UTF-8 bytes; BINARY / VARBINARY: varint length + bytes;
 *   <li>TIMESTAMP(p) / TIMESTAMP_LTZ(p): zig-zag varlong epoch millis, plus (p &gt; 3) varint
 *       nano-of-millisecond;
 *   <li>ROW: the nested row in this same layout; ARRAY / MULTISET / MAP: varint size, element null
 *       bitmap, elements (a MAP is a key array followed by a value array).
 * </ul>
 *
 * <p>The byte form is deterministic (equal rows give equal bytes), so callers compare encoded rows
 * with {@link java.util.Arrays#equals(byte[], int, int, byte[], int, int)} for no-op detection and
 * {@link java.util.Arrays#compareUnsigned(byte[], byte[])} for A2's same-sequence tie-break.
 *
 * <p>Unsupported types (RAW, STRUCTURED, DISTINCT, SYMBOL, NULL, VARIANT, INTERVAL...) fail at
 * construction with {@link IllegalArgumentException} naming the field. Instances are immutable and
 * thread-safe; the caller owns the {@link ByteWriter}.
 */
@Internal
public final class RowCodec {
    private final RowType rowType;
    private final FieldCodec[] fields;
    private final int bitmapBytes;

    public RowCodec(RowType rowType) {
        this.rowType = rowType;
        this.fields = new FieldCodec[rowType.getFieldCount()];
        for (int i = 0; i < fields.length; i++) {
            fields[i] = codecFor(rowType.getTypeAt(i), rowType.getFieldNames().get(i));
        }
        this.bitmapBytes = (fields.length + 7) / 8;
    }

    public RowType rowType() {
        return rowType;
    }

    public int arity() {
        return fields.length;
    }

    /** Appends the encoding of {@code row} (arity {@link #arity()}) to {@code out}. */
    public void encode(RowData row, ByteWriter out) {
        encode(row, null, out);
    }

    /**
     * Appends the encoding of the projection {@code positions} of {@code row}: field {@code i} of
     * this codec's row type is read from {@code row} at {@code positions[i]} (null = identity).
     * Lets the operators encode the projected target row straight from the source row.
     */
    public void encode(RowData row, int[] positions, ByteWriter out) {
        int base = out.size();
        for (int b = 0; b < bitmapBytes; b++) {
            out.writeByte(0);
        }
        for (int i = 0; i < fields.length; i++) {
            int p = positions == null ? i : positions[i];
            if (row.isNullAt(p)) {
                out.buffer()[base + (i >>> 3)] |= (byte) (1 << (i & 7));
            } else {
                fields[i].write(row, p, out);
            }
        }
    }

    /** Encodes into a fresh array. */
    public byte[] encode(RowData row) {
        ByteWriter w = new ByteWriter();
        encode(row, w);
        return w.toByteArray();
    }

    /**
     * Decodes a row from {@code in}, advancing it; the result is a fresh {@link GenericRowData}
     * (+I).
     */
    public GenericRowData decode(ByteReader in) {
        return decode(in, false);
    }

    private GenericRowData decode(ByteReader in, boolean endsAtLimit) {
        GenericRowData row = new GenericRowData(fields.length);
        int bitmapPos = in.position();
        in.skip(bitmapBytes);
        byte[] a = in.array();
        for (int i = 0; i < fields.length; i++) {
            boolean isNull = (a[bitmapPos + (i >>> 3)] & (1 << (i & 7))) != 0;
            if (!isNull && endsAtLimit && in.remaining() == 0) {
                break; // a row written before trailing columns were added: they are null
            }
            if (!isNull) {
                row.setField(i, fields[i].read(in));
            }
        }
        return row;
    }

    /**
     * Decodes the row that fills {@code bytes[off, off + len)} exactly. A row written by a codec of
     * this type minus trailing columns (on-schema-change = add-columns, semantics.md A5) decodes
     * with those columns null, provided both arities have the same null-bitmap size ({@code
     * ceil(arity / 8)} bytes): every non-null field takes at least one byte, so reaching the end of
     * the slice before the last field can only mean the field did not exist when the row was
     * written.
     */
    public GenericRowData decode(byte[] bytes, int off, int len) {
        return decode(new ByteReader().wrap(bytes, off, len), true);
    }

    /**
     * Whether rows of {@code olderArity} columns decode with a codec of {@code newerArity} (see
     * {@link #decode(byte[], int, int)}).
     */
    public static boolean canWiden(int olderArity, int newerArity) {
        return olderArity <= newerArity && (olderArity + 7) / 8 == (newerArity + 7) / 8;
    }

    public GenericRowData decode(byte[] bytes) {
        return decode(bytes, 0, bytes.length);
    }

    // ------------------------------------------------------------------------------------------

    /** Encoder/decoder of one non-null value of a fixed type. */
    private interface FieldCodec {
        void write(RowData row, int pos, ByteWriter out);

        void writeElement(ArrayData array, int pos, ByteWriter out);

        Object read(ByteReader in);
    }

    private static FieldCodec codecFor(LogicalType type, String name) {
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        o.writeByte(r.getBoolean(p) ? 1 : 0);
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        o.writeByte(a.getBoolean(p) ? 1 : 0);
                    }

                    public Object read(ByteReader i) {
                        return i.readByte() != 0;
                    }
                };
            case TINYINT:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        o.writeByte(r.getByte(p));
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        o.writeByte(a.getByte(p));
                    }

                    public Object read(ByteReader i) {
                        return i.readByte();
                    }
                };
            case SMALLINT:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        o.writeZigZagInt(r.getShort(p));
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        o.writeZigZagInt(a.getShort(p));
                    }

                    public Object read(ByteReader i) {
                        return (short) i.readZigZagInt();
                    }
                };
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
            case INTERVAL_YEAR_MONTH:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        o.writeZigZagInt(r.getInt(p));
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        o.writeZigZagInt(a.getInt(p));
                    }

                    public Object read(ByteReader i) {
                        return i.readZigZagInt();
                    }
                };
            case BIGINT:
            case INTERVAL_DAY_TIME:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        o.writeZigZagLong(r.getLong(p));
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        o.writeZigZagLong(a.getLong(p));
                    }

                    public Object read(ByteReader i) {
                        return i.readZigZagLong();
                    }
                };
            case FLOAT:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        o.writeIntBE(Float.floatToIntBits(r.getFloat(p)));
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        o.writeIntBE(Float.floatToIntBits(a.getFloat(p)));
                    }

                    public Object read(ByteReader i) {
                        return Float.intBitsToFloat(i.readIntBE());
                    }
                };
            case DOUBLE:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        o.writeLongBE(Double.doubleToLongBits(r.getDouble(p)));
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        o.writeLongBE(Double.doubleToLongBits(a.getDouble(p)));
                    }

                    public Object read(ByteReader i) {
                        return Double.longBitsToDouble(i.readLongBE());
                    }
                };
            case DECIMAL:
                {
                    DecimalType dt = (DecimalType) type;
                    int precision = dt.getPrecision();
                    int scale = dt.getScale();
                    boolean compact = DecimalData.isCompact(precision);
                    return new FieldCodec() {
                        private void put(DecimalData d, ByteWriter o) {
                            if (compact) {
                                o.writeZigZagLong(d.toUnscaledLong());
                            } else {
                                byte[] b = d.toUnscaledBytes();
                                o.writeLengthPrefixed(b, 0, b.length);
                            }
                        }

                        public void write(RowData r, int p, ByteWriter o) {
                            put(r.getDecimal(p, precision, scale), o);
                        }

                        public void writeElement(ArrayData a, int p, ByteWriter o) {
                            put(a.getDecimal(p, precision, scale), o);
                        }

                        public Object read(ByteReader i) {
                            if (compact) {
                                return DecimalData.fromUnscaledLong(
                                        i.readZigZagLong(), precision, scale);
                            }
                            return DecimalData.fromUnscaledBytes(
                                    i.readBytes(i.readVarInt()), precision, scale);
                        }
                    };
                }
            case CHAR:
            case VARCHAR:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        byte[] b = r.getString(p).toBytes();
                        o.writeLengthPrefixed(b, 0, b.length);
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        byte[] b = a.getString(p).toBytes();
                        o.writeLengthPrefixed(b, 0, b.length);
                    }

                    public Object read(ByteReader i) {
                        return StringData.fromBytes(i.readBytes(i.readVarInt()));
                    }
                };
            case BINARY:
            case VARBINARY:
                return new FieldCodec() {
                    public void write(RowData r, int p, ByteWriter o) {
                        byte[] b = r.getBinary(p);
                        o.writeLengthPrefixed(b, 0, b.length);
                    }

                    public void writeElement(ArrayData a, int p, ByteWriter o) {
                        byte[] b = a.getBinary(p);
                        o.writeLengthPrefixed(b, 0, b.length);
                    }

                    public Object read(ByteReader i) {
                        return i.readBytes(i.readVarInt());
                    }
                };
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                {
                    int precision =
                            type instanceof TimestampType
                                    ? ((TimestampType) type).getPrecision()
                                    : ((LocalZonedTimestampType) type).getPrecision();
                    boolean nanos = precision > 3;
                    return new FieldCodec() {
                        private void put(TimestampData t, ByteWriter o) {
                            o.writeZigZagLong(t.getMillisecond());
                            if (nanos) {
                                o.writeVarInt(t.getNanoOfMillisecond());
                            }
                        }

                        public void write(RowData r, int p, ByteWriter o) {
                            put(r.getTimestamp(p, precision), o);
                        }

                        public void writeElement(ArrayData a, int p, ByteWriter o) {
                            put(a.getTimestamp(p, precision), o);
                        }

                        public Object read(ByteReader i) {
                            long millis = i.readZigZagLong();
                            int nano = nanos ? i.readVarInt() : 0;
                            return TimestampData.fromEpochMillis(millis, nano);
                        }
                    };
                }
            case ROW:
                {
                    RowCodec nested = new RowCodec((RowType) type);
                    int arity = nested.arity();
                    return new FieldCodec() {
                        public void write(RowData r, int p, ByteWriter o) {
                            nested.encode(r.getRow(p, arity), o);
                        }

                        public void writeElement(ArrayData a, int p, ByteWriter o) {
                            nested.encode(a.getRow(p, arity), o);
                        }

                        public Object read(ByteReader i) {
                            return nested.decode(i);
                        }
                    };
                }
            case ARRAY:
                {
                    FieldCodec element = codecFor(((ArrayType) type).getElementType(), name + "[]");
                    return new FieldCodec() {
                        public void write(RowData r, int p, ByteWriter o) {
                            writeArray(element, r.getArray(p), o);
                        }

                        public void writeElement(ArrayData a, int p, ByteWriter o) {
                            writeArray(element, a.getArray(p), o);
                        }

                        public Object read(ByteReader i) {
                            return new GenericArrayData(readArray(element, i));
                        }
                    };
                }
            case MULTISET:
            case MAP:
                {
                    LogicalType kt =
                            type instanceof MapType
                                    ? ((MapType) type).getKeyType()
                                    : ((MultisetType) type).getElementType();
                    LogicalType vt =
                            type instanceof MapType
                                    ? ((MapType) type).getValueType()
                                    : new IntType(false);
                    FieldCodec kc = codecFor(kt, name + ".key");
                    FieldCodec vc = codecFor(vt, name + ".value");
                    return new FieldCodec() {
                        private void put(MapData m, ByteWriter o) {
                            writeArray(kc, m.keyArray(), o);
                            writeArray(vc, m.valueArray(), o);
                        }

                        public void write(RowData r, int p, ByteWriter o) {
                            put(r.getMap(p), o);
                        }

                        public void writeElement(ArrayData a, int p, ByteWriter o) {
                            put(a.getMap(p), o);
                        }

                        public Object read(ByteReader i) {
                            Object[] keys = readArray(kc, i);
                            Object[] values = readArray(vc, i);
                            Map<Object, Object> m = new LinkedHashMap<>();
                            for (int k = 0; k < keys.length; k++) {
                                m.put(keys[k], values[k]);
                            }
                            return new GenericMapData(m);
                        }
                    };
                }
            default:
                throw new IllegalArgumentException(
                        "changeflow state codec: column '"
                                + name
                                + "' has unsupported type "
                                + type.asSummaryString());
        }
    }

    private static void writeArray(FieldCodec element, ArrayData array, ByteWriter o) {
        int n = array.size();
        o.writeVarInt(n);
        int base = o.size();
        int bitmap = (n + 7) / 8;
        for (int b = 0; b < bitmap; b++) {
            o.writeByte(0);
        }
        for (int i = 0; i < n; i++) {
            if (array.isNullAt(i)) {
                o.buffer()[base + (i >>> 3)] |= (byte) (1 << (i & 7));
            } else {
                element.writeElement(array, i, o);
            }
        }
    }

    private static Object[] readArray(FieldCodec element, ByteReader in) {
        int n = in.readVarInt();
        int bitmapPos = in.position();
        in.skip((n + 7) / 8);
        byte[] a = in.array();
        Object[] out = new Object[n];
        for (int i = 0; i < n; i++) {
            if ((a[bitmapPos + (i >>> 3)] & (1 << (i & 7))) == 0) {
                out[i] = element.read(in);
            }
        }
        return out;
    }
}
