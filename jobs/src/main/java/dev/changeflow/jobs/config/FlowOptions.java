package dev.changeflow.jobs.config;

import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.operators.Expectation;
import dev.changeflow.operators.ScdType;
import dev.changeflow.operators.options.OptionParser;
import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.operators.options.OptionSet;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.changes.SchemaSampler;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.types.logical.RowType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.apache.flink.configuration.ConfigOptions.key;

/**
 * The options of one flow — an entry of a flows file's {@code flows:}, a {@code --set
 * TABLE.OPTION=VALUE}, the single-table flags of {@code ingest} — declared once: each a {@link
 * ConfigOption} with its type, default and description, and the parser of its raw values in {@link
 * #SET}. The README's options table lists exactly these (a test compares them, defaults included).
 * Rules: docs/semantics.md A1 (definition), A3/A4 (SCD types), A5 (formats, quarantine).
 *
 * <p>To add a flow option: declare it here, add it to {@link #SET}, and read it in {@link
 * FlowConfig#apply}.
 */
public final class FlowOptions {
    private FlowOptions() {}

    public static final ConfigOption<String> TABLE =
            key("table")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Source table: Debezium source.table, or the topic's last segment.");

    public static final ConfigOption<String> TARGET =
            key("target")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Target Iceberg table, name or namespace.name; default: the source table in the"
                                    + " flows namespace.");

    public static final ConfigOption<String> NAME =
            key("name")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Flow id (operator uids, metrics, quarantine rows); default: the target name.");

    public static final ConfigOption<List<String>> KEYS =
            key("keys")
                    .stringType()
                    .asList()
                    .noDefaultValue()
                    .withDescription("KEYS; required unless append-only.");

    public static final ConfigOption<List<String>> SEQUENCE_BY =
            key("sequence-by")
                    .stringType()
                    .asList()
                    .noDefaultValue()
                    .withDescription(
                            "SEQUENCE BY: a column, [a, b] or STRUCT(a, b); default for Debezium: the"
                                    + " connector's log position.");

    public static final ConfigOption<String> FROM_SNAPSHOT =
            key("from-snapshot")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "AUTO CDC FROM SNAPSHOT: a folder of snapshot files <name>_<n>.csv or .json, one"
                                    + " per version n; each is compared with the previous one (A6).");

    public static final ConfigOption<String> FROM_SNAPSHOT_TABLE =
            key("from-snapshot-table")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "AUTO CDC FROM SNAPSHOT: an Iceberg table [namespace.]name of the catalog;"
                                    + " each of its versions is a snapshot, compared with the previous"
                                    + " one (A6).");

    public static final ConfigOption<String> SNAPSHOT_VERSIONS =
            key("snapshot-versions")
                    .stringType()
                    .defaultValue("all")
                    .withDescription(
                            "With from-snapshot-table: all (every retained version of the table, in"
                                    + " order) or latest (only the current version at each run)"
                                    + " (A6).");

    public static final ConfigOption<List<String>> REPLACE_USING =
            key("replace-using")
                    .stringType()
                    .asList()
                    .noDefaultValue()
                    .withDescription(
                            "REPLACE USING (S5): the key columns; per key value the rows with the highest"
                                    + " sequence-by replace the target's rows of that key. No keys.");

    public static final ConfigOption<String> REPLACE_WHERE =
            key("replace-where")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "REPLACE WHERE (S4): a deterministic Flink SQL boolean over the target's columns;"
                                    + " each refresh replaces the target's rows it selects by the"
                                    + " query's rows it selects. Needs target and query.");

    public static final ConfigOption<String> QUERY =
            key("query")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "REPLACE WHERE (S4): a bounded Flink SQL query over the catalog's tables"
                                    + " (catalog changeflow), its columns matched to the target's by"
                                    + " name.");

    public static final ConfigOption<ScdType> SCD_TYPE =
            key("scd-type")
                    .enumType(ScdType.class)
                    .defaultValue(ScdType.TYPE_1)
                    .withDescription("STORED AS SCD TYPE: 1 (current rows) or 2 (history).");

    public static final ConfigOption<Boolean> APPEND_ONLY =
            key("append-only")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription("Key-less source: every record is appended.");

    public static final ConfigOption<String> COLUMNS =
            key("columns")
                    .stringType()
                    .defaultValue("*")
                    .withDescription("COLUMNS: [a, b], '*' or '* EXCEPT (a, b)'.");

    public static final ConfigOption<String> IGNORE_NULL_UPDATES =
            key("ignore-null-updates")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "IGNORE NULL UPDATES: true, [a, b] or '* EXCEPT (a, b)'; off by default.");

    public static final ConfigOption<String> TRACK_HISTORY_ON =
            key("track-history-on")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("TRACK HISTORY ON (SCD type 2); default: every column.");

    public static final ConfigOption<String> SCHEMA =
            key("schema")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Declared columns as a Flink DDL column list; default: from the records.");

    /**
     * {@code read_files(..., schemaHints => 'col TYPE, ...')} (docs/semantics.md S2): the types of
     * the named source columns, over the sampled or declared ones; a hinted column the records lack
     * is added (nullable). A value that does not fit its hinted type is an invalid record ({@code
     * TYPE_MISMATCH}, quarantined by default).
     */
    public static final ConfigOption<String> SCHEMA_HINTS =
            key("schema-hints")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Types of some source columns as a Flink DDL column list, over the"
                                    + " sampled or declared ones; default: none.");

    public static final ConfigOption<String> SELECT =
            key("select")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The select list of an append-only flow (docs/semantics.md S1): Flink"
                                    + " SQL over the source's columns, evaluated by Flink per row;"
                                    + " the target's columns are its names and types. Default:"
                                    + " every source column.");

    public static final ConfigOption<String> TARGET_COLUMNS =
            key("target-columns")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The declared columns of an append-only flow's target"
                                    + " (docs/semantics.md S1), a Flink DDL column list with"
                                    + " optional NOT NULL and COMMENT '...': the query's columns"
                                    + " (select list, or every source column) must be these by"
                                    + " name, each cast to its declared type; NOT NULL makes the"
                                    + " Iceberg field required, COMMENT its doc. Default: the"
                                    + " query's columns.");

    public static final ConfigOption<String> SELECT_WHERE =
            key("select-where")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The WHERE predicate of an append-only flow (docs/semantics.md S1):"
                                    + " a Flink SQL boolean over the source's columns; rows for"
                                    + " which it is not TRUE are not appended.");

    public static final ConfigOption<List<String>> PARTITIONED_BY =
            key("partitioned-by")
                    .stringType()
                    .asList()
                    .noDefaultValue()
                    .withDescription("Iceberg partition transforms of a new target table.");

    public static final ConfigOption<String> APPLY_AS_DELETE_WHEN =
            key("apply-as-delete-when")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("APPLY AS DELETE WHEN: a Flink SQL predicate.");

    public static final ConfigOption<String> APPLY_AS_TRUNCATE_WHEN =
            key("apply-as-truncate-when")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("APPLY AS TRUNCATE WHEN: a Flink SQL predicate (SCD type 1).");

    public static final ConfigOption<List<Map<String, String>>> EXPECTATIONS =
            key("expectations")
                    .mapType()
                    .asList()
                    .noDefaultValue()
                    .withDescription(
                            "Data-quality expectations (docs/semantics.md S8): a list of {name,"
                                    + " expect: Flink SQL boolean over the source columns,"
                                    + " on-violation: keep (default) | drop-row | fail-update}.");

    public static final ConfigOption<Boolean> TRUNCATE =
            key("truncate")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Apply Debezium truncate records (op = t); otherwise they are quarantined.");

    public static final ConfigOption<Duration> TOMBSTONE_GC_THRESHOLD =
            key("tombstone-gc-threshold")
                    .durationType()
                    .defaultValue(Duration.ofDays(2))
                    .withDescription(
                            "How long a delete's tombstone is kept (processing time, A3).");

    public static final ConfigOption<Integer> APPLY_BUFFER_KEYS =
            key("apply-buffer-keys")
                    .intType()
                    .defaultValue(AutoCdcSpec.DEFAULT_APPLY_BUFFER_KEYS)
                    .withDescription(
                            "Keys per subtask the AUTO CDC operator keeps in memory between checkpoints;"
                                    + " 0 applies record by record.");

    public static final ConfigOption<String> ON_INVALID_RECORD =
            key("on-invalid-record")
                    .stringType()
                    .defaultValue("quarantine")
                    .withDescription("quarantine or fail (A5).");

    public static final ConfigOption<String> ON_SCHEMA_CHANGE =
            key("on-schema-change")
                    .stringType()
                    .defaultValue("fail")
                    .withDescription("fail, quarantine or add-columns (A5).");

    public static final ConfigOption<String> FORMAT =
            key("format")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "debezium-json, json, csv or parquet; default: the flows file's format.");

    public static final ConfigOption<Integer> FORMAT_VERSION =
            key("format-version")
                    .intType()
                    .defaultValue(2)
                    .withDescription("Iceberg format version of a new table: 2 or 3.");

    public static final ConfigOption<String> UNAVAILABLE_VALUE_PLACEHOLDER =
            key("unavailable-value-placeholder")
                    .stringType()
                    .defaultValue(DecoderFlow.DEFAULT_UNAVAILABLE_PLACEHOLDER)
                    .withDescription(
                            "Debezium's unavailable.value.placeholder (TOAST): such a column keeps the"
                                    + " stored value (A3, A4).");

    public static final ConfigOption<Boolean> MAINTENANCE =
            key("maintenance")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Maintain the target table inside the ingest job: compaction,"
                                    + " consumer-aware snapshot expiry, manifest rewrite, orphan-file"
                                    + " removal (docs/semantics.md M1, M2).");

    public static final ConfigOption<Integer> MAINTENANCE_COMMIT_COUNT =
            key("maintenance-commit-count")
                    .intType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_COMMIT_COUNT)
                    .withDescription("Commits since the last compaction that start one; 0 = off.");

    public static final ConfigOption<Integer> MAINTENANCE_DATA_FILE_COUNT =
            key("maintenance-data-file-count")
                    .intType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_DATA_FILE_COUNT)
                    .withDescription(
                            "New data files since the last compaction that start one; 0 = off.");

    public static final ConfigOption<Integer> MAINTENANCE_DELETE_FILE_COUNT =
            key("maintenance-delete-file-count")
                    .intType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_DELETE_FILE_COUNT)
                    .withDescription(
                            "New equality (or position) delete files since the last compaction that"
                                    + " start one; 0 = off.");

    public static final ConfigOption<Duration> MAINTENANCE_INTERVAL =
            key("maintenance-interval")
                    .durationType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_INTERVAL)
                    .withDescription("Time since the last compaction that starts one; 0 = off.");

    public static final ConfigOption<Duration> MAINTENANCE_RATE_LIMIT =
            key("maintenance-rate-limit")
                    .durationType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_RATE_LIMIT)
                    .withDescription(
                            "Least time between two compactions of the table (and how often it is"
                                    + " checked).");

    public static final ConfigOption<Integer> MAINTENANCE_DELETE_FILE_THRESHOLD =
            key("maintenance-delete-file-threshold")
                    .intType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_DELETE_FILE_THRESHOLD)
                    .withDescription(
                            "Delete files applying to a data file that make a compaction rewrite it"
                                    + " whatever its size.");

    public static final ConfigOption<String> MAINTENANCE_LOCK_JDBC_URI =
            key("maintenance-lock-jdbc-uri")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "JDBC database of the maintenance lock; default: a SQLite file in a"
                                    + " local warehouse.");

    public static final ConfigOption<Duration> MAINTENANCE_EXPIRE_OLDER_THAN =
            key("maintenance-expire-older-than")
                    .durationType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_EXPIRE_OLDER_THAN)
                    .withDescription(
                            "In-job expiry of snapshots older than this, except what live consumers"
                                    + " and Flink committers need (F7); 0 = expiry off.");

    public static final ConfigOption<Integer> MAINTENANCE_RETAIN_LAST =
            key("maintenance-retain-last")
                    .intType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_RETAIN_LAST)
                    .withDescription(
                            "Snapshots the in-job expiry always keeps; 0 = the table's"
                                    + " history.expire.min-snapshots-to-keep.");

    public static final ConfigOption<Duration> MAINTENANCE_EXPIRE_INTERVAL =
            key("maintenance-expire-interval")
                    .durationType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_EXPIRE_INTERVAL)
                    .withDescription(
                            "How often the in-job expiry and manifest check run; 0 = neither.");

    public static final ConfigOption<Integer> MAINTENANCE_MANIFEST_COUNT =
            key("maintenance-manifest-count")
                    .intType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_MANIFEST_COUNT)
                    .withDescription(
                            "Data manifests above which the expiry run rewrites them; 0 = off.");

    public static final ConfigOption<Duration> MAINTENANCE_ORPHANS_OLDER_THAN =
            key("maintenance-orphans-older-than")
                    .durationType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_ORPHANS_OLDER_THAN)
                    .withDescription(
                            "In-job removal of unreferenced data files older than this (at least"
                                    + " 1h); 0 = off.");

    public static final ConfigOption<Duration> MAINTENANCE_ORPHANS_INTERVAL =
            key("maintenance-orphans-interval")
                    .durationType()
                    .defaultValue(TableMaintenanceOptions.DEFAULT_ORPHANS_INTERVAL)
                    .withDescription("How often the in-job orphan removal runs; 0 = off.");

    /** Every flow option with the parser of its raw values, in the README's order. */
    public static final OptionSet SET =
            OptionSet.builder("flow")
                    .add(TABLE, OptionParsers.text(TABLE.key()))
                    .add(TARGET, OptionParsers.text(TARGET.key()))
                    .add(NAME, OptionParsers.text(NAME.key()))
                    .add(KEYS, OptionParsers.list())
                    .add(SEQUENCE_BY, FlowOptions::sequence)
                    .add(FROM_SNAPSHOT, OptionParsers.text(FROM_SNAPSHOT.key()))
                    .add(FROM_SNAPSHOT_TABLE, OptionParsers.text(FROM_SNAPSHOT_TABLE.key()))
                    .add(SNAPSHOT_VERSIONS, FlowOptions::snapshotVersionsText)
                    .add(REPLACE_USING, OptionParsers.list())
                    .add(REPLACE_WHERE, nonBlank(REPLACE_WHERE.key()))
                    .add(QUERY, nonBlank(QUERY.key()))
                    .add(SCD_TYPE, raw -> ScdType.parse(String.valueOf(raw)))
                    .add(APPEND_ONLY, OptionParsers.bool(APPEND_ONLY.key()))
                    .add(COLUMNS, selectionText(COLUMNS.key()))
                    .add(IGNORE_NULL_UPDATES, FlowOptions::ignoreNullUpdatesText)
                    .add(TRACK_HISTORY_ON, selectionText(TRACK_HISTORY_ON.key()))
                    .add(SCHEMA, OptionParsers.text(SCHEMA.key()))
                    .add(SCHEMA_HINTS, FlowOptions::schemaHints)
                    .add(SELECT, OptionParsers.text(SELECT.key()))
                    .add(SELECT_WHERE, OptionParsers.text(SELECT_WHERE.key()))
                    .add(TARGET_COLUMNS, OptionParsers.text(TARGET_COLUMNS.key()))
                    .add(PARTITIONED_BY, OptionParsers.list())
                    .add(APPLY_AS_DELETE_WHEN, OptionParsers.text(APPLY_AS_DELETE_WHEN.key()))
                    .add(APPLY_AS_TRUNCATE_WHEN, OptionParsers.text(APPLY_AS_TRUNCATE_WHEN.key()))
                    .add(EXPECTATIONS, FlowOptions::expectations)
                    .add(TRUNCATE, OptionParsers.bool(TRUNCATE.key()))
                    .add(
                            TOMBSTONE_GC_THRESHOLD,
                            OptionParsers.duration(TOMBSTONE_GC_THRESHOLD.key()))
                    .add(
                            APPLY_BUFFER_KEYS,
                            OptionParsers.intRange(
                                    APPLY_BUFFER_KEYS.key(),
                                    0,
                                    "no buffering",
                                    Integer.MAX_VALUE,
                                    "keys per subtask"))
                    .add(ON_INVALID_RECORD, OptionParsers.text(ON_INVALID_RECORD.key()))
                    .add(ON_SCHEMA_CHANGE, OptionParsers.text(ON_SCHEMA_CHANGE.key()))
                    .add(FORMAT, format(FORMAT.key()))
                    .add(FORMAT_VERSION, FlowOptions::formatVersion)
                    .add(
                            UNAVAILABLE_VALUE_PLACEHOLDER,
                            OptionParsers.text(UNAVAILABLE_VALUE_PLACEHOLDER.key()))
                    .add(MAINTENANCE, OptionParsers.bool(MAINTENANCE.key()))
                    .add(MAINTENANCE_COMMIT_COUNT, count(MAINTENANCE_COMMIT_COUNT.key(), "commits"))
                    .add(
                            MAINTENANCE_DATA_FILE_COUNT,
                            count(MAINTENANCE_DATA_FILE_COUNT.key(), "data files"))
                    .add(
                            MAINTENANCE_DELETE_FILE_COUNT,
                            count(MAINTENANCE_DELETE_FILE_COUNT.key(), "delete files"))
                    .add(MAINTENANCE_INTERVAL, OptionParsers.duration(MAINTENANCE_INTERVAL.key()))
                    .add(MAINTENANCE_RATE_LIMIT, positiveDuration(MAINTENANCE_RATE_LIMIT.key()))
                    .add(
                            MAINTENANCE_DELETE_FILE_THRESHOLD,
                            OptionParsers.intRange(
                                    MAINTENANCE_DELETE_FILE_THRESHOLD.key(),
                                    1,
                                    Integer.MAX_VALUE,
                                    "delete files"))
                    .add(MAINTENANCE_LOCK_JDBC_URI, FlowOptions::jdbcUri)
                    .add(
                            MAINTENANCE_EXPIRE_OLDER_THAN,
                            OptionParsers.duration(MAINTENANCE_EXPIRE_OLDER_THAN.key()))
                    .add(
                            MAINTENANCE_RETAIN_LAST,
                            OptionParsers.intRange(
                                    MAINTENANCE_RETAIN_LAST.key(),
                                    0,
                                    "the table's setting",
                                    Integer.MAX_VALUE,
                                    "snapshots"))
                    .add(
                            MAINTENANCE_EXPIRE_INTERVAL,
                            OptionParsers.duration(MAINTENANCE_EXPIRE_INTERVAL.key()))
                    .add(
                            MAINTENANCE_MANIFEST_COUNT,
                            count(MAINTENANCE_MANIFEST_COUNT.key(), "data manifests"))
                    .add(
                            MAINTENANCE_ORPHANS_OLDER_THAN,
                            orphanAge(MAINTENANCE_ORPHANS_OLDER_THAN.key()))
                    .add(
                            MAINTENANCE_ORPHANS_INTERVAL,
                            OptionParsers.duration(MAINTENANCE_ORPHANS_INTERVAL.key()))
                    .build();

    private static final Pattern STRUCT = Pattern.compile("(?i)^\\s*STRUCT\\s*\\((.*)\\)\\s*$");
    private static final Pattern EXCEPT =
            Pattern.compile("(?i)^\\s*\\*\\s*EXCEPT\\s*\\((.*)\\)\\s*$");

    /** The keys of one item of {@code expectations}. */
    private static final List<String> EXPECTATION_KEYS = List.of("name", "expect", "on-violation");

    /**
     * {@code expectations}: a list of maps {@code {name, expect, on-violation}} (on-violation
     * optional) → the same, as text, in order; each item checked with {@link #expectation}.
     *
     * @throws IllegalArgumentException for anything but such a list, naming the item and the keys
     */
    public static List<Map<String, String>> expectations(Object raw) {
        String shape =
                "'expectations' must be a list of {name: ..., expect: <Flink SQL boolean>,"
                        + " on-violation: keep | drop-row | fail-update}";
        if (!(raw instanceof List)) {
            throw new IllegalArgumentException(shape + ", got '" + raw + "'");
        }
        List<Map<String, String>> out = new ArrayList<>();
        int n = 0;
        for (Object item : (List<?>) raw) {
            n++;
            if (!(item instanceof Map)) {
                throw new IllegalArgumentException(shape + "; item " + n + " is '" + item + "'");
            }
            Map<String, String> e = new LinkedHashMap<>();
            for (Map.Entry<?, ?> kv : ((Map<?, ?>) item).entrySet()) {
                String k = String.valueOf(kv.getKey());
                if (!EXPECTATION_KEYS.contains(k)) {
                    throw new IllegalArgumentException(
                            "expectation "
                                    + n
                                    + " has the unknown key '"
                                    + k
                                    + "' (known: name, expect, on-violation)");
                }
                e.put(k, kv.getValue() == null ? null : String.valueOf(kv.getValue()));
            }
            expectation(e, n);
            out.add(e);
        }
        return out;
    }

    /**
     * One item of {@code expectations} as an {@link Expectation}.
     *
     * @param n the item's 1-based position, for messages
     * @throws IllegalArgumentException for a missing name or expect, a bad name or on-violation
     */
    public static Expectation expectation(Map<String, String> item, int n) {
        String name = item.get("name");
        String expect = item.get("expect");
        if (name == null || name.isBlank() || expect == null || expect.isBlank()) {
            throw new IllegalArgumentException(
                    "expectation " + n + " needs 'name' and 'expect', got " + item);
        }
        String on = item.get("on-violation");
        return new Expectation(
                name.trim(),
                expect,
                on == null
                        ? Expectation.OnViolation.KEEP
                        : Expectation.OnViolation.fromConfigName(on));
    }

    /**
     * A {@code schema-hints} column list: each column's type must parse ({@link
     * SchemaSampler#parseColumns}); the vendor's type names {@code LONG}, {@code SHORT}, {@code
     * BYTE}, {@code REAL} and {@code TIMESTAMP_NTZ} are read as Flink's {@code BIGINT}, {@code
     * SMALLINT}, {@code TINYINT}, {@code FLOAT} and {@code TIMESTAMP} (see {@link
     * #schemaHintColumns}); a column named like one of them keeps its name.
     */
    private static String schemaHints(Object raw) {
        String text = OptionParsers.text(SCHEMA_HINTS.key()).parse(raw);
        schemaHintColumns(text);
        return text;
    }

    private static final Pattern SPARK_TYPE =
            Pattern.compile(
                    "(?i)(?<=[^\\s,]\\s{1,20})\\b(LONG|SHORT|BYTE|REAL|TIMESTAMP_NTZ)\\b(?=(?:[^']*'[^']*')*[^']*$)");

    /**
     * The columns of a {@code schema-hints} list as a ROW type, the vendor's type names read as
     * Flink's (docs/semantics.md S2).
     *
     * @throws IllegalArgumentException naming the hint that does not parse
     */
    public static RowType schemaHintColumns(String hints) {
        Matcher m = SPARK_TYPE.matcher(hints);
        StringBuilder flink = new StringBuilder();
        while (m.find()) {
            String t = m.group(1).toUpperCase(Locale.ROOT);
            m.appendReplacement(
                    flink,
                    switch (t) {
                        case "LONG" -> "BIGINT";
                        case "SHORT" -> "SMALLINT";
                        case "BYTE" -> "TINYINT";
                        case "REAL" -> "FLOAT";
                        default -> "TIMESTAMP";
                    });
        }
        m.appendTail(flink);
        try {
            return SchemaSampler.parseColumns(flink.toString());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "'" + SCHEMA_HINTS.key() + "' '" + hints + "': " + e.getMessage(), e);
        }
    }

    /**
     * Record formats: {@code debezium-json}, {@code json}, {@code csv} (plain rows from CSV files
     * with a header line) or {@code parquet} (plain rows from Parquet files), docs/semantics.md S2;
     * lower case.
     */
    static OptionParser<String> format(String key) {
        return OptionParsers.oneOf(key, "json", "debezium-json", "csv", "parquet");
    }

    /** {@code a}, {@code [a, b]}, {@code "a, b"} or {@code "STRUCT(a, b)"} → the columns. */
    public static List<String> sequence(Object raw) {
        if (raw instanceof String) {
            Matcher m = STRUCT.matcher((String) raw);
            if (m.matches()) {
                return OptionParsers.list(m.group(1));
            }
        }
        return OptionParsers.list(raw);
    }

    /**
     * A column selection's text: a list becomes {@code "a, b"}; text is checked with {@link
     * #selection}.
     */
    private static OptionParser<String> selectionText(String key) {
        return raw -> {
            String text = raw instanceof List ? String.join(", ", OptionParsers.list(raw)) : null;
            if (text == null) {
                text = raw == null ? "" : raw.toString();
                selection(text, key);
            } else if (text.isEmpty()) {
                throw new IllegalArgumentException(
                        key + " must list columns, '*' or '* EXCEPT (...)'");
            }
            return text;
        };
    }

    /** {@code all} or {@code latest} (any case), as lower case. */
    private static String snapshotVersionsText(Object raw) {
        String t = raw == null ? "" : raw.toString().trim().toLowerCase(Locale.ROOT);
        if (!t.equals("all") && !t.equals("latest")) {
            throw new IllegalArgumentException(
                    SNAPSHOT_VERSIONS.key() + " must be all or latest, got '" + raw + "'");
        }
        return t;
    }

    private static String ignoreNullUpdatesText(Object raw) {
        String t = raw == null || raw instanceof List ? null : raw.toString().trim();
        if ("true".equalsIgnoreCase(t) || "false".equalsIgnoreCase(t)) {
            return t.toLowerCase(Locale.ROOT);
        }
        return selectionText(IGNORE_NULL_UPDATES.key()).parse(raw);
    }

    /** A single text that is not blank (a predicate, a query). */
    private static OptionParser<String> nonBlank(String key) {
        OptionParser<String> text = OptionParsers.text(key);
        return raw -> {
            String t = text.parse(raw);
            if (t == null || t.isBlank()) {
                throw new IllegalArgumentException("'" + key + "' must not be empty");
            }
            return t;
        };
    }

    /** A maintenance trigger count: 0 (off) or more. */
    private static OptionParser<Integer> count(String key, String what) {
        return OptionParsers.intRange(key, 0, "off", Integer.MAX_VALUE, what);
    }

    /** A duration above zero. */
    private static OptionParser<Duration> positiveDuration(String key) {
        OptionParser<Duration> d = OptionParsers.duration(key);
        return raw -> {
            Duration v = d.parse(raw);
            if (v.isZero() || v.isNegative()) {
                throw new IllegalArgumentException(
                        key + " must be a duration above zero, got '" + raw + "'");
            }
            return v;
        };
    }

    /**
     * The least age of an orphan file: 0 (off) or at least {@link
     * TableMaintenanceOptions#MIN_ORPHANS_OLDER_THAN} (younger files may be the job's own, not yet
     * committed).
     */
    private static OptionParser<Duration> orphanAge(String key) {
        OptionParser<Duration> d = OptionParsers.duration(key);
        return raw -> {
            Duration v = d.parse(raw);
            if (!v.isZero() && v.compareTo(TableMaintenanceOptions.MIN_ORPHANS_OLDER_THAN) < 0) {
                throw new IllegalArgumentException(
                        key
                                + " must be 0 (off) or at least 1h (the job's files not committed"
                                + " yet are younger and must stay), got '"
                                + raw
                                + "'");
            }
            return v;
        };
    }

    /** A JDBC URI ({@code jdbc:...}). */
    private static String jdbcUri(Object raw) {
        String t = raw == null ? "" : raw.toString().trim();
        if (!t.startsWith("jdbc:")) {
            throw new IllegalArgumentException(
                    "'maintenance-lock-jdbc-uri' must be a JDBC URI (jdbc:...), got '" + t + "'");
        }
        return t;
    }

    private static Integer formatVersion(Object raw) {
        String t = raw == null ? "" : raw.toString().trim();
        if (!t.matches("-?[0-9]{1,9}")) {
            throw new IllegalArgumentException("'format-version' must be 2 or 3, got '" + t + "'");
        }
        return Integer.parseInt(t);
    }

    /**
     * {@code "a, b"}, {@code "*"} or {@code "* EXCEPT (a, b)"} → the selection.
     *
     * @param label names the option in the error
     * @throws IllegalArgumentException for an empty text
     */
    public static ColumnSelection selection(String text, String label) {
        String t = text.trim();
        if (t.equals("*")) {
            return ColumnSelection.all();
        }
        Matcher m = EXCEPT.matcher(t);
        if (m.matches()) {
            return ColumnSelection.except(OptionParsers.list(m.group(1)));
        }
        if (t.isEmpty()) {
            throw new IllegalArgumentException(
                    label + " must list columns, '*' or '* EXCEPT (...)'");
        }
        return ColumnSelection.include(OptionParsers.list(t));
    }
}
