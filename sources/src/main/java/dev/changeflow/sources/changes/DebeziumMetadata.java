package dev.changeflow.sources.changes;

import dev.changeflow.operators.AutoCdcSpec;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;

import javax.annotation.Nullable;

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
 * them.
 *
 * <p><b>Sequence-only columns</b> (A5 "Default sequence per connector"). A flow's SEQUENCE BY may
 * also name {@link #LOG_POSITION} ({@code log_position}, the connector's log position, see {@link
 * LogPosition}) and any other member of {@code source}, spelled {@code source.<member>} (column
 * {@code _source_<member>}, case kept). Such columns exist only in the flows that name them, after
 * the columns above ({@link DecoderFlow#sourceType()}), typed by {@link #sourceMemberType}.
 *
 * <p>The default sequence is the source log position, never {@code ts_ms} ({@link
 * #defaultSequence}): {@link #POSTGRES_SEQUENCE} for PostgreSQL (and when the connector is not
 * known when the flow is planned), {@link #LOG_POSITION} for every other connector.
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
     * The log position of the record's connector (STRING, {@link LogPosition}); a sequence-only
     * column, spelled {@code log_position}.
     */
    public static final String LOG_POSITION = "_log_position";

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
     * Default SEQUENCE BY of a Debezium flow of any connector but PostgreSQL (A5): {@code
     * _log_position}.
     */
    public static final List<String> LOG_POSITION_SEQUENCE = List.of(LOG_POSITION);

    /** {@code source} members read as BIGINT when used as sequence columns. */
    private static final Set<String> BIGINT_MEMBERS =
            Set.of(
                    "row",
                    "server_id",
                    "thread",
                    "event_serial_no",
                    "ord",
                    "sec",
                    "ssn",
                    "redo_thread",
                    "xmin",
                    "ts_us",
                    "ts_ns",
                    "txnNumber",
                    "commit_ts_ms");

    /** {@code source} members read as DECIMAL(38, 0) (Oracle SCNs, strings of digits). */
    private static final Set<String> SCN_MEMBERS = Set.of("scn", "commit_scn", "start_scn");

    /** {@code source} members that are LSNs of hex parts (SQL Server, Db2), read as STRING. */
    static final Set<String> LSN_MEMBERS = Set.of("commit_lsn", "change_lsn");

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
     * The default SEQUENCE BY of a keyed Debezium flow whose records come from {@code connector} (a
     * {@code source.connector} value; null when not known when the flow is planned) (A5): {@link
     * #POSTGRES_SEQUENCE} for {@code postgresql} or null, else {@link #LOG_POSITION_SEQUENCE}.
     */
    public static List<String> defaultSequence(@Nullable String connector) {
        return connector == null || connector.equals("postgresql")
                ? POSTGRES_SEQUENCE
                : LOG_POSITION_SEQUENCE;
    }

    /**
     * The type of a sequence-only column {@code _source_<member>} (A5): BIGINT for the integer
     * members ({@code row}, {@code event_serial_no}, {@code ord}, {@code ssn}, {@code server_id},
     * {@code thread}, {@code sec}, ...; JSON integers or strings of digits), DECIMAL(38, 0) for
     * Oracle's SCNs ({@code scn}, {@code commit_scn}, {@code start_scn}; strings of digits,
     * compared as numbers), STRING for everything else ({@code commit_lsn} and {@code change_lsn}
     * normalized as by {@link LogPosition}, other members as they are; a number there cannot be
     * ordered as text and fails the flow).
     */
    public static LogicalType sourceMemberType(String member) {
        if (BIGINT_MEMBERS.contains(member)) {
            return new BigIntType();
        }
        if (SCN_MEMBERS.contains(member)) {
            return new DecimalType(38, 0);
        }
        return VarCharType.STRING_TYPE;
    }

    /**
     * The {@code source} member a sequence-only column {@code _source_<member>} reads, or null when
     * {@code column} is not such a column (a fixed metadata column, {@link #LOG_POSITION}, or any
     * other name).
     */
    @Nullable
    static String sourceMember(String column) {
        if (!column.startsWith("_source_") || NAMES.contains(column)) {
            return null;
        }
        String m = column.substring("_source_".length());
        return m.isEmpty() ? null : m;
    }

    /**
     * Maps a user's spelling of an envelope field to its metadata column: {@code op} → {@code _op},
     * {@code ts_ms} → {@code _ts_ms}, {@code log_position} → {@code _log_position}, {@code
     * source.lsn} → {@code _source_lsn}, {@code source.<x>} → {@code _source_<x>} (lower-cased when
     * that is a column of {@link #FIELDS}, so {@code source.txId} → {@code _source_txid}; else as
     * written, a sequence-only column: {@code source.commit_lsn} → {@code _source_commit_lsn}). Any
     * other name is returned unchanged.
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
        } else if (name.equals("log_position")) {
            return LOG_POSITION;
        } else if (name.startsWith("source.") && name.length() > "source.".length()) {
            String member = name.substring("source.".length());
            candidate = "_source_" + member.toLowerCase(Locale.ROOT);
            if (!NAMES.contains(candidate) && member.matches("[A-Za-z0-9_]+")) {
                return "_source_" + member;
            }
        } else {
            return name;
        }
        return NAMES.contains(candidate) ? candidate : name;
    }
}
