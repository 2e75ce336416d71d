package dev.changeflow.sources.changes;

import dev.changeflow.operators.AutoCdcSpec;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The metadata columns of a Debezium flow (semantics.md A5): envelope fields exposed as source
 * columns, appended after the data columns in this order, all nullable:
 *
 * <pre>
 * _op STRING            envelope op: c, r, u, d, t
 * _ts_ms BIGINT         envelope ts_ms (connector processing time, epoch ms)
 * _source_lsn BIGINT    source.lsn (PostgreSQL WAL position of the row change), read as BIGINT
 * _source_ts_ms BIGINT  source.ts_ms (commit time in the database, epoch ms)
 * _source_txid BIGINT   source.txId
 * _source_snapshot STRING  source.snapshot (true, first, last, false, incremental, ...)
 * _source_db STRING     source.db
 * _source_schema STRING source.schema
 * _source_table STRING  source.table
 * _source_file STRING   source.file (MySQL binlog file)
 * _source_pos BIGINT    source.pos (MySQL binlog position)
 * _unavailable_columns BYTES  not an envelope field: bit i (bit i % 8 of byte i / 8) set = data
 *                       column i carried the connector's unavailable-value placeholder (TOAST) and
 *                       is null in the row; null when no column did (A3, A4, A5)
 * </pre>
 *
 * <p>They are usable by SEQUENCE BY and predicates and stored in the target only if COLUMNS lists
 * them. The default sequence is the source log position, never {@code ts_ms}: {@link
 * #POSTGRES_SEQUENCE} for PostgreSQL, {@link #MYSQL_SEQUENCE} for MySQL.
 */
@PublicEvolving
public final class DebeziumMetadata {
    public static final String OP = "_op";
    public static final String TS_MS = "_ts_ms";
    public static final String SOURCE_LSN = "_source_lsn";
    public static final String SOURCE_TS_MS = "_source_ts_ms";
    public static final String SOURCE_TXID = "_source_txid";
    public static final String SOURCE_SNAPSHOT = "_source_snapshot";
    public static final String SOURCE_DB = "_source_db";
    public static final String SOURCE_SCHEMA = "_source_schema";
    public static final String SOURCE_TABLE = "_source_table";
    public static final String SOURCE_FILE = "_source_file";
    public static final String SOURCE_POS = "_source_pos";

    /**
     * The bitmask of unavailable data columns ({@link AutoCdcSpec#UNAVAILABLE_COLUMNS}), written by
     * the decoder, read by the AUTO CDC operator.
     */
    public static final String UNAVAILABLE = AutoCdcSpec.UNAVAILABLE_COLUMNS;

    /**
     * Position of {@link #UNAVAILABLE} relative to the first metadata column (after the envelope).
     */
    static final int I_UNAVAILABLE = 11;

    /** Positions of each metadata column relative to the first metadata column. */
    static final int I_OP = 0,
            I_TS_MS = 1,
            I_LSN = 2,
            I_SOURCE_TS_MS = 3,
            I_TXID = 4,
            I_SNAPSHOT = 5,
            I_DB = 6,
            I_SCHEMA = 7,
            I_TABLE = 8,
            I_FILE = 9,
            I_POS = 10;

    /**
     * Where each metadata column comes from, by position: the envelope's {@code op} and {@code
     * ts_ms}, then members of its {@code source}. Also the names envelope-field errors give.
     */
    static final List<String> ENVELOPE_FIELDS =
            List.of(
                    "op",
                    "ts_ms",
                    "source.lsn",
                    "source.ts_ms",
                    "source.txId",
                    "source.snapshot",
                    "source.db",
                    "source.schema",
                    "source.table",
                    "source.file",
                    "source.pos");

    /** The metadata columns, in order. */
    public static final List<RowType.RowField> FIELDS;

    /** The metadata column names. */
    public static final Set<String> NAMES;

    /** Default SEQUENCE BY of a Debezium PostgreSQL flow (A5). */
    public static final List<String> POSTGRES_SEQUENCE = List.of(SOURCE_LSN);

    /**
     * Default SEQUENCE BY of a Debezium MySQL flow (A5): {@code STRUCT(_source_file, _source_pos)}.
     */
    public static final List<String> MYSQL_SEQUENCE = List.of(SOURCE_FILE, SOURCE_POS);

    static {
        List<RowType.RowField> f = new ArrayList<>();
        f.add(new RowType.RowField(OP, VarCharType.STRING_TYPE));
        f.add(new RowType.RowField(TS_MS, new BigIntType()));
        f.add(new RowType.RowField(SOURCE_LSN, new BigIntType()));
        f.add(new RowType.RowField(SOURCE_TS_MS, new BigIntType()));
        f.add(new RowType.RowField(SOURCE_TXID, new BigIntType()));
        f.add(new RowType.RowField(SOURCE_SNAPSHOT, VarCharType.STRING_TYPE));
        f.add(new RowType.RowField(SOURCE_DB, VarCharType.STRING_TYPE));
        f.add(new RowType.RowField(SOURCE_SCHEMA, VarCharType.STRING_TYPE));
        f.add(new RowType.RowField(SOURCE_TABLE, VarCharType.STRING_TYPE));
        f.add(new RowType.RowField(SOURCE_FILE, VarCharType.STRING_TYPE));
        f.add(new RowType.RowField(SOURCE_POS, new BigIntType()));
        f.add(new RowType.RowField(UNAVAILABLE, new VarBinaryType(VarBinaryType.MAX_LENGTH)));
        FIELDS = Collections.unmodifiableList(f);
        Set<String> names = new LinkedHashSet<>();
        for (RowType.RowField rf : f) {
            names.add(rf.getName());
        }
        NAMES = Collections.unmodifiableSet(names);
    }

    private DebeziumMetadata() {}

    /**
     * Maps a user's spelling of an envelope field to its metadata column: {@code op} → {@code _op},
     * {@code ts_ms} → {@code _ts_ms}, {@code source.lsn} → {@code _source_lsn}, {@code source.<x>}
     * → {@code _source_<x>} (lower-cased, so {@code source.txId} → {@code _source_txid}). Any other
     * name, including {@code source.<x>} without such a column, is returned unchanged.
     */
    public static String resolveAlias(String name) {
        if (name == null) {
            return null;
        }
        String candidate;
        if (name.equals("op")) {
            candidate = OP;
        } else if (name.equals("ts_ms")) {
            candidate = TS_MS;
        } else if (name.startsWith("source.") && name.length() > "source.".length()) {
            candidate = "_source_" + name.substring("source.".length()).toLowerCase(Locale.ROOT);
        } else {
            return name;
        }
        return NAMES.contains(candidate) ? candidate : name;
    }
}
