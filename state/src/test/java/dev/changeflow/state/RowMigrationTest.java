package dev.changeflow.state;

import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RowMigration} (semantics.md A7 item 4) on hand-built state values of every layout: rows
 * exact in the new encoding, layouts and version bytes kept, tracked hashes recomputed only where
 * they were the old type's hash, same-sequence upserts given the old encoding's winner, and
 * evolutions the state cannot follow refused.
 */
class RowMigrationTest {
    static RowType type(LogicalType a, LogicalType f, LogicalType d) {
        return RowType.of(new LogicalType[] {a, f, d}, new String[] {"a", "f", "d"});
    }

    static final RowType OLD = type(new IntType(), new FloatType(), new DecimalType(10, 2));
    static final RowType NEW = type(new BigIntType(), new DoubleType(), new DecimalType(20, 2));
    static final int[] TRACKED = {1, 2};

    static GenericRowData oldRow(Integer a, Float f, String d) {
        return GenericRowData.of(a, f, d == null ? null : dec(d, 10));
    }

    static GenericRowData newRow(Long a, Double f, String d) {
        return GenericRowData.of(a, f, d == null ? null : dec(d, 20));
    }

    static DecimalData dec(String v, int p) {
        return DecimalData.fromBigDecimal(new BigDecimal(v), p, 2);
    }

    static byte[] hash(RowType type, GenericRowData row) {
        List<RowType.RowField> fields = new ArrayList<>();
        for (int p : TRACKED) {
            fields.add(type.getFields().get(p));
        }
        byte[] enc = new RowCodec(new RowType(fields)).encode(project(row));
        return Hash128.hash(enc);
    }

    static GenericRowData project(GenericRowData row) {
        return GenericRowData.of(row.getField(TRACKED[0]), row.getField(TRACKED[1]));
    }

    @Test
    void storedFormChangesOnlyForFloatToDoubleAndDecimalsAcross18Digits() {
        RowType ints = type(new IntType(), new FloatType(), new DecimalType(10, 2));
        assertThat(RowMigration.changesStoredForm(ints, ints)).isFalse();
        assertThat(
                        RowMigration.changesStoredForm(
                                ints,
                                type(new BigIntType(), new FloatType(), new DecimalType(18, 2))))
                .isFalse();
        assertThat(
                        RowMigration.changesStoredForm(
                                ints,
                                type(new IntType(), new DoubleType(), new DecimalType(10, 2))))
                .isTrue();
        assertThat(
                        RowMigration.changesStoredForm(
                                ints, type(new IntType(), new FloatType(), new DecimalType(19, 2))))
                .isTrue();
        assertThat(
                        RowMigration.changesStoredForm(
                                type(new IntType(), new FloatType(), new DecimalType(20, 2)),
                                type(new IntType(), new FloatType(), new DecimalType(38, 2))))
                .isFalse();
        // a column appended after the stored ones reads as null: no rewrite
        RowType appended =
                RowType.of(
                        new LogicalType[] {
                            new IntType(), new FloatType(), new DecimalType(10, 2), new IntType()
                        },
                        new String[] {"a", "f", "d", "e"});
        assertThat(RowMigration.changesStoredForm(ints, appended)).isFalse();
    }

    @Test
    void stringLengthsAndTimestampPrecisionsAreNoTypeChange() {
        RowType from =
                RowType.of(
                        new LogicalType[] {new VarCharType(10), new TimestampType(3)},
                        new String[] {"s", "t"});
        RowType longer =
                RowType.of(
                        new LogicalType[] {VarCharType.STRING_TYPE, new TimestampType(3)},
                        new String[] {"s", "t"});
        assertThat(RowMigration.changesStoredForm(from, longer)).isFalse();
        // TIMESTAMP(6) stores the nano-of-millisecond, TIMESTAMP(3) does not
        RowType micros =
                RowType.of(
                        new LogicalType[] {VarCharType.STRING_TYPE, new TimestampType(6)},
                        new String[] {"s", "t"});
        assertThat(RowMigration.changesStoredForm(from, micros)).isTrue();
        GenericRowData row =
                GenericRowData.of(
                        StringData.fromString("x"),
                        TimestampData.fromEpochMillis(1_700_000_000_123L));
        byte[] stored = new RowCodec(from).encode(row);
        byte[] migrated = new RowMigration(from, micros, null).row(stored, 0, stored.length);
        assertThat(migrated).isEqualTo(new RowCodec(micros).encode(row));
    }

    @Test
    void refusesWhatIsNoWidening() {
        assertThatThrownBy(
                        () ->
                                RowMigration.check(
                                        OLD,
                                        type(
                                                new IntType(),
                                                new FloatType(),
                                                new DecimalType(10, 3))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "column 'd' is DECIMAL(10, 2) in the saved state's rows and DECIMAL(10, 3)"
                                + " in the flow: not a widening the state can follow (INT → BIGINT,"
                                + " FLOAT → DOUBLE, DECIMAL precision up at the same scale)");
        assertThatThrownBy(() -> RowMigration.check(NEW, OLD))
                .hasMessageStartingWith("column 'a' is BIGINT in the saved state's rows and INT");
        assertThatThrownBy(
                        () ->
                                RowMigration.check(
                                        OLD,
                                        type(
                                                new IntType(),
                                                VarCharType.STRING_TYPE,
                                                new DecimalType(10, 2))))
                .hasMessageStartingWith("column 'f' is FLOAT in the saved state's rows and STRING");
        RowType renamed =
                RowType.of(
                        new LogicalType[] {new IntType(), new FloatType(), new DecimalType(10, 2)},
                        new String[] {"a", "g", "d"});
        assertThatThrownBy(() -> RowMigration.check(OLD, renamed))
                .hasMessage("column 2 of the saved state's rows is 'f', the flow's is 'g'");
        RowType fewer =
                RowType.of(
                        new LogicalType[] {new IntType(), new FloatType()},
                        new String[] {"a", "f"});
        assertThatThrownBy(() -> RowMigration.check(OLD, fewer))
                .hasMessageStartingWith("the saved state's rows have 3 columns, the flow 2");
    }

    @Test
    void scd1RowKeepsItsSequenceAndLayout() {
        RowMigration m = new RowMigration(OLD, NEW, null);
        byte[] seq = {9, 8, 7};
        byte[] row = new RowCodec(OLD).encode(oldRow(-3, 1.5f, "12.34"));
        ByteWriter w = new ByteWriter();
        Scd1RowValue.write(w, seq, 0, seq.length, row, 0, row.length);

        byte[] migrated = m.scd1Row(w.toByteArray());

        byte[] newRow = new RowCodec(NEW).encode(newRow(-3L, 1.5, "12.34"));
        ByteWriter expected = new ByteWriter();
        Scd1RowValue.write(expected, seq, 0, seq.length, newRow, 0, newRow.length);
        assertThat(migrated).isEqualTo(expected.toByteArray());
        Scd1RowValue v = new Scd1RowValue().wrap(migrated);
        assertThat(new RowCodec(NEW).decode(migrated, v.rowOffset(), v.rowLength()).toString())
                .isEqualTo("+I(-3,1.5,12.34)");
    }

    @Test
    void aRowStoredBeforeAnAppendedColumnIsWrittenAtTheCurrentWidth() {
        RowType stored =
                RowType.of(
                        new LogicalType[] {new IntType(), new FloatType()},
                        new String[] {"a", "f"});
        RowType to =
                RowType.of(
                        new LogicalType[] {new BigIntType(), new DoubleType(), new BigIntType()},
                        new String[] {"a", "f", "e"});
        byte[] shortRow = new RowCodec(stored).encode(GenericRowData.of(1, 0.1f));
        RowType from =
                RowType.of(
                        new LogicalType[] {new IntType(), new FloatType(), new BigIntType()},
                        new String[] {"a", "f", "e"});
        byte[] migrated = new RowMigration(from, to, null).row(shortRow, 0, shortRow.length);
        // 0.1f is exactly 0.100000001490116119384765625: the double of the same value
        assertThat(new RowCodec(to).decode(migrated).toString())
                .isEqualTo("+I(1," + (double) 0.1f + ",null)");
        assertThat((double) 0.1f).isEqualTo(0.10000000149011612);
    }

    @Test
    void scd2HeadGetsTheNewHashAndKeepsItsVersion() {
        RowMigration m = new RowMigration(OLD, NEW, TRACKED);
        GenericRowData old = oldRow(1, 2.5f, "99999999.99");
        byte[] row = new RowCodec(OLD).encode(old);
        byte[] h = hash(OLD, old);
        byte[] max = {1, 2};
        byte[] start = {1, 1};
        ByteWriter w = new ByteWriter();
        Scd2CurrentValue.writeLive(w, 3, max, 0, 2, start, 0, 2, h, 0, row, 0, row.length);

        byte[] migrated = m.scd2Head(w.toByteArray());

        GenericRowData now = newRow(1L, 2.5, "99999999.99");
        byte[] newRow = new RowCodec(NEW).encode(now);
        ByteWriter expected = new ByteWriter();
        Scd2CurrentValue.writeLive(
                expected, 3, max, 0, 2, start, 0, 2, hash(NEW, now), 0, newRow, 0, newRow.length);
        assertThat(migrated).isEqualTo(expected.toByteArray());

        // a v1 head (no chunk number) stays v1
        ByteWriter v1 = new ByteWriter();
        v1.writeByte(StateFormat.V1);
        v1.writeByte(1);
        v1.writeLengthPrefixed(max, 0, 2);
        v1.writeLengthPrefixed(start, 0, 2);
        v1.writeBytes(h, 0, Hash128.BYTES);
        v1.writeBytes(row, 0, row.length);
        byte[] v1Migrated = m.scd2Head(v1.toByteArray());
        assertThat(v1Migrated[0]).isEqualTo((byte) StateFormat.V1);
        Scd2CurrentValue view = new Scd2CurrentValue().wrap(v1Migrated);
        assertThat(view.nextChunk()).isZero();
        assertThat(
                        new RowCodec(NEW)
                                .decode(v1Migrated, view.rowOffset(), view.rowLength())
                                .toString())
                .isEqualTo("+I(1,2.5,99999999.99)");

        // a deleted key's head holds no row
        ByteWriter deleted = new ByteWriter();
        Scd2CurrentValue.writeDeleted(deleted, 2, max, 0, 2);
        assertThat(m.scd2Head(deleted.toByteArray())).isEqualTo(deleted.toByteArray());
    }

    @Test
    void aTrackedColumnAppendedWithTheWideningIsHashedInTheNewTypeOnly() {
        RowType to =
                RowType.of(
                        new LogicalType[] {
                            new BigIntType(),
                            new DoubleType(),
                            new DecimalType(20, 2),
                            new IntType()
                        },
                        new String[] {"a", "f", "d", "e"});
        int[] tracked = {1, 2, 3};
        RowMigration m = new RowMigration(OLD, to, tracked);
        GenericRowData old = oldRow(1, 2.5f, "1.00");
        byte[] row = new RowCodec(OLD).encode(old);
        byte[] h = hash(OLD, old); // hashed by the old flow: f, d
        ByteWriter w = new ByteWriter();
        Scd2CurrentValue.writeLive(
                w, 1, new byte[] {1}, 0, 1, new byte[] {1}, 0, 1, h, 0, row, 0, row.length);
        Scd2CurrentValue view = new Scd2CurrentValue().wrap(m.scd2Head(w.toByteArray()));
        GenericRowData now = GenericRowData.of(1L, 2.5, dec("1.00", 20), null);
        byte[] expectedHash =
                Hash128.hash(
                        new RowCodec(
                                        RowType.of(
                                                new LogicalType[] {
                                                    new DoubleType(),
                                                    new DecimalType(20, 2),
                                                    new IntType()
                                                },
                                                new String[] {"f", "d", "e"}))
                                .encode(GenericRowData.of(2.5, dec("1.00", 20), null)));
        byte[] migratedHash = new byte[Hash128.BYTES];
        System.arraycopy(view.bytes(), view.hashOffset(), migratedHash, 0, Hash128.BYTES);
        assertThat(migratedHash).isEqualTo(expectedHash);
        assertThat(
                        new RowCodec(to)
                                .decode(view.bytes(), view.rowOffset(), view.rowLength())
                                .toString())
                .isEqualTo(now.toString());
    }

    @Test
    void aHashNotOfTheOldTypeIsKept() {
        RowMigration m = new RowMigration(OLD, NEW, TRACKED);
        byte[] row = new RowCodec(OLD).encode(oldRow(1, 2.5f, "1.00"));
        byte[] other = new byte[Hash128.BYTES]; // e.g. hashed before a tracked column was added
        other[3] = 42;
        ByteWriter w = new ByteWriter();
        Scd2CurrentValue.writeLive(
                w, 1, new byte[] {1}, 0, 1, new byte[] {1}, 0, 1, other, 0, row, 0, row.length);
        Scd2CurrentValue view = new Scd2CurrentValue().wrap(m.scd2Head(w.toByteArray()));
        byte[] kept = new byte[Hash128.BYTES];
        System.arraycopy(view.bytes(), view.hashOffset(), kept, 0, Hash128.BYTES);
        assertThat(kept).isEqualTo(other);
    }

    /** Entries of a chunk as text: seq:kind:row. */
    static List<String> read(byte[] chunk) {
        List<String> out = new ArrayList<>();
        Scd2HistoryChunk.Cursor c = new Scd2HistoryChunk.Cursor().wrap(chunk);
        while (c.next()) {
            String s = Byte.toString(chunk[c.sequenceOffset()]);
            if (c.isDelete()) {
                out.add(s + ":D");
            } else {
                GenericRowData r = new RowCodec(NEW).decode(chunk, c.rowOffset(), c.rowLength());
                byte[] h = new byte[Hash128.BYTES];
                System.arraycopy(chunk, c.hashOffset(), h, 0, Hash128.BYTES);
                GenericRowData now =
                        newRow(r.getLong(0), r.getDouble(1), r.getDecimal(2, 20, 2).toString());
                out.add(s + ":" + r + (java.util.Arrays.equals(h, hash(NEW, now)) ? "" : ":stale"));
            }
        }
        return out;
    }

    @Test
    void historyChunksAndSameSequenceUpsertsKeepTheOldWinner() {
        RowMigration m = new RowMigration(OLD, NEW, TRACKED);
        RowCodec codec = new RowCodec(OLD);
        // 2.00 and 1.00 at sequence 1: as unscaled longs 1.00 encodes larger (it won, A2) and sits
        // in the newer chunk; as unscaled bytes 2.00 would be the larger
        GenericRowData two = oldRow(1, 1f, "2.00");
        GenericRowData one = oldRow(1, 1f, "1.00");
        byte[] rowTwo = codec.encode(two);
        byte[] rowOne = codec.encode(one);
        byte[] hTwo = hash(OLD, two);
        byte[] hOne = hash(OLD, one);
        ByteWriter c0 = new ByteWriter();
        Scd2HistoryChunk.start(c0);
        Scd2HistoryChunk.appendUpsert(c0, new byte[] {1}, 0, 1, hTwo, 0, rowTwo, 0, rowTwo.length);
        Scd2HistoryChunk.appendSame(c0, new byte[] {2}, 0, 1); // 2.00 again, at sequence 2
        Scd2HistoryChunk.appendDelete(c0, new byte[] {3}, 0, 1);
        Scd2HistoryChunk.appendSame(c0, new byte[] {4}, 0, 1); // 2.00 again, at sequence 4
        ByteWriter c1 = new ByteWriter();
        Scd2HistoryChunk.start(c1);
        Scd2HistoryChunk.appendUpsert(c1, new byte[] {1}, 0, 1, hOne, 0, rowOne, 0, rowOne.length);
        Scd2HistoryChunk.appendUpsert(c1, new byte[] {5}, 0, 1, hOne, 0, rowOne, 0, rowOne.length);
        Scd2HistoryChunk.appendSame(c1, new byte[] {6}, 0, 1);
        // a v1 entry (older release) at sequence 7
        ByteWriter v1 = new ByteWriter();
        Scd2HistoryEntry.writeUpsert(v1, hTwo, 0, rowTwo, 0, rowTwo.length);
        String v1Key = SequenceCodec.toMapKey(new byte[] {7}, 0, 1);
        Map<String, byte[]> stored = new LinkedHashMap<>();
        stored.put(Scd2HistoryChunk.mapKey(0), c0.toByteArray());
        stored.put(Scd2HistoryChunk.mapKey(1), c1.toByteArray());
        stored.put(v1Key, v1.toByteArray());
        stored.put(SequenceCodec.toMapKey(new byte[] {8}, 0, 1), Scd2HistoryEntry.delete());

        Map<String, byte[]> migrated = m.scd2History(stored.entrySet());

        assertThat(migrated.keySet()).containsExactlyElementsOf(stored.keySet());
        assertThat(read(migrated.get(Scd2HistoryChunk.mapKey(0))))
                .containsExactly("1:+I(1,1.0,1.00)", "2:+I(1,1.0,2.00)", "3:D", "4:+I(1,1.0,2.00)");
        assertThat(read(migrated.get(Scd2HistoryChunk.mapKey(1))))
                .containsExactly("1:+I(1,1.0,1.00)", "5:+I(1,1.0,1.00)", "6:+I(1,1.0,1.00)");
        // the SAME entries stay SAME where their upsert kept its row: chunk 0's sequence 4 follows
        // the explicit upsert written for sequence 2; chunk 1's sequence 6 follows sequence 5
        byte[] chunk0 = migrated.get(Scd2HistoryChunk.mapKey(0));
        byte[] newTwo = new RowCodec(NEW).encode(newRow(1L, 1.0, "2.00"));
        byte[] newOne = new RowCodec(NEW).encode(newRow(1L, 1.0, "1.00"));
        int upsert = 2 + 1 + Hash128.BYTES + 1; // sequence (length, byte), kind, hash, row length
        assertThat(chunk0.length)
                .isEqualTo(1 + (upsert + newOne.length) + (upsert + newTwo.length) + 3 + 3);
        assertThat(migrated.get(Scd2HistoryChunk.mapKey(1)).length)
                .isEqualTo(1 + 2 * (upsert + newOne.length) + 3);
        Scd2HistoryEntry e = new Scd2HistoryEntry().wrap(migrated.get(v1Key));
        assertThat(migrated.get(v1Key)[0]).isEqualTo((byte) StateFormat.V1);
        assertThat(
                        new RowCodec(NEW)
                                .decode(migrated.get(v1Key), e.rowOffset(), e.rowLength())
                                .toString())
                .isEqualTo("+I(1,1.0,2.00)");
        assertThat(migrated.get(SequenceCodec.toMapKey(new byte[] {8}, 0, 1)))
                .isEqualTo(Scd2HistoryEntry.delete());
    }
}
