package dev.changeflow.jobs.config;

import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sources.changes.DecoderFlow;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One flow of a flows file: which source table it reads and how it is applied to its streaming
 * table. Keys are the option names of the flows file (kebab-case); see {@link FlowsFile} and the
 * README's options table. Mutable while being read and overridden; {@link #validate()} checks the
 * combination before a job is built.
 */
public final class FlowConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Source table name (Debezium {@code source.table}, or the last segment of the topic). */
    public String table;

    /** Target table {@code [namespace.]name}; default: the source table in the flows namespace. */
    @Nullable public String target;

    /** Flow id (uids, metrics, quarantine rows); default: the target table name. */
    @Nullable public String name;

    /** KEYS; empty for append-only tables. */
    public List<String> keys = new ArrayList<>();

    /**
     * SEQUENCE BY columns (one, or several for STRUCT); default for Debezium: {@code source.lsn}.
     */
    public List<String> sequenceBy = new ArrayList<>();

    public ScdType scdType = ScdType.TYPE_1;

    /** Key-less source written as-is (every record an insert), e.g. pgbench_history. */
    public boolean appendOnly;

    public ColumnSelection columns = ColumnSelection.all();

    /** IGNORE NULL UPDATES clause; null = off. */
    @Nullable public ColumnSelection ignoreNullUpdates;

    /** TRACK HISTORY ON clause (SCD type 2 only); null = all columns. */
    @Nullable public ColumnSelection trackHistoryOn;

    /** Declared columns as a Flink DDL column list, e.g. {@code "aid INT, filler STRING"}. */
    @Nullable public String schema;

    /** Partition transforms of the target, e.g. {@code bid} or {@code bucket(16, aid)}. */
    public List<String> partitionedBy = new ArrayList<>();

    /** APPLY AS DELETE WHEN (Flink SQL predicate over the source columns). */
    @Nullable public String applyAsDeleteWhen;

    /** APPLY AS TRUNCATE WHEN (Flink SQL predicate; SCD type 1 only). */
    @Nullable public String applyAsTruncateWhen;

    /** Applies Debezium truncate records ({@code op = t}); else they are quarantined. */
    public boolean truncate;

    /** How long tombstones are kept (processing time), A3; default 2 days. */
    public Duration tombstoneGcThreshold = Duration.ofDays(2);

    /** Keys per subtask the AUTO CDC operator buffers between checkpoints; 0 = none. */
    public int applyBufferKeys = AutoCdcSpec.DEFAULT_APPLY_BUFFER_KEYS;

    /** Whether {@code apply-buffer-keys} was given (an append-only flow rejects it). */
    public boolean applyBufferKeysSet;

    /** Debezium's {@code unavailable.value.placeholder} (TOAST), A3/A4/A5. */
    public String unavailablePlaceholder = DecoderFlow.DEFAULT_UNAVAILABLE_PLACEHOLDER;

    /** {@code quarantine} (default) or {@code fail}. */
    public String onInvalidRecord = "quarantine";

    /** {@code fail} (default), {@code quarantine} or {@code add-columns}. */
    public String onSchemaChange = "fail";

    /** Record format; default: the flows file's {@code format}. */
    @Nullable public String format;

    /** Iceberg format version of a new table (2 or 3). */
    public int formatVersion = 2;

    /** Whether {@code format-version} was given (else nanosecond timestamps choose 3, A5). */
    public boolean formatVersionSet;

    public String targetName() {
        if (target == null) {
            return table;
        }
        int dot = target.lastIndexOf('.');
        return dot < 0 ? target : target.substring(dot + 1);
    }

    @Nullable
    public String targetNamespace() {
        if (target == null) {
            return null;
        }
        int dot = target.lastIndexOf('.');
        return dot < 0 ? null : target.substring(0, dot);
    }

    public String flowName() {
        return name != null ? name : targetName();
    }

    /**
     * Checks option combinations that need no schema (schema-dependent rules are AutoCdcSpec's).
     *
     * @throws IllegalArgumentException naming the table, the option and the accepted values
     */
    public void validate() {
        if (table == null || table.isBlank()) {
            throw new IllegalArgumentException("a flow needs 'table' (the source table name)");
        }
        if (appendOnly && !keys.isEmpty()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'append-only: true' takes no 'keys' (got "
                            + keys
                            + ")");
        }
        if (appendOnly && applyBufferKeysSet) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'append-only: true' takes no 'apply-buffer-keys' (an append-only flow keeps no"
                            + " AUTO CDC state to buffer)");
        }
        if (!appendOnly && keys.isEmpty()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'keys' is required (or set 'append-only: true' for a key-less table)");
        }
        String inv = onInvalidRecord.toLowerCase(Locale.ROOT);
        if (!inv.equals("quarantine") && !inv.equals("fail")) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'on-invalid-record' must be quarantine or fail, got '"
                            + onInvalidRecord
                            + "'");
        }
        String sc = onSchemaChange.toLowerCase(Locale.ROOT);
        if (!sc.equals("fail") && !sc.equals("quarantine") && !sc.equals("add-columns")) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'on-schema-change' must be fail, quarantine or add-columns, got '"
                            + onSchemaChange
                            + "'");
        }
        if (formatVersion != 2 && formatVersion != 3) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'format-version' must be 2 or 3, got "
                            + formatVersion);
        }
    }
}
