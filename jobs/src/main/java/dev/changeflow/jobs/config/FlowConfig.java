package dev.changeflow.jobs.config;

import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.operators.Expectation;
import dev.changeflow.operators.ScdType;
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.operators.options.ResolvedOptions;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * One flow: which source table it reads and how it is applied to its streaming table — the typed
 * view of the {@link FlowOptions} (whose keys are the flows file's option names and whose defaults
 * the fields start with). Filled by {@link #apply} from options resolved by {@link
 * dev.changeflow.operators.options.OptionsResolver} (the flows file, then the command line's
 * overrides); {@link #validate()} checks the combination before a job is built.
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
     * SEQUENCE BY columns (one, or several for STRUCT); default for Debezium: the connector's log
     * position (docs/semantics.md A5).
     */
    public List<String> sequenceBy = new ArrayList<>();

    /**
     * AUTO CDC FROM SNAPSHOT (docs/semantics.md A6): the folder of snapshot files; null for a flow
     * of change records.
     */
    @Nullable public String fromSnapshot;

    /**
     * AUTO CDC FROM SNAPSHOT (docs/semantics.md A6): an Iceberg table {@code [namespace.]name} of
     * the catalog whose versions are the snapshots; null for other flows. At most one of this and
     * {@link #fromSnapshot} is set.
     */
    @Nullable public String fromSnapshotTable;

    /**
     * With {@link #fromSnapshotTable} (docs/semantics.md A6): {@code all} reads every retained
     * version of the table in order, {@code latest} only its current version at each run.
     */
    public String snapshotVersions = FlowOptions.SNAPSHOT_VERSIONS.defaultValue();

    /**
     * REPLACE USING (docs/semantics.md S5): the key columns whose values' rows are replaced by the
     * incoming rows with the highest {@link #sequenceBy}; empty for other flows. Such a flow has no
     * {@link #keys} (a key value may have many rows).
     */
    public List<String> replaceUsing = new ArrayList<>();

    /**
     * REPLACE WHERE (docs/semantics.md S4): the predicate, a Flink SQL boolean over the target's
     * columns, selecting the slice each refresh replaces; null for other flows. Such a flow has a
     * {@link #query} and {@link #target} and no {@link #table}.
     */
    @Nullable public String replaceWhere;

    /**
     * REPLACE WHERE (S4): the bounded Flink SQL query whose rows (matched to the target's columns
     * by name) replace the slice; null for other flows.
     */
    @Nullable public String query;

    /**
     * Where {@link #query} is written (its first character), for the errors of S4; null when not
     * known (a {@code --set} override): the errors then name the flow and the option.
     */
    @Nullable public SqlPosition queryPosition;

    /** Where {@link #replaceWhere} is written, as {@link #queryPosition}. */
    @Nullable public SqlPosition replaceWherePosition;

    /**
     * The options given for this flow (by the flows file, {@code --set} or a flag), by key: what
     * {@link #validate()} refuses for a kind of flow that does not take them.
     */
    public Set<String> optionsGiven = new TreeSet<>();

    public ScdType scdType = FlowOptions.SCD_TYPE.defaultValue();

    /** Key-less source written as-is (every record an insert), e.g. pgbench_history. */
    public boolean appendOnly;

    public ColumnSelection columns = ColumnSelection.all();

    /** IGNORE NULL UPDATES clause; null = off. */
    @Nullable public ColumnSelection ignoreNullUpdates;

    /** TRACK HISTORY ON clause (SCD type 2 only); null = all columns. */
    @Nullable public ColumnSelection trackHistoryOn;

    /** Declared columns as a Flink DDL column list, e.g. {@code "aid INT, filler STRING"}. */
    @Nullable public String schema;

    /**
     * {@code schema-hints}: types of some source columns as a Flink DDL column list, over the
     * sampled or declared ones (docs/semantics.md S2); null = none.
     */
    @Nullable public String schemaHints;

    /**
     * The select list of an append-only flow (docs/semantics.md S1), Flink SQL over the source's
     * columns; null for every source column.
     */
    @Nullable public String select;

    /** The WHERE predicate of an append-only flow (S1), Flink SQL; null for none. */
    @Nullable public String selectWhere;

    /**
     * The declared columns of an append-only flow's target (S1), a Flink DDL column list with
     * optional {@code NOT NULL} and {@code COMMENT '...'}: the query's columns must be these by
     * name, cast to these types; null: the query's columns as they are.
     */
    @Nullable public String targetColumns;

    /** Partition transforms of the target, e.g. {@code bid} or {@code bucket(16, aid)}. */
    public List<String> partitionedBy = new ArrayList<>();

    /** APPLY AS DELETE WHEN (Flink SQL predicate over the source columns). */
    @Nullable public String applyAsDeleteWhen;

    /** APPLY AS TRUNCATE WHEN (Flink SQL predicate; SCD type 1 only). */
    @Nullable public String applyAsTruncateWhen;

    /** Data-quality expectations (docs/semantics.md S8), in order; empty for none. */
    public List<Expectation> expectations = new ArrayList<>();

    /** Applies Debezium truncate records ({@code op = t}); else they are quarantined. */
    public boolean truncate;

    /** How long tombstones are kept (processing time), A3; default 2 days. */
    public Duration tombstoneGcThreshold = FlowOptions.TOMBSTONE_GC_THRESHOLD.defaultValue();

    /** Keys per subtask the AUTO CDC operator buffers between checkpoints; 0 = none. */
    public int applyBufferKeys = FlowOptions.APPLY_BUFFER_KEYS.defaultValue();

    /** Whether {@code apply-buffer-keys} was given (an append-only flow rejects it). */
    public boolean applyBufferKeysSet;

    /** Debezium's {@code unavailable.value.placeholder} (TOAST), A3/A4/A5. */
    public String unavailablePlaceholder = FlowOptions.UNAVAILABLE_VALUE_PLACEHOLDER.defaultValue();

    /** {@code quarantine} (default) or {@code fail}. */
    public String onInvalidRecord = FlowOptions.ON_INVALID_RECORD.defaultValue();

    /** {@code fail} (default), {@code quarantine} or {@code add-columns}. */
    public String onSchemaChange = FlowOptions.ON_SCHEMA_CHANGE.defaultValue();

    /** Record format; default: the flows file's {@code format}. */
    @Nullable public String format;

    /** Iceberg format version of a new table (2 or 3). */
    public int formatVersion = FlowOptions.FORMAT_VERSION.defaultValue();

    /**
     * In-job maintenance of the target table (docs/semantics.md M1, M2: compaction, expiry,
     * manifest rewrite, orphan removal), from the {@code maintenance*} options; off by default.
     */
    public TableMaintenanceOptions maintenance = TableMaintenanceOptions.off();

    /**
     * Sets every option that {@code r} holds from a place other than its default (a flag, {@code
     * --set}, the definition, a table property) onto this flow.
     *
     * @param r options of {@link FlowOptions#SET}
     * @return this flow
     */
    public FlowConfig apply(ResolvedOptions r) {
        for (org.apache.flink.configuration.ConfigOption<?> o : r.optionSet().options().values()) {
            if (r.isSet(o)) {
                optionsGiven.add(o.key());
            }
        }
        if (r.isSet(FlowOptions.TABLE)) {
            table = r.get(FlowOptions.TABLE);
        }
        if (r.isSet(FlowOptions.TARGET)) {
            target = r.get(FlowOptions.TARGET);
        }
        if (r.isSet(FlowOptions.NAME)) {
            name = r.get(FlowOptions.NAME);
        }
        if (r.isSet(FlowOptions.KEYS)) {
            keys = r.get(FlowOptions.KEYS);
        }
        if (r.isSet(FlowOptions.SEQUENCE_BY)) {
            sequenceBy = r.get(FlowOptions.SEQUENCE_BY);
        }
        if (r.isSet(FlowOptions.FROM_SNAPSHOT)) {
            fromSnapshot = r.get(FlowOptions.FROM_SNAPSHOT);
        }
        if (r.isSet(FlowOptions.FROM_SNAPSHOT_TABLE)) {
            fromSnapshotTable = r.get(FlowOptions.FROM_SNAPSHOT_TABLE);
        }
        if (r.isSet(FlowOptions.SNAPSHOT_VERSIONS)) {
            snapshotVersions = r.get(FlowOptions.SNAPSHOT_VERSIONS);
        }
        if (r.isSet(FlowOptions.REPLACE_USING)) {
            replaceUsing = r.get(FlowOptions.REPLACE_USING);
        }
        if (r.isSet(FlowOptions.REPLACE_WHERE)) {
            replaceWhere = r.get(FlowOptions.REPLACE_WHERE);
            replaceWherePosition = null; // the flows file sets it after this
        }
        if (r.isSet(FlowOptions.QUERY)) {
            query = r.get(FlowOptions.QUERY);
            queryPosition = null;
        }
        if (r.isSet(FlowOptions.SCD_TYPE)) {
            scdType = r.get(FlowOptions.SCD_TYPE);
        }
        if (r.isSet(FlowOptions.APPEND_ONLY)) {
            appendOnly = r.get(FlowOptions.APPEND_ONLY);
        }
        if (r.isSet(FlowOptions.COLUMNS)) {
            columns = FlowOptions.selection(r.get(FlowOptions.COLUMNS), "columns");
        }
        if (r.isSet(FlowOptions.IGNORE_NULL_UPDATES)) {
            String v = r.get(FlowOptions.IGNORE_NULL_UPDATES);
            ignoreNullUpdates =
                    v.equals("false")
                            ? null
                            : v.equals("true")
                                    ? ColumnSelection.all()
                                    : FlowOptions.selection(v, "ignore-null-updates");
        }
        if (r.isSet(FlowOptions.TRACK_HISTORY_ON)) {
            trackHistoryOn =
                    FlowOptions.selection(r.get(FlowOptions.TRACK_HISTORY_ON), "track-history-on");
        }
        if (r.isSet(FlowOptions.SCHEMA)) {
            schema = r.get(FlowOptions.SCHEMA);
        }
        if (r.isSet(FlowOptions.SCHEMA_HINTS)) {
            schemaHints = r.get(FlowOptions.SCHEMA_HINTS);
        }
        if (r.isSet(FlowOptions.SELECT)) {
            select = r.get(FlowOptions.SELECT);
        }
        if (r.isSet(FlowOptions.SELECT_WHERE)) {
            selectWhere = r.get(FlowOptions.SELECT_WHERE);
        }
        if (r.isSet(FlowOptions.TARGET_COLUMNS)) {
            targetColumns = r.get(FlowOptions.TARGET_COLUMNS);
        }
        if (r.isSet(FlowOptions.PARTITIONED_BY)) {
            partitionedBy = r.get(FlowOptions.PARTITIONED_BY);
        }
        if (r.isSet(FlowOptions.APPLY_AS_DELETE_WHEN)) {
            applyAsDeleteWhen = r.get(FlowOptions.APPLY_AS_DELETE_WHEN);
        }
        if (r.isSet(FlowOptions.APPLY_AS_TRUNCATE_WHEN)) {
            applyAsTruncateWhen = r.get(FlowOptions.APPLY_AS_TRUNCATE_WHEN);
        }
        if (r.isSet(FlowOptions.EXPECTATIONS)) {
            List<Expectation> list = new ArrayList<>();
            List<Map<String, String>> items = r.get(FlowOptions.EXPECTATIONS);
            for (int i = 0; i < items.size(); i++) {
                list.add(FlowOptions.expectation(items.get(i), i + 1));
            }
            expectations = list;
        }
        if (r.isSet(FlowOptions.TRUNCATE)) {
            truncate = r.get(FlowOptions.TRUNCATE);
        }
        if (r.isSet(FlowOptions.TOMBSTONE_GC_THRESHOLD)) {
            tombstoneGcThreshold = r.get(FlowOptions.TOMBSTONE_GC_THRESHOLD);
        }
        if (r.isSet(FlowOptions.APPLY_BUFFER_KEYS)) {
            applyBufferKeys = r.get(FlowOptions.APPLY_BUFFER_KEYS);
            applyBufferKeysSet = true;
        }
        if (r.isSet(FlowOptions.ON_INVALID_RECORD)) {
            onInvalidRecord = r.get(FlowOptions.ON_INVALID_RECORD);
        }
        if (r.isSet(FlowOptions.ON_SCHEMA_CHANGE)) {
            onSchemaChange = r.get(FlowOptions.ON_SCHEMA_CHANGE);
        }
        if (r.isSet(FlowOptions.FORMAT)) {
            format = r.get(FlowOptions.FORMAT);
        }
        if (r.isSet(FlowOptions.FORMAT_VERSION)) {
            formatVersion = r.get(FlowOptions.FORMAT_VERSION);
            formatVersionSet = true;
        }
        if (r.isSet(FlowOptions.UNAVAILABLE_VALUE_PLACEHOLDER)) {
            unavailablePlaceholder = r.get(FlowOptions.UNAVAILABLE_VALUE_PLACEHOLDER);
        }
        TableMaintenanceOptions m = maintenance;
        maintenance =
                TableMaintenanceOptions.builder()
                        .enabled(pick(r, FlowOptions.MAINTENANCE, m.enabled()))
                        .commitCount(pick(r, FlowOptions.MAINTENANCE_COMMIT_COUNT, m.commitCount()))
                        .dataFileCount(
                                pick(r, FlowOptions.MAINTENANCE_DATA_FILE_COUNT, m.dataFileCount()))
                        .deleteFileCount(
                                pick(
                                        r,
                                        FlowOptions.MAINTENANCE_DELETE_FILE_COUNT,
                                        m.deleteFileCount()))
                        .interval(pick(r, FlowOptions.MAINTENANCE_INTERVAL, m.interval()))
                        .rateLimit(pick(r, FlowOptions.MAINTENANCE_RATE_LIMIT, m.rateLimit()))
                        .deleteFileThreshold(
                                pick(
                                        r,
                                        FlowOptions.MAINTENANCE_DELETE_FILE_THRESHOLD,
                                        m.deleteFileThreshold()))
                        .lockJdbcUri(
                                pick(r, FlowOptions.MAINTENANCE_LOCK_JDBC_URI, m.lockJdbcUri()))
                        .expireOlderThan(
                                pick(
                                        r,
                                        FlowOptions.MAINTENANCE_EXPIRE_OLDER_THAN,
                                        m.expireOlderThan()))
                        .retainLast(pick(r, FlowOptions.MAINTENANCE_RETAIN_LAST, m.retainLast()))
                        .expireInterval(
                                pick(
                                        r,
                                        FlowOptions.MAINTENANCE_EXPIRE_INTERVAL,
                                        m.expireInterval()))
                        .manifestCount(
                                pick(r, FlowOptions.MAINTENANCE_MANIFEST_COUNT, m.manifestCount()))
                        .orphansOlderThan(
                                pick(
                                        r,
                                        FlowOptions.MAINTENANCE_ORPHANS_OLDER_THAN,
                                        m.orphansOlderThan()))
                        .orphansInterval(
                                pick(
                                        r,
                                        FlowOptions.MAINTENANCE_ORPHANS_INTERVAL,
                                        m.orphansInterval()))
                        .build();
        return this;
    }

    /**
     * The in-job maintenance given by {@code values}, keyed by {@code maintenance*} flow options
     * (e.g. {@code maintenance}, {@code maintenance-expire-older-than}), resolved and checked as a
     * flows-file entry's — the Gold jobs' form of the same options (docs/semantics.md M1, M2).
     *
     * @param label names the place in errors
     * @param switchOn how the caller's user turns maintenance on, for the error when {@code values}
     *     tune it without turning it on (e.g. {@code "add --maintenance"}); null when {@code
     *     values} are only some of the options (that rule is then not checked)
     * @throws IllegalArgumentException for a key that is not a {@code maintenance*} option, a value
     *     its parser refuses, options that do not go together, or {@code maintenance-*} options
     *     without {@code maintenance}, naming {@code label}
     */
    public static TableMaintenanceOptions maintenanceOptions(
            Map<String, ?> values, String label, @Nullable String switchOn) {
        for (String key : values.keySet()) {
            if (!key.startsWith(FlowOptions.MAINTENANCE.key())
                    || !FlowOptions.SET.keys().contains(key)) {
                java.util.TreeSet<String> known = new java.util.TreeSet<>();
                for (String k : FlowOptions.SET.keys()) {
                    if (k.startsWith(FlowOptions.MAINTENANCE.key())) {
                        known.add(k);
                    }
                }
                throw new IllegalArgumentException(
                        label
                                + ": unknown maintenance option '"
                                + key
                                + "' (known: "
                                + known
                                + ")");
            }
        }
        TableMaintenanceOptions options;
        try {
            OptionLayer given = OptionLayer.of(OptionSource.DEFINITION, label, values);
            options =
                    new FlowConfig()
                            .apply(OptionsResolver.resolve(FlowOptions.SET, List.of(given)))
                            .maintenance;
        } catch (IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().startsWith(label)) {
                throw e;
            }
            throw new IllegalArgumentException(label + ": " + e.getMessage(), e);
        }
        String unused = switchOn == null ? null : maintenanceTuningWithoutSwitch(values.keySet());
        if (unused != null) {
            throw new IllegalArgumentException(label + ": " + unused + "; " + switchOn);
        }
        return options;
    }

    private static <T> T pick(
            ResolvedOptions r, org.apache.flink.configuration.ConfigOption<T> o, T current) {
        return r.isSet(o) ? r.get(o) : current;
    }

    /**
     * A6: a snapshot flow takes its order from the snapshot versions and its deletes from the diff,
     * so the options of change records do not apply.
     */
    private void validateFromSnapshot() {
        List<String> refused = new ArrayList<>();
        if (!sequenceBy.isEmpty()) {
            refused.add(FlowOptions.SEQUENCE_BY.key());
        }
        if (appendOnly) {
            refused.add(FlowOptions.APPEND_ONLY.key());
        }
        if (applyAsDeleteWhen != null) {
            refused.add(FlowOptions.APPLY_AS_DELETE_WHEN.key());
        }
        if (applyAsTruncateWhen != null) {
            refused.add(FlowOptions.APPLY_AS_TRUNCATE_WHEN.key());
        }
        if (truncate) {
            refused.add(FlowOptions.TRUNCATE.key());
        }
        if (!expectations.isEmpty()) {
            refused.add(FlowOptions.EXPECTATIONS.key()); // not implemented for snapshots yet (S8)
        }
        if (ignoreNullUpdates != null) {
            refused.add(FlowOptions.IGNORE_NULL_UPDATES.key());
        }
        if (fromSnapshot != null && fromSnapshotTable != null) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': give either 'from-snapshot' (a folder of snapshot files) or"
                            + " 'from-snapshot-table' (an Iceberg table), not both");
        }
        String option =
                fromSnapshot != null
                        ? FlowOptions.FROM_SNAPSHOT.key()
                        : FlowOptions.FROM_SNAPSHOT_TABLE.key();
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': '"
                            + option
                            + "' takes no "
                            + refused
                            + " (the snapshot version orders the changes and absent keys are the"
                            + " deletes, docs/semantics.md A6)");
        }
        if (fromSnapshotTable == null
                && !snapshotVersions.equals(FlowOptions.SNAPSHOT_VERSIONS.defaultValue())) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': '"
                            + FlowOptions.SNAPSHOT_VERSIONS.key()
                            + "' applies to 'from-snapshot-table' flows only");
        }
        if (fromSnapshot != null && schema == null) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'from-snapshot' needs 'schema' (the snapshot's columns as a Flink"
                            + " DDL column list, e.g. \"id BIGINT, city STRING\")");
        }
    }

    /** Whether this is an AUTO CDC FROM SNAPSHOT flow (A6): a snapshot folder or table. */
    public boolean isFromSnapshot() {
        return fromSnapshot != null || fromSnapshotTable != null;
    }

    /**
     * Whether this append-only flow has a query other than every source row as it is: a {@link
     * #select} list, a {@link #selectWhere} predicate or {@link #targetColumns} to cast to
     * (docs/semantics.md S1).
     */
    public boolean hasQuery() {
        return select != null || selectWhere != null || targetColumns != null;
    }

    /** Whether this is a REPLACE USING flow (S5). */
    public boolean isReplaceUsing() {
        return !replaceUsing.isEmpty();
    }

    /**
     * S5: a REPLACE USING flow replaces rows per key value by sequence; the options of AUTO CDC do
     * not apply, and SEQUENCE BY is required.
     */
    private void validateReplaceUsing() {
        List<String> refused = new ArrayList<>();
        if (!keys.isEmpty()) {
            refused.add(FlowOptions.KEYS.key());
        }
        if (appendOnly) {
            refused.add(FlowOptions.APPEND_ONLY.key());
        }
        if (fromSnapshot != null) {
            refused.add(FlowOptions.FROM_SNAPSHOT.key());
        }
        if (fromSnapshotTable != null) {
            refused.add(FlowOptions.FROM_SNAPSHOT_TABLE.key());
        }
        if (scdType != FlowOptions.SCD_TYPE.defaultValue()) {
            refused.add(FlowOptions.SCD_TYPE.key());
        }
        if (!columns.equals(ColumnSelection.all())) {
            refused.add(FlowOptions.COLUMNS.key());
        }
        if (ignoreNullUpdates != null) {
            refused.add(FlowOptions.IGNORE_NULL_UPDATES.key());
        }
        if (trackHistoryOn != null) {
            refused.add(FlowOptions.TRACK_HISTORY_ON.key());
        }
        if (applyAsDeleteWhen != null) {
            refused.add(FlowOptions.APPLY_AS_DELETE_WHEN.key());
        }
        if (applyAsTruncateWhen != null) {
            refused.add(FlowOptions.APPLY_AS_TRUNCATE_WHEN.key());
        }
        if (!expectations.isEmpty()) {
            refused.add(FlowOptions.EXPECTATIONS.key());
        }
        if (truncate) {
            refused.add(FlowOptions.TRUNCATE.key());
        }
        if (applyBufferKeysSet) {
            refused.add(FlowOptions.APPLY_BUFFER_KEYS.key());
        }
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'replace-using' takes no "
                            + refused
                            + " (its key columns are 'replace-using', and every incoming column is"
                            + " stored, docs/semantics.md S5)");
        }
        if (sequenceBy.isEmpty()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'replace-using' needs 'sequence-by' (the column that orders the"
                            + " partial snapshots of a key, docs/semantics.md S5)");
        }
    }

    /** Whether this is a REPLACE WHERE flow (S4): its slice recomputed by a query. */
    public boolean isReplaceWhere() {
        return replaceWhere != null;
    }

    /** The options a REPLACE WHERE flow takes (S4); every other given option is refused. */
    public static final Set<String> REPLACE_WHERE_OPTIONS =
            Set.of(
                    FlowOptions.REPLACE_WHERE.key(),
                    FlowOptions.QUERY.key(),
                    FlowOptions.TARGET.key(),
                    FlowOptions.NAME.key(),
                    FlowOptions.SCHEMA.key(),
                    FlowOptions.PARTITIONED_BY.key(),
                    FlowOptions.FORMAT_VERSION.key());

    /**
     * S4: a REPLACE WHERE flow reads the tables its query names and replaces a slice of its target
     * in one batch job per refresh, so no option of a flow of records applies; it needs a target
     * and a query.
     */
    private void validateReplaceWhere() {
        String id = name != null ? name : target != null ? targetName() : "?";
        List<String> refused = new ArrayList<>();
        for (String k : optionsGiven) {
            if (!REPLACE_WHERE_OPTIONS.contains(k)) {
                refused.add(k);
            }
        }
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + id
                            + "': 'replace-where' takes no "
                            + refused
                            + " (its query names the tables it reads and every refresh recomputes"
                            + " the slice in one batch job, docs/semantics.md S4; it takes "
                            + new TreeSet<>(REPLACE_WHERE_OPTIONS)
                            + ")");
        }
        if (target == null || target.isBlank()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + id
                            + "': 'replace-where' needs 'target' (the table whose slice it"
                            + " replaces, [namespace.]name)");
        }
        if (query == null) {
            throw new IllegalArgumentException(
                    "flow '"
                            + id
                            + "': 'replace-where' needs 'query' (a bounded Flink SQL query over"
                            + " the catalog's tables whose columns match the target's by name,"
                            + " docs/semantics.md S4)");
        }
        if (formatVersion != 2 && formatVersion != 3) {
            throw new IllegalArgumentException(
                    "flow '" + id + "': 'format-version' must be 2 or 3, got " + formatVersion);
        }
    }

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
        if (isReplaceWhere()) {
            validateReplaceWhere();
            return;
        }
        if (query != null) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'query' is the query of a REPLACE WHERE flow; add 'replace-where:"
                            + " <predicate>' (the slice of the target each refresh replaces,"
                            + " docs/semantics.md S4)");
        }
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
        if (targetColumns != null && !appendOnly) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'target-columns' declares the columns of an append-only flow's"
                            + " query; an AUTO CDC flow declares its columns with 'schema'"
                            + " (docs/semantics.md S1)");
        }
        if (hasQuery() && !appendOnly) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'select' and 'select-where' shape the rows of an append-only"
                            + " flow; set 'append-only: true' (docs/semantics.md S1)");
        }
        if (hasQuery() && onSchemaChange.equalsIgnoreCase("add-columns")) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'on-schema-change: add-columns' adds source columns to the"
                            + " table, but a flow with 'select' or 'select-where' writes the"
                            + " columns of its select list (docs/semantics.md S1)");
        }
        if (isReplaceUsing()) {
            validateReplaceUsing();
        }
        if (!appendOnly && keys.isEmpty() && !isReplaceUsing()) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': 'keys' is required (or set 'append-only: true' for a key-less table)");
        }
        if (isFromSnapshot()) {
            validateFromSnapshot();
        } else if (!snapshotVersions.equals(FlowOptions.SNAPSHOT_VERSIONS.defaultValue())) {
            throw new IllegalArgumentException(
                    "flow '"
                            + flowName()
                            + "': '"
                            + FlowOptions.SNAPSHOT_VERSIONS.key()
                            + "' applies to 'from-snapshot-table' flows only");
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
        String unused = maintenanceTuningWithoutSwitch(optionsGiven);
        if (unused != null) {
            throw new IllegalArgumentException(
                    "flow '" + flowName() + "': " + unused + "; set 'maintenance' to true");
        }
    }

    /**
     * The complaint about {@code maintenance-*} options given without the {@code maintenance}
     * switch (off by default, docs/semantics.md M1), which would otherwise have no effect at all;
     * null when there is none. {@code maintenance: false} given with them is accepted: maintenance
     * switched off on purpose keeps its settings for when it is on again.
     *
     * @param given the option keys given (not defaulted)
     */
    @Nullable
    static String maintenanceTuningWithoutSwitch(Collection<String> given) {
        String maintenance = FlowOptions.MAINTENANCE.key();
        if (given.contains(maintenance)) {
            return null;
        }
        List<String> tuning = new ArrayList<>();
        for (String k : given) {
            if (k.startsWith(maintenance + "-")) {
                tuning.add(k);
            }
        }
        Collections.sort(tuning);
        return tuning.isEmpty()
                ? null
                : tuning.stream().map(k -> "'" + k + "'").collect(Collectors.joining(", "))
                        + (tuning.size() == 1 ? " tunes" : " tune")
                        + " in-job maintenance, which is off unless turned on"
                        + " (docs/semantics.md M1)";
    }
}
