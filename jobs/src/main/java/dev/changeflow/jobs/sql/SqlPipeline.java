package dev.changeflow.jobs.sql;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowOptions;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.config.IngestOptions;
import dev.changeflow.jobs.config.KafkaOptions;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.KafkaSampler;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlStatement.Schedule;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.cdf.StreamingAccess;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A pipeline file compiled to the flow model of a flows file: the {@link IngestConfig} (with one
 * {@link FlowConfig} per flow), the files its {@code read_files} calls name, and warnings about
 * what the file says that changes nothing. Statements are {@link SqlParser}'s; every flow's options
 * are resolved by the same {@link OptionsResolver} over {@link FlowOptions#SET} as a flows-file
 * entry, from two layers:
 *
 * <ul>
 *   <li>{@link OptionSource#DEFINITION}, the statement's clauses: {@code table}, {@code target},
 *       {@code name}, {@code keys}, {@code sequence-by}, {@code scd-type}, {@code columns}, {@code
 *       ignore-null-updates}, {@code track-history-on}, {@code apply-as-delete-when}, {@code
 *       apply-as-truncate-when}, {@code append-only} (a flow without AUTO CDC), and from the target
 *       table's declaration {@code schema} (the column list as a Flink DDL column list) and {@code
 *       partitioned-by};
 *   <li>{@link OptionSource#TABLE_PROPERTY}, below it: the target's {@code TBLPROPERTIES} whose key
 *       is {@code changeflow.} and a flow option, e.g. {@code 'changeflow.apply-buffer-keys' =
 *       '1000'}. Other properties are reported as warnings and not used.
 * </ul>
 *
 * A value equal to what the flows file would leave to its default is not set: {@code target} only
 * when the target's name differs from the source table or is qualified, {@code name} only when a
 * flow's name differs from its target's — so a pipeline file and the flows file it mirrors give
 * equal {@code FlowConfig}s. The source table of a flow ({@code table}) is the {@code table =>}
 * argument of its {@code read_files}, else the target's name without namespace.
 *
 * <p>File level: {@code SET key = value} takes the flows file's top-level options ({@link
 * IngestOptions}: {@code name}, {@code format}, {@code namespace}, {@code checkpoint-interval},
 * {@code parallelism}, {@code max-record-bytes}; Flink's {@code execution.checkpointing.interval}
 * and {@code parallelism.default} as aliases) and {@code catalog.<property>} (an Iceberg catalog
 * property); {@code USE [SCHEMA] ns} sets the namespace; {@code USE CATALOG c} changes nothing
 * (warning). The job's name defaults to the file name without {@code .sql}; the record format is
 * the {@code format =>} of the {@code read_files} calls, which must agree. Every {@code read_files}
 * path is an input of the one job (records are routed to flows by their table name, as with {@code
 * ingest}); a relative path is resolved against the file's folder. AUTO CDC FROM SNAPSHOT flows
 * (A6) are not flows of that job: they are {@link #snapshotTables()}, run as the job {@link
 * #snapshotConfig}. Rules: docs/semantics.md S1 (statements, errors), S2 (read_files), A1 (the flow
 * definition), A6 (snapshots).
 */
@PublicEvolving
public final class SqlPipeline {
    /** Prefix of table properties that are flow options. */
    public static final String PROPERTY_PREFIX = "changeflow.";

    /**
     * The table property that, set to {@code 'false'}, forbids a full refresh of the table
     * (docs/semantics.md S1).
     */
    public static final String RESET_ALLOWED = "pipelines.reset.allowed";

    /** The read_kafka arguments and the Kafka input options they set. */
    static final Map<String, ConfigOption<?>> READ_KAFKA_OPTIONS =
            Map.of(
                    "bootstrapServers", KafkaOptions.BOOTSTRAP_SERVERS,
                    "subscribe", KafkaOptions.TOPICS,
                    "subscribePattern", KafkaOptions.TOPIC_PATTERN,
                    "startingOffsets", KafkaOptions.STARTING_OFFSETS);

    static final Map<String, String> SET_ALIASES =
            Map.of(
                    "execution.checkpointing.interval", IngestOptions.CHECKPOINT_INTERVAL.key(),
                    "parallelism.default", IngestOptions.PARALLELISM.key());

    private final IngestConfig config;
    private final List<Input> inputs;
    private final List<String> warnings;
    private final Map<String, Schedule> schedules;
    private final List<String> tables;

    private final Map<String, SqlPosition> resetForbidden;

    /** Per flow of {@link #config}, in its order: the target's declared name and its input. */
    private final List<String> flowTargets;

    private final List<Input> flowInputs;

    /** Per flow of {@link #config}, in its order: where its statement and clauses are written. */
    private final List<FlowPlaces> flowPlaces;

    /** The file's REFRESH statements, in file order. */
    private final List<SqlStatement.Refresh> refreshes;

    /** Every distinct change-feed source; per flow its feed (null for read_files). */
    private final List<Feed> feeds;

    private final List<Feed> flowFeeds;

    /** Per flow of {@link #config}: whether it reads {@link IngestConfig#kafka}. */
    private final List<Boolean> flowKafka;

    /** The file's FLOW REPLACE WHERE tables (S4), in file order; set by the compiler. */
    private List<ReplaceWhereTable> replaceWheres = List.of();

    /**
     * A streaming table with {@code FLOW REPLACE WHERE} (docs/semantics.md S4): not part of the
     * ingest job; each refresh runs {@link dev.changeflow.jobs.flow.ReplaceWhereRefresh}.
     *
     * @param name the table's name as declared
     */
    public record ReplaceWhereTable(
            String name, dev.changeflow.jobs.flow.ReplaceWhereRefresh.Definition definition) {

        /**
         * The one place a REPLACE WHERE table's refresh definition is built, from a {@code CREATE
         * STREAMING TABLE ... FLOW REPLACE WHERE} statement and from a flows-file entry alike: the
         * target in {@code namespace} unless {@code table} is qualified, and the predicate checked
         * for functions that are not deterministic before anything runs (S4).
         *
         * @param name the name {@code --refresh} / {@code --refresh-where} / REFRESH use
         * @param table the target, {@code name} or {@code namespace.name}
         * @param namespace the namespace of an unqualified {@code table}; null: {@value
         *     IngestPlanner#DEFAULT_NAMESPACE}
         * @param schema the declared columns as a Flink DDL column list; null: a missing table gets
         *     the query's columns
         * @param options partitioning and format version of a new table
         * @throws SqlException {@code NON_DETERMINISTIC_PREDICATE} at the call
         */
        public static ReplaceWhereTable of(
                String name,
                String table,
                @Nullable String namespace,
                String query,
                SqlPosition queryAt,
                String predicate,
                SqlPosition predicateAt,
                @Nullable String schema,
                dev.changeflow.sinks.iceberg.StreamingTableOptions options) {
            TableIdentifier id =
                    table.contains(".")
                            ? TableIdentifier.parse(table)
                            : TableIdentifier.of(
                                    namespace != null ? namespace : IngestPlanner.DEFAULT_NAMESPACE,
                                    table);
            dev.changeflow.jobs.flow.ReplaceWhereRefresh.checkDeterministic(
                    id, predicate, predicateAt);
            return new ReplaceWhereTable(
                    name,
                    new dev.changeflow.jobs.flow.ReplaceWhereRefresh.Definition(
                            id, query, queryAt, predicate, predicateAt, schema, options));
        }

        /**
         * A flows-file REPLACE WHERE flow ({@link FlowConfig#isReplaceWhere()}, validated) as
         * {@link #of}: named by its {@link FlowConfig#flowName()}, its target in the file's
         * namespace unless qualified, its {@code schema}, {@code partitioned-by} and {@code
         * format-version}. Errors point at the predicate's and the query's places in the file, or,
         * when those are not known (a {@code --set} override), at {@code <where> flow 'f'
         * replace-where:1:1}.
         *
         * @param where names the flows file
         * @throws SqlException {@code NON_DETERMINISTIC_PREDICATE} at the call
         */
        public static ReplaceWhereTable of(FlowConfig flow, IngestConfig config, String where) {
            String label = where + " flow '" + flow.flowName() + "' ";
            dev.changeflow.sinks.iceberg.StreamingTableOptions.Builder options =
                    dev.changeflow.sinks.iceberg.StreamingTableOptions.builder()
                            .partitionBy(flow.partitionedBy);
            if (flow.formatVersionSet) {
                options.formatVersion(flow.formatVersion);
            }
            return of(
                    flow.flowName(),
                    flow.target,
                    config.namespace,
                    flow.query,
                    flow.queryPosition != null
                            ? flow.queryPosition
                            : new SqlPosition(label + FlowOptions.QUERY.key(), 1, 1),
                    flow.replaceWhere,
                    flow.replaceWherePosition != null
                            ? flow.replaceWherePosition
                            : new SqlPosition(label + FlowOptions.REPLACE_WHERE.key(), 1, 1),
                    flow.schema,
                    options.build());
        }
    }

    /** The file's AUTO CDC FROM SNAPSHOT tables (A6), in file order; set by the compiler. */
    private List<SnapshotTable> snapshotTables = List.of();

    /**
     * A streaming table written by an AUTO CDC FROM SNAPSHOT flow (docs/semantics.md A6): not part
     * of the ingest job ({@link #config()}); {@code run} runs the file's snapshot flows as a job of
     * their own ({@link #snapshotConfig}) after the ingest job, so a snapshot table may read the
     * versions of a table the same file writes.
     *
     * @param name the table's name as declared
     * @param flow the flow, {@code from-snapshot} (a folder) or {@code from-snapshot-table} set
     * @param position where the flow's statement starts
     * @param sourcePosition where the snapshot source ({@code read_files} or the table) is named
     * @param source how DESCRIBE and {@code --dry-run} name the source
     * @param keyPositions where each KEYS column is written, in the order of {@code keys}
     * @param folderAsWritten the {@code read_files} folder as the file writes it (relative to the
     *     file's folder unless absolute); null for a table source
     */
    public record SnapshotTable(
            String name,
            FlowConfig flow,
            SqlPosition position,
            SqlPosition sourcePosition,
            String source,
            List<String> keys,
            List<SqlPosition> keyPositions,
            @Nullable String folderAsWritten) {

        /** Whether the snapshot folder is written relative to the .sql file's folder. */
        public boolean relativeFolder() {
            return folderAsWritten != null && !Path.of(folderAsWritten).isAbsolute();
        }
    }

    void snapshotTables(List<SnapshotTable> tables) {
        this.snapshotTables = List.copyOf(tables);
    }

    /** The file's AUTO CDC FROM SNAPSHOT tables, in file order (A6). */
    public List<SnapshotTable> snapshotTables() {
        return snapshotTables;
    }

    /**
     * The AUTO CDC FROM SNAPSHOT table of that name (case-insensitive, {@code LIVE.} allowed), or
     * null.
     */
    @Nullable
    public SnapshotTable snapshotTable(String name) {
        String k = tableKey(name);
        for (SnapshotTable t : snapshotTables) {
            if (tableKey(t.name()).equals(k)) {
                return t;
            }
        }
        return null;
    }

    /**
     * The job of the file's snapshot flows (A6) writing {@code selected}: the file's options with
     * those flows only, run by {@link dev.changeflow.jobs.ingest.LocalSnapshotIngest}. Named {@code
     * <name>-snapshots} when {@code selected} holds every snapshot table of the file, else {@code
     * <name>-snapshots-refresh-<tables>} (a job with saved state of its own, as {@link
     * #refreshOnly} names a subset of the ingest job).
     */
    public IngestConfig snapshotConfig(List<SnapshotTable> selected) {
        IngestConfig cfg;
        try {
            cfg = org.apache.flink.util.InstantiationUtil.clone(config);
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("cannot copy the pipeline's configuration", e);
        }
        cfg.flows.clear();
        cfg.kafka = null;
        List<String> labels = new ArrayList<>();
        for (SnapshotTable t : snapshotTables) {
            if (selected.contains(t)) {
                cfg.flows.add(t.flow());
                labels.add(label(t.name()));
            }
        }
        cfg.name =
                config.name
                        + "-snapshots"
                        + (cfg.flows.size() == snapshotTables.size()
                                ? ""
                                : "-refresh-" + String.join("-", labels));
        return cfg;
    }

    /**
     * The Iceberg table a snapshot flow writes: its target, in the file's namespace unless
     * qualified.
     */
    public TableIdentifier snapshotTarget(SnapshotTable t) {
        String namespace =
                config.namespace != null ? config.namespace : IngestPlanner.DEFAULT_NAMESPACE;
        return IngestPlanner.target(t.flow(), namespace);
    }

    /**
     * Plans a snapshot flow as its job will ({@link dev.changeflow.jobs.ingest.SnapshotJob#plan}),
     * writing nothing: a local folder is listed (file names without a version fail), the KEYS
     * checked against the columns. Errors are placed: a folder that does not exist is {@code
     * SOURCE_NOT_FOUND} at its {@code read_files}, a KEYS column of no source column {@code
     * UNKNOWN_COLUMN} at that column, anything else {@code INVALID_FLOW} at the flow's statement;
     * the message keeps the A6 code. The versions of a table are checked in {@code catalog}: a
     * table that does not exist is {@code UNKNOWN_TABLE} at the source (unless an ingest flow of
     * this file writes it: that job runs first), a format v1 table or a declared column it lacks
     * {@code INVALID_FLOW}.
     *
     * @param catalog the catalog of a {@code FROM SNAPSHOT table} source (opened only for one)
     * @throws SqlException as above
     */
    public void checkSnapshot(SnapshotTable t, CatalogSettings catalog) {
        String namespace =
                config.namespace != null ? config.namespace : IngestPlanner.DEFAULT_NAMESPACE;
        Catalog cat = null;
        try {
            t.flow().validate();
            if (t.flow().fromSnapshotTable != null) {
                cat = catalog.open();
            }
            dev.changeflow.jobs.ingest.SnapshotJob.plan(t.flow(), namespace, cat);
        } catch (AutoCdcException e) {
            if (e.code() == AutoCdcException.Code.SNAPSHOT_TABLE_NOT_FOUND) {
                if (writtenByThisFile(t, namespace)) {
                    return; // the file's ingest job creates it before the snapshot job runs
                }
                throw new SqlException(
                        Code.UNKNOWN_TABLE, t.sourcePosition(), sqlWording(e.getMessage()), e);
            }
            if (e.code() == AutoCdcException.Code.SNAPSHOT_FOLDER_NOT_FOUND) {
                throw new SqlException(
                        Code.SOURCE_NOT_FOUND, t.sourcePosition(), sqlWording(e.getMessage()), e);
            }
            if (e.code() == AutoCdcException.Code.KEY_NOT_IN_SOURCE) {
                for (int k = 0; k < t.keys().size(); k++) {
                    if (e.getMessage().contains("column '" + t.keys().get(k) + "'")) {
                        throw new SqlException(
                                Code.UNKNOWN_COLUMN, t.keyPositions().get(k), e.getMessage(), e);
                    }
                }
            }
            throw new SqlException(Code.INVALID_FLOW, t.position(), e.getMessage(), e);
        } catch (IllegalArgumentException | dev.changeflow.sources.cdf.CdfException e) {
            throw new SqlException(Code.INVALID_FLOW, t.position(), e.getMessage(), e);
        } finally {
            if (cat instanceof java.io.Closeable) {
                try {
                    ((java.io.Closeable) cat).close();
                } catch (IOException e) {
                    // closing a catalog only releases clients: nothing was written
                }
            }
        }
    }

    /**
     * A snapshot flow's error message in the words of the file: the flows-file options that name
     * the source ({@code 'from-snapshot'}, {@code 'from-snapshot-table'}) become the clause that
     * does, {@code FROM SNAPSHOT read_files(...)} or {@code FROM SNAPSHOT table} (A6).
     */
    static String sqlWording(String message) {
        return message.replace(
                        "; 'from-snapshot' names the folder that holds the snapshot files"
                                + " (snapshot_1.csv, snapshot_2.csv, ...)",
                        "; read_files after FROM SNAPSHOT names the folder that holds the snapshot"
                                + " files (snapshot_1.csv, snapshot_2.csv, ...), a relative path"
                                + " resolved against the folder of the pipeline file")
                .replace("fix 'from-snapshot-table'", "fix the table name after FROM SNAPSHOT");
    }

    /**
     * Whether the table a {@code FROM SNAPSHOT table} reads is the target of an ingest flow here.
     */
    private boolean writtenByThisFile(SnapshotTable t, String namespace) {
        String ns = t.flow().targetNamespace() != null ? t.flow().targetNamespace() : namespace;
        TableIdentifier source =
                dev.changeflow.jobs.ingest.SnapshotJob.tableIdentifier(
                        t.flow().fromSnapshotTable, ns);
        for (FlowConfig f : config.flows) {
            if (IngestPlanner.target(f, namespace).equals(source)) {
                return true;
            }
        }
        return false;
    }

    /** The file's DESCRIBE statements, in file order (S9); set by the compiler. */
    private List<SqlStatement.Describe> describes = List.of();

    /** The file's DROP TABLE statements, in file order (S9); set by the compiler. */
    private List<SqlStatement.Drop> drops = List.of();

    /** Each streaming table's declaration, by lower-case name; set by the compiler. */
    private Map<String, SqlStatement.CreateStreamingTable> declarations = Map.of();

    /**
     * Where a flow's statement, KEYS columns and SEQUENCE BY clause are written, and an append
     * flow's select list and WHERE (S1).
     */
    record FlowPlaces(
            SqlPosition statement,
            List<String> keys,
            List<SqlPosition> keyPositions,
            @Nullable SqlPosition sequenceBy,
            List<SqlStatement.Constraint> constraints,
            @Nullable SqlStatement.Select select) {
        FlowPlaces(
                SqlPosition statement,
                List<String> keys,
                List<SqlPosition> keyPositions,
                @Nullable SqlPosition sequenceBy,
                List<SqlStatement.Constraint> constraints) {
            this(statement, keys, keyPositions, sequenceBy, constraints, null);
        }
    }

    SqlPipeline(
            IngestConfig config,
            List<Input> inputs,
            List<String> warnings,
            Map<String, Schedule> schedules,
            List<String> tables,
            List<String> flowTargets,
            List<Input> flowInputs,
            List<FlowPlaces> flowPlaces,
            Map<String, SqlPosition> resetForbidden,
            List<SqlStatement.Refresh> refreshes,
            List<Feed> feeds,
            List<Feed> flowFeeds,
            List<Boolean> flowKafka) {
        this.config = config;
        this.flowKafka = flowKafka;
        this.feeds = Collections.unmodifiableList(feeds);
        this.flowFeeds = flowFeeds;
        this.flowPlaces = flowPlaces;
        this.refreshes = Collections.unmodifiableList(refreshes);
        this.resetForbidden = resetForbidden;
        this.inputs = Collections.unmodifiableList(inputs);
        this.warnings = Collections.unmodifiableList(warnings);
        this.schedules = Collections.unmodifiableMap(schedules);
        this.tables = Collections.unmodifiableList(tables);
        this.flowTargets = flowTargets;
        this.flowInputs = flowInputs;
    }

    void replaceWheres(List<ReplaceWhereTable> tables) {
        this.replaceWheres = List.copyOf(tables);
    }

    /** The file's FLOW REPLACE WHERE tables, in file order (S4). */
    public List<ReplaceWhereTable> replaceWheres() {
        return replaceWheres;
    }

    /** The FLOW REPLACE WHERE table of that name (case-insensitive, {@code LIVE.} allowed). */
    @Nullable
    public ReplaceWhereTable replaceWhere(String name) {
        String k = name.trim().toLowerCase(Locale.ROOT);
        if (k.startsWith("live.")) {
            k = k.substring(5);
        }
        for (ReplaceWhereTable t : replaceWheres) {
            if (t.name().toLowerCase(Locale.ROOT).equals(k)) {
                return t;
            }
        }
        return null;
    }

    /**
     * The pipeline restricted to the flows that write the named tables ({@code run --refresh
     * t,...}, the refresh a scheduled table's CronJob runs, S3). Naming every table gives this
     * pipeline; AUTO CDC FROM SNAPSHOT tables (A6) are not flows of it and are left out ({@link
     * #snapshotConfig} selects them). A true subset is a job of its own, named {@code
     * <name>-refresh-<table>-...} in declaration order, so its saved state (local checkpoints are
     * per job name) is not mixed with the whole pipeline's. So is the selection of one scheduled
     * table, also when it is the file's only table: the job of a scheduled table's CronJob ({@code
     * --refresh t}) keeps its name and state when the file gains tables (S3).
     *
     * @param names table names as declared (case-insensitive; a leading {@code LIVE.} is allowed)
     * @throws IllegalArgumentException when a name is no streaming table of the file, or when a
     *     selected flow's {@code read_files} path also feeds a table that is not selected (its
     *     records would have no flow in the job)
     */
    public SqlPipeline refreshOnly(List<String> names) {
        return refreshOnly(names, "--refresh");
    }

    /**
     * As {@link #refreshOnly(List)}; errors name {@code flag} ({@code --refresh} or {@code
     * --full-refresh}), the option the user gave.
     */
    public SqlPipeline refreshOnly(List<String> names, String flag) {
        Map<String, String> byKey = new LinkedHashMap<>();
        tables.forEach(t -> byKey.put(t.toLowerCase(Locale.ROOT), t));
        java.util.Set<String> chosen = new java.util.HashSet<>();
        for (String n : names) {
            String k = n.trim().toLowerCase(Locale.ROOT);
            if (k.startsWith("live.")) {
                k = k.substring(5);
            }
            if (!byKey.containsKey(k)) {
                throw new IllegalArgumentException(
                        flag
                                + " names "
                                + n.trim()
                                + ", which no CREATE STREAMING TABLE of the file declares (tables: "
                                + String.join(", ", tables)
                                + ")");
            }
            if (snapshotTable(k) == null) {
                chosen.add(k); // A6: a snapshot table is refreshed by the snapshot job
            }
        }
        // the refresh of one scheduled table is what its CronJob runs: always a job of its own
        boolean scheduledOne =
                chosen.size() == 1
                        && schedules.keySet().stream()
                                .anyMatch(t -> chosen.contains(t.toLowerCase(Locale.ROOT)));
        if (chosen.size() == tables.size() - snapshotTables.size() && !scheduledOne) {
            return this;
        }
        IngestConfig cfg;
        try {
            cfg = org.apache.flink.util.InstantiationUtil.clone(config);
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalStateException("cannot copy the pipeline's configuration", e);
        }
        cfg.flows.clear();
        List<String> targets = new ArrayList<>();
        List<Input> ins = new ArrayList<>();
        List<FlowPlaces> places = new ArrayList<>();
        List<Feed> feedsOf = new ArrayList<>();
        List<Boolean> kafkaOf = new ArrayList<>();
        List<Feed> distinctFeeds = new ArrayList<>();
        List<Input> distinct = new ArrayList<>();
        for (int i = 0; i < flowTargets.size(); i++) {
            if (chosen.contains(flowTargets.get(i).toLowerCase(Locale.ROOT))) {
                cfg.flows.add(config.flows.get(i));
                targets.add(flowTargets.get(i));
                ins.add(flowInputs.get(i));
                places.add(flowPlaces.get(i));
                feedsOf.add(flowFeeds.get(i));
                kafkaOf.add(flowKafka.get(i));
                Feed feed = flowFeeds.get(i);
                if (feed != null) {
                    if (!distinctFeeds.contains(feed)) {
                        distinctFeeds.add(feed);
                    }
                    continue;
                }
                if (flowKafka.get(i)) {
                    continue;
                }
                String path = flowInputs.get(i).name();
                if (distinct.stream().noneMatch(in -> in.name().equals(path))) {
                    distinct.add(flowInputs.get(i));
                }
            }
        }
        for (int i = 0; i < flowTargets.size(); i++) {
            String other = flowTargets.get(i);
            if (flowInputs.get(i) == null) {
                continue; // a change feed or Kafka: every job reads from a position of its own
            }
            String path = flowInputs.get(i).name();
            if (!chosen.contains(other.toLowerCase(Locale.ROOT))
                    && distinct.stream().anyMatch(in -> in.name().equals(path))) {
                throw new IllegalArgumentException(
                        flag
                                + " "
                                + String.join(",", names)
                                + ": read_files path "
                                + path
                                + " also feeds streaming table "
                                + other
                                + ", which is not refreshed; refresh them together ("
                                + flag
                                + (flag.startsWith("--") ? " ...," : " ..., ")
                                + other
                                + ") or give each table a path of its own");
            }
        }
        List<String> labels = new ArrayList<>();
        for (String t : tables) {
            if (chosen.contains(t.toLowerCase(Locale.ROOT))) {
                labels.add(label(t));
            }
        }
        cfg.name = config.name + "-refresh-" + String.join("-", labels);
        if (!kafkaOf.contains(true)) {
            cfg.kafka = null;
        }
        Map<String, Schedule> sc = new LinkedHashMap<>();
        schedules.forEach(
                (t, v) -> {
                    if (chosen.contains(t.toLowerCase(Locale.ROOT))) {
                        sc.put(t, v);
                    }
                });
        List<String> kept = new ArrayList<>();
        tables.forEach(
                t -> {
                    if (chosen.contains(t.toLowerCase(Locale.ROOT))) {
                        kept.add(t);
                    }
                });
        return new SqlPipeline(
                cfg,
                distinct,
                warnings,
                sc,
                kept,
                targets,
                ins,
                places,
                resetForbidden,
                List.of(),
                distinctFeeds,
                feedsOf,
                kafkaOf);
    }

    /** Sets what the compiler collected for DESCRIBE and DROP TABLE (S9). */
    void statements(
            List<SqlStatement.Describe> describes,
            List<SqlStatement.Drop> drops,
            Map<String, SqlStatement.CreateStreamingTable> declarations) {
        this.describes = Collections.unmodifiableList(describes);
        this.drops = Collections.unmodifiableList(drops);
        this.declarations = Collections.unmodifiableMap(declarations);
    }

    /**
     * The file's {@code DESCRIBE [TABLE] [EXTENDED] t} statements in file order (S9); {@code run}
     * prints each after the file's refreshes ({@link TableStatements#describe}).
     */
    public List<SqlStatement.Describe> describes() {
        return describes;
    }

    /**
     * The file's {@code DROP TABLE [IF EXISTS] t} statements in file order (S9); {@code run} runs
     * them before the file's refreshes ({@link TableStatements#drop}).
     */
    public List<SqlStatement.Drop> drops() {
        return drops;
    }

    /**
     * The declaration of a streaming table of the file.
     *
     * @param table the name (case-insensitive, a leading {@code LIVE.} allowed)
     * @return null when the file declares no such table
     */
    @Nullable
    public SqlStatement.CreateStreamingTable declaration(String table) {
        return declarations.get(tableKey(table));
    }

    /**
     * The flow of {@link #config()} writing a streaming table of the file, its index in {@code
     * config().flows}; -1 when no flow of this pipeline writes it.
     */
    public int flowIndexOfTable(String table) {
        for (int i = 0; i < flowTargets.size(); i++) {
            if (tableKey(flowTargets.get(i)).equals(tableKey(table))) {
                return i;
            }
        }
        return -1;
    }

    /**
     * How the flow at {@code index} of {@code config().flows} reads, as DESCRIBE prints it: {@code
     * read_files <path> (format f, table t)}, {@code change feed of <table>} or {@code read_kafka
     * <servers> topics|pattern ... from <offsets>}.
     */
    public String sourceOfFlow(int index) {
        FlowConfig f = config.flows.get(index);
        Feed feed = flowFeeds.get(index);
        if (feed != null) {
            return "change feed of " + feed.table() + " (STREAM, S7)";
        }
        if (flowKafka.get(index) && config.kafka != null) {
            return "read_kafka "
                    + config.kafka.bootstrapServers
                    + " "
                    + (config.kafka.topicPattern != null
                            ? "pattern " + config.kafka.topicPattern
                            : "topics " + config.kafka.topics)
                    + " from "
                    + config.kafka.startingOffsets
                    + ", table "
                    + f.table;
        }
        Input in = flowInputs.get(index);
        return "read_files "
                + (in == null ? "?" : in.name())
                + " (format "
                + config.format
                + ", table "
                + f.table
                // S2: the arguments that change how the files are read, when given
                + (f.schemaHints != null ? ", schemaHints '" + f.schemaHints + "'" : "")
                + (config.maxFilesPerTrigger != null
                        ? ", maxFilesPerTrigger " + config.maxFilesPerTrigger
                        : "")
                + ")";
    }

    /**
     * The job names of the file whose saved state holds the flow of {@code table}: the whole
     * pipeline's ({@code config().name}) and, among {@code existingJobs}, every {@code
     * <name>-refresh-<labels>} job of {@link #refreshOnly} whose labels include the table's; each
     * with the tables of the file its flows write, in declaration order.
     */
    public Map<String, List<String>> jobsWriting(String table, List<String> existingJobs) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (flowIndexOfTable(table) < 0) {
            return out;
        }
        out.put(config.name, new ArrayList<>(flowTargets));
        String prefix = config.name + "-refresh-";
        for (String job : existingJobs) {
            if (!job.startsWith(prefix)) {
                continue;
            }
            List<String> labels = List.of(job.substring(prefix.length()).split("-"));
            List<String> of = new ArrayList<>();
            for (String t : tables) {
                if (labels.contains(label(t))) {
                    of.add(t);
                }
            }
            if (of.size() == labels.size() && labels.contains(label(table))) {
                out.put(job, of);
            }
        }
        return out;
    }

    /** A table's part of a refresh job's name ({@link #refreshOnly}). */
    private static String label(String table) {
        return tableKey(table).replaceAll("[^a-z0-9_]+", "_");
    }

    private static String tableKey(String table) {
        String k = table.trim().toLowerCase(Locale.ROOT);
        return k.startsWith("live.") ? k.substring(5) : k;
    }

    /**
     * The file's {@code REFRESH STREAMING TABLE} statements in file order (S1), each already
     * checked against the file ({@link #refreshOnly(List, String)} accepts its tables). {@code run}
     * runs each as {@code --refresh} ({@code --full-refresh} with FULL) would, one after the other,
     * unless a flag names the tables; empty for a pipeline returned by {@link #refreshOnly}.
     */
    public List<SqlStatement.Refresh> refreshes() {
        return refreshes;
    }

    /**
     * The streaming table a flow of {@link #config()} writes, as declared in the file.
     *
     * @param flowName the flow's {@link FlowConfig#flowName()}
     * @throws IllegalArgumentException when no flow of this pipeline has that name
     */
    public String tableOfFlow(String flowName) {
        for (int i = 0; i < config.flows.size(); i++) {
            if (config.flows.get(i).flowName().equals(flowName)) {
                return flowTargets.get(i);
            }
        }
        throw new IllegalArgumentException("no flow '" + flowName + "' in the pipeline");
    }

    /**
     * Plans the pipeline's job over its {@code read_files} inputs ({@link IngestPlanner#plan}),
     * giving an error of a flow the place it is about: a KEYS (or REPLACE USING) column the records
     * do not have at that column ({@code UNKNOWN_COLUMN}), a SEQUENCE BY the records cannot give at
     * the clause ({@code UNKNOWN_COLUMN}), any other error of a flow at its statement ({@code
     * INVALID_FLOW}).
     *
     * @throws SqlException for an error of a flow
     * @throws IOException when an input cannot be read
     */
    public IngestPlan plan() throws IOException {
        return planAgainst(null);
    }

    /** As {@link #plan()}, taking columns the source dropped from the existing tables (A7). */
    private IngestPlan planAgainst(@Nullable CatalogSettings tables) throws IOException {
        checkPlainJsonRouting();
        try {
            if (config.kafka != null) {
                // A5: the first record of each partition chooses the default sequence
                return checkPartitionings(
                        IngestPlanner.plan(
                                config,
                                List.of(),
                                KafkaSampler.firstRecords(
                                        config.kafka,
                                        config.kafka.groupId != null
                                                ? config.kafka.groupId
                                                : IngestJob.defaultGroupId(config),
                                        KafkaSampler.DEFAULT_TIMEOUT),
                                tables));
            }
            return checkPartitionings(IngestPlanner.planFiles(config, inputFiles(), null, tables));
        } catch (dev.changeflow.jobs.ingest.KafkaUnreachableException e) {
            // the brokers of read_kafka do not answer: at the (first) flow, which reads Kafka
            throw new SqlException(
                    Code.SOURCE_NOT_FOUND, flowPlaces.get(0).statement(), e.getMessage(), e);
        } catch (IllegalArgumentException | AutoCdcException e) {
            throw locate(e);
        }
    }

    /**
     * Plans the pipeline's job: over its {@code read_files} inputs ({@link #plan()}), or over the
     * change feeds of the tables its {@code STREAM(table)} sources name ({@link
     * IngestPlanner#planChangeFeeds}, S7), read from {@code catalog}: an unqualified name is a
     * table of the pipeline's namespace ({@code USE SCHEMA}, else {@value
     * IngestPlanner#DEFAULT_NAMESPACE}). Errors of a flow are placed as {@link #plan()} places
     * them.
     *
     * @throws SqlException {@code UNKNOWN_SOURCE} for a table that is not in the catalog, {@code
     *     CONFLICTING_SOURCES} when the job would read files and change feeds (one job reads one
     *     kind: refresh them separately), or an error of a flow
     * @throws IOException when an input cannot be read
     */
    public IngestPlan plan(CatalogSettings catalog) throws IOException {
        int kinds =
                (inputs.isEmpty() ? 0 : 1)
                        + (feeds.isEmpty() ? 0 : 1)
                        + (config.kafka == null ? 0 : 1);
        if (kinds > 1) {
            throw new SqlException(
                    Code.CONFLICTING_SOURCES,
                    flowPlaces.get(0).statement(),
                    "one job reads one kind of source, and the flows of this run read "
                            + String.join("; ", sourceKinds())
                            + ": refresh those tables separately (REFRESH STREAMING TABLE t; in"
                            + " the file, or run --refresh t)");
        }
        if (feeds.isEmpty()) {
            return planAgainst(catalog);
        }
        String namespace =
                config.namespace != null ? config.namespace : IngestPlanner.DEFAULT_NAMESPACE;
        List<TableIdentifier> sources = new ArrayList<>();
        Map<TableIdentifier, RowType> types = new LinkedHashMap<>();
        Catalog cat = catalog.open();
        try {
            for (Feed feed : flowFeeds) {
                TableIdentifier id =
                        feed.table().contains(".")
                                ? TableIdentifier.parse(feed.table())
                                : TableIdentifier.of(
                                        Namespace.of(namespace.split("\\.")), feed.table());
                sources.add(id);
                if (types.containsKey(id)) {
                    continue;
                }
                if (!cat.tableExists(id)) {
                    throw new SqlException(
                            Code.UNKNOWN_SOURCE,
                            feed.position(),
                            "STREAM("
                                    + feed.table()
                                    + ") names no temporary view of the file, and table "
                                    + id
                                    + ", whose change feed it would read, does not exist in the"
                                    + " catalog (a streaming table of the file exists once it was"
                                    + " refreshed: REFRESH STREAMING TABLE "
                                    + feed.table()
                                    + "; above it)");
                }
                types.put(
                        id, StreamingAccess.rowType(StreamingAccess.dataSchema(cat.loadTable(id))));
            }
        } finally {
            if (cat instanceof java.io.Closeable c) {
                c.close();
            }
        }
        IngestPlan plan;
        try {
            plan = IngestPlanner.planChangeFeeds(config, sources, types);
        } catch (IllegalArgumentException | AutoCdcException e) {
            throw locate(e);
        }
        return checkPartitionings(plan);
    }

    /**
     * Checks that the PARTITIONED BY of each table the plan writes makes a valid Iceberg partition
     * spec (columns exist, transforms fit their types, no field twice), so {@code --dry-run} finds
     * what the run would refuse when it creates the table.
     *
     * @return {@code plan}
     * @throws SqlException {@code INVALID_OPTION} at the table's statement
     */
    private IngestPlan checkPartitionings(IngestPlan plan) {
        for (IngestPlan.Flow f : plan.flows) {
            try {
                StreamingTables.checkPartitionBy(
                        f.spec != null ? f.spec.targetType() : f.appendType(),
                        f.spec != null ? f.spec.identifierFields() : List.of(),
                        f.tableOptions.partitionBy(),
                        f.target);
            } catch (IllegalArgumentException e) {
                SqlPosition at = null;
                for (int i = 0; i < config.flows.size() && at == null; i++) {
                    if (config.flows.get(i).flowName().equals(f.config.flowName())) {
                        SqlStatement.CreateStreamingTable d = declaration(flowTargets.get(i));
                        at = d != null ? d.position() : flowPlaces.get(i).statement();
                    }
                }
                throw new SqlException(
                        Code.INVALID_OPTION,
                        at != null ? at : flowPlaces.get(0).statement(),
                        "PARTITIONED BY: " + e.getMessage(),
                        e);
            }
        }
        return plan;
    }

    /**
     * S2: plain rows ({@code format => 'json'}, {@code 'csv'} or {@code 'parquet'}) name no table,
     * so a job routes them to its one flow only; with several flows reading different {@code
     * read_files} paths every row would be quarantined as {@code UNKNOWN_TOPIC} and its file marked
     * read. Such a job is refused before anything runs, at the {@code read_files} of the first flow
     * whose path differs from the first flow's.
     *
     * @throws SqlException {@code CONFLICTING_SOURCES}, naming each path and its tables and the
     *     fix: a job per table (REFRESH statements or {@code --refresh})
     */
    private void checkPlainJsonRouting() {
        boolean plainRows =
                "json".equalsIgnoreCase(config.format)
                        || dev.changeflow.jobs.ingest.IngestPlanner.fileFormat(config.format)
                                != dev.changeflow.sources.files.ChangeFiles.Format.LINES;
        if (!plainRows || config.kafka != null) {
            return;
        }
        checkOnePlainRowFlow();
        if (inputs.size() < 2) {
            return;
        }
        Map<String, List<String>> byPath = new LinkedHashMap<>();
        SqlPosition at = null;
        for (int i = 0; i < flowTargets.size(); i++) {
            Input in = flowInputs.get(i);
            if (in == null) {
                continue;
            }
            if (at == null && !byPath.isEmpty() && !byPath.containsKey(in.name())) {
                at = in.position();
            }
            byPath.computeIfAbsent(in.name(), k -> new ArrayList<>()).add(flowTargets.get(i));
        }
        if (at == null) {
            return;
        }
        List<String> read = new ArrayList<>();
        byPath.forEach((path, t) -> read.add(path + " (" + String.join(", ", t) + ")"));
        List<String> refresh = new ArrayList<>();
        flowTargets.forEach(t -> refresh.add("REFRESH STREAMING TABLE " + t + ";"));
        throw new SqlException(
                Code.CONFLICTING_SOURCES,
                at,
                "format 'json' rows name no table, so one job cannot tell which flow a row"
                        + " belongs to, and this run's flows read different read_files paths: "
                        + String.join("; ", read)
                        + ". Every row would be quarantined as UNKNOWN_TOPIC. Refresh each table"
                        + " as a job of its own ("
                        + String.join(" ", refresh)
                        + " in the file, or run --refresh "
                        + flowTargets.get(0)
                        + "), or use format 'debezium-json' records, which name their table");
    }

    /**
     * S2: plain rows from one {@code read_files} path reach the job's one flow; two flows of one
     * job over the same path would each see no row (every row quarantined as {@code
     * UNKNOWN_TOPIC}), so such a job is refused before anything runs, at the second flow's {@code
     * read_files}.
     *
     * @throws SqlException {@code CONFLICTING_SOURCES}, naming the path, its tables and the fix: a
     *     job per table (REFRESH statements or {@code --refresh})
     */
    private void checkOnePlainRowFlow() {
        Map<String, List<Integer>> byPath = new LinkedHashMap<>();
        for (int i = 0; i < flowTargets.size(); i++) {
            Input in = flowInputs.get(i);
            if (in != null) {
                byPath.computeIfAbsent(in.name(), k -> new ArrayList<>()).add(i);
            }
        }
        for (Map.Entry<String, List<Integer>> e : byPath.entrySet()) {
            List<Integer> flows = e.getValue();
            if (flows.size() < 2) {
                continue;
            }
            List<String> tables = new ArrayList<>();
            List<String> refresh = new ArrayList<>();
            for (int i : flows) {
                tables.add(flowTargets.get(i));
                refresh.add("REFRESH STREAMING TABLE " + flowTargets.get(i) + ";");
            }
            throw new SqlException(
                    Code.CONFLICTING_SOURCES,
                    flowInputs.get(flows.get(1)).position(),
                    "format '"
                            + config.format
                            + "' rows name no table, so one job gives every row to its one flow,"
                            + " and this run's flows "
                            + String.join(", ", tables)
                            + " all read "
                            + e.getKey()
                            + ". Refresh each table as a job of its own ("
                            + String.join(" ", refresh)
                            + " in the file, or run --refresh "
                            + tables.get(0)
                            + ")");
        }
    }

    /** Per kind of source, the tables whose flows read it: "files (a, b)", ... */
    private List<String> sourceKinds() {
        Map<String, List<String>> byKind = new LinkedHashMap<>();
        for (int i = 0; i < flowTargets.size(); i++) {
            String kind =
                    flowFeeds.get(i) != null
                            ? "change feeds"
                            : flowKafka.get(i) ? "Kafka" : "files";
            byKind.computeIfAbsent(kind, k -> new ArrayList<>()).add(flowTargets.get(i));
        }
        List<String> out = new ArrayList<>();
        byKind.forEach((k, t) -> out.add(k + " (" + String.join(", ", t) + ")"));
        return out;
    }

    /**
     * Where the part of a flow that a {@code FLOW_CHANGED_FOR_EXISTING_STATE} message ({@code flow
     * '<name>': <part> changed from ...}, docs/semantics.md K8) names is written: the first KEYS
     * (or REPLACE USING) column for {@code keys} / {@code replace-using}, the SEQUENCE BY clause
     * for {@code sequence-by} / {@code sequence-type}, the flow's statement for anything else (the
     * SCD type, the kind of flow).
     *
     * @return null when the message names no flow of this file
     */
    @Nullable
    public SqlPosition placeOfChangedFlow(String message) {
        for (int i = 0; i < config.flows.size() && i < flowPlaces.size(); i++) {
            if (!message.contains("flow '" + config.flows.get(i).flowName() + "': ")) {
                continue;
            }
            FlowPlaces p = flowPlaces.get(i);
            if ((message.contains("': keys changed")
                            || message.contains("': replace-using changed"))
                    && !p.keyPositions().isEmpty()) {
                return p.keyPositions().get(0);
            }
            if ((message.contains("': sequence-by changed")
                            || message.contains("': sequence-type changed"))
                    && p.sequenceBy() != null) {
                return p.sequenceBy();
            }
            return p.statement();
        }
        return null;
    }

    /**
     * {@code e} as a {@link SqlException} at the place of the flow its message names, or {@code e}
     * itself when it names none (see {@link #plan()}).
     */
    RuntimeException locate(RuntimeException e) {
        if (e instanceof SqlException || e.getMessage() == null) {
            return e;
        }
        String msg = e.getMessage();
        for (int i = 0; i < config.flows.size(); i++) {
            if (!msg.contains("flow '" + config.flows.get(i).flowName() + "'")) {
                continue;
            }
            FlowPlaces p = flowPlaces.get(i);
            if (e instanceof dev.changeflow.jobs.ingest.AppendQuery.Invalid q) {
                return locateQuery(q, p);
            }
            for (SqlStatement.Constraint c : p.constraints()) {
                if (msg.contains("expectation '" + c.name() + "' (")) {
                    // S8: Flink's planner names a column it cannot resolve "Column 'x' not found"
                    Code expectation =
                            msg.contains("not found in any table")
                                    ? Code.UNKNOWN_COLUMN
                                    : Code.INVALID_EXPECTATION;
                    return new SqlException(expectation, c.position(), msg, e);
                }
            }
            boolean unknown =
                    msg.contains("is not a data column")
                            || msg.contains("is not a source column")
                            || msg.contains("is not in the source schema")
                            || msg.contains("' is not a column of "); // REPLACE USING (S5)
            Code code = unknown ? Code.UNKNOWN_COLUMN : Code.INVALID_FLOW;
            for (int k = 0; k < p.keys().size(); k++) {
                String named = "column '" + p.keys().get(k) + "'";
                if (msg.contains("key " + named)
                        || msg.contains("KEYS " + named)
                        || msg.contains("REPLACE USING " + named)) {
                    return new SqlException(code, p.keyPositions().get(k), msg, e);
                }
            }
            if (msg.contains("SEQUENCE BY column '") && p.sequenceBy() != null) {
                return new SqlException(code, p.sequenceBy(), msg, e);
            }
            return new SqlException(Code.INVALID_FLOW, p.statement(), msg, e);
        }
        return e;
    }

    /**
     * S1: an append flow's query Flink cannot run, at the place in its select list or WHERE that
     * Flink names (else where the part starts, else the statement): {@code UNKNOWN_COLUMN} for a
     * column the source rows lack, {@code UNSUPPORTED_STATEMENT} for a query that is not per row,
     * {@code COLUMN_LIST_MISMATCH} (at the table's statement) for a query whose columns are not the
     * table's declared ones, {@code INVALID_QUERY} otherwise.
     */
    private static SqlException locateQuery(
            dev.changeflow.jobs.ingest.AppendQuery.Invalid q, FlowPlaces p) {
        SqlStatement.Select select = p.select();
        SqlPosition at = p.statement();
        if (q.columnList()) {
            return new SqlException(Code.COLUMN_LIST_MISMATCH, at, q.getMessage(), q);
        }
        if (select != null && q.part() == dev.changeflow.jobs.ingest.AppendQuery.Part.SELECT) {
            at = within(select.listPosition(), q.line(), q.column());
        } else if (select != null
                && select.wherePosition() != null
                && q.part() == dev.changeflow.jobs.ingest.AppendQuery.Part.WHERE) {
            at = within(select.wherePosition(), q.line(), q.column());
        } else if (select != null) {
            at = select.listPosition();
        }
        Code code =
                q.notPerRow()
                        ? Code.UNSUPPORTED_STATEMENT
                        : q.unknownColumn() ? Code.UNKNOWN_COLUMN : Code.INVALID_QUERY;
        return new SqlException(code, at, q.getMessage(), q);
    }

    /** The file position of line/column (1-based; 0: unknown) of a text laid out from start. */
    private static SqlPosition within(SqlPosition start, int line, int column) {
        if (line <= 0 || column <= 0) {
            return start;
        }
        return new SqlPosition(
                start.file(),
                start.line() + line - 1,
                line == 1 ? start.column() + column - 1 : column);
    }

    /**
     * The schedule of each scheduled streaming table after the file's {@code ALTER STREAMING TABLE
     * ... SCHEDULE} statements (S3), by the table's name as declared, in declaration order. Tables
     * without a schedule are absent.
     */
    public Map<String, Schedule> schedules() {
        return schedules;
    }

    /**
     * The continuous job of the file (docs/semantics.md S3): the flows of its streaming tables
     * without SCHEDULE, which the FlinkDeployment of {@code deploy --print FILE.sql} runs until
     * stopped ({@code run --cluster FILE.sql}); the scheduled tables belong to their CronJobs. It
     * is this pipeline restricted to those tables as {@link #refreshOnly} restricts it, but keeps
     * the pipeline's name: the job is {@code changeflow ingest <name>} and its default Kafka
     * consumer group {@code changeflow-<name>}. A continuous job on a cluster reads the file's
     * {@code read_kafka} subscription only (one per file, as a local run has).
     *
     * @return null when every streaming table of the file has a schedule
     * @throws SqlException {@code INVALID_SCHEDULE}, naming the table and the fix (give it a
     *     SCHEDULE, or read it from Kafka): at the {@code read_files} call of the first table
     *     without schedule whose flow reads files, at the {@code STREAM(table)} of one whose flow
     *     reads a change feed, at the statement of a FLOW REPLACE WHERE table (S4) or the source of
     *     an AUTO CDC FROM SNAPSHOT table (A6) without schedule (each a bounded refresh)
     */
    @Nullable
    public SqlPipeline continuous() {
        List<String> unscheduled = new ArrayList<>();
        for (String t : tables) {
            if (!schedules.containsKey(t)) {
                unscheduled.add(t);
            }
        }
        if (unscheduled.isEmpty()) {
            return null;
        }
        String fix =
                ": give it a SCHEDULE EVERY ... or SCHEDULE CRON ... clause (a CronJob then"
                        + " refreshes it), or read its records from Kafka with STREAM"
                        + " read_kafka(...)";
        for (String t : unscheduled) {
            ReplaceWhereTable rw = replaceWhere(t);
            SnapshotTable st = snapshotTable(t);
            if (rw != null || st != null) {
                throw new SqlException(
                        Code.INVALID_SCHEDULE,
                        st != null ? st.sourcePosition() : declaration(t).position(),
                        "streaming table "
                                + t
                                + " has no SCHEDULE, so it would run in the continuous"
                                + " FlinkDeployment, but its "
                                + (rw != null
                                        ? "FLOW REPLACE WHERE (S4)"
                                        : "AUTO CDC FROM SNAPSHOT (A6)")
                                + " is a bounded refresh: give it a SCHEDULE EVERY ... or"
                                + " SCHEDULE CRON ... clause (a CronJob then refreshes it)");
            }
        }
        for (int i = 0; i < flowTargets.size(); i++) {
            String t = flowTargets.get(i);
            if (schedules.containsKey(t)) {
                continue;
            }
            Feed feed = flowFeeds.get(i);
            Input in = flowInputs.get(i);
            if (feed != null) {
                throw new SqlException(
                        Code.INVALID_SCHEDULE,
                        feed.position(),
                        "streaming table "
                                + t
                                + " has no SCHEDULE, so it would run in the continuous"
                                + " FlinkDeployment, which reads Kafka only, and its flow reads"
                                + " the change feed of "
                                + feed.table()
                                + " (STREAM)"
                                + fix);
            }
            if (in != null) {
                throw new SqlException(
                        Code.INVALID_SCHEDULE,
                        in.position(),
                        "streaming table "
                                + t
                                + " has no SCHEDULE, so it would run in the continuous"
                                + " FlinkDeployment, which reads Kafka only, and its flow reads"
                                + " files (read_files "
                                + (in.written() != null ? "'" + in.written() + "'" : in.name())
                                + ")"
                                + fix);
            }
        }
        SqlPipeline out = refreshOnly(unscheduled, "the continuous job");
        // the continuous job is the pipeline's own (refreshOnly names a subset's job after it)
        out.config.name = config.name;
        return out;
    }

    /**
     * S3: a job on Kubernetes (a scheduled table's CronJob, the continuous FlinkDeployment) writes
     * the tables to the file's Iceberg catalog, since a pod has no shared local warehouse.
     *
     * @param file the file as messages name it
     * @param who what writes the tables, e.g. {@code "a scheduled refresh"}
     * @throws IllegalArgumentException {@code <file>: INVALID_OPTION: ...} when the file names no
     *     catalog ({@code SET catalog.<property> = ...}), with the fix
     */
    public void requireCatalog(String file, String who) {
        if (config.catalog.isEmpty()) {
            throw new IllegalArgumentException(
                    file
                            + ": INVALID_OPTION: "
                            + who
                            + " writes the tables to the file's Iceberg catalog, and the file"
                            + " names none: add SET catalog.type = 'rest'; SET catalog.uri ="
                            + " '...'; (a pod has no shared local warehouse)");
        }
    }

    /**
     * Checks that every table of this pipeline may be fully refreshed ({@code REFRESH ... FULL},
     * {@code run --full-refresh}, S1).
     *
     * @throws SqlException {@code RESET_NOT_ALLOWED} at the table's statement when its {@code
     *     TBLPROPERTIES} set {@code 'pipelines.reset.allowed' = 'false'}
     */
    public void checkFullRefreshAllowed() {
        for (String t : tables) {
            SqlPosition at = resetForbidden.get(t);
            if (at != null) {
                throw new SqlException(
                        Code.RESET_NOT_ALLOWED,
                        at,
                        "streaming table "
                                + t
                                + " sets '"
                                + RESET_ALLOWED
                                + "' = 'false': a full refresh would empty it, so it is refused;"
                                + " refresh it without FULL, or remove the property first");
            }
        }
    }

    /** Every streaming table of the file, by its name as declared, in declaration order. */
    public List<String> tables() {
        return tables;
    }

    /**
     * A {@code read_files} path, and where it is named: a local path resolved against the file's
     * folder (a {@code file:} path), or an object-store URI as written ({@code
     * s3://bucket/prefix/}, {@code gs://...}, {@code abfss://...}; docs/semantics.md S2), each read
     * through Flink's file systems.
     */
    public record Input(
            org.apache.flink.core.fs.Path file, SqlPosition position, @Nullable String written) {
        /** An input whose path as written is not known. */
        public Input(org.apache.flink.core.fs.Path file, SqlPosition position) {
            this(file, position, null);
        }

        /**
         * Whether the path was written as a relative local path ({@code 'data/sales'}), resolved
         * against the {@code .sql} file's folder.
         */
        public boolean relative() {
            return written != null
                    && local()
                    && !written.startsWith("file:")
                    && !Path.of(written).isAbsolute();
        }

        /** Whether the path is on the local file system. */
        public boolean local() {
            String scheme = file.toUri().getScheme();
            return scheme == null || scheme.equals("file");
        }

        /**
         * The local path.
         *
         * @throws IllegalStateException when the path is on another file system ({@link #local()}
         *     false)
         */
        public Path path() {
            if (!local()) {
                throw new IllegalStateException("not a local path: " + file);
            }
            return Path.of(file.toUri().getPath());
        }

        /** The path as messages show it: a local absolute path, else the URI. */
        public String name() {
            return dev.changeflow.sources.files.FileGlob.key(file);
        }
    }

    /**
     * {@code STREAM(table)} naming no temporary view: the change feed of that Iceberg table (S7),
     * the name as written (without {@code LIVE.}), and where it is named.
     */
    public record Feed(String table, SqlPosition position) {}

    /** Every distinct change-feed source, in the order the flows name them. */
    public List<Feed> feeds() {
        return feeds;
    }

    /** The flows and file-level options, validated as {@code FlowsFile} validates its own. */
    public IngestConfig config() {
        return config;
    }

    /** Every distinct {@code read_files} path, in the order the flows name them. */
    public List<Input> inputs() {
        return inputs;
    }

    /**
     * The input paths alone, as local paths.
     *
     * @throws IllegalStateException when an input is on another file system (use {@link
     *     #inputFiles()})
     */
    public List<Path> inputPaths() {
        List<Path> out = new ArrayList<>();
        inputs.forEach(i -> out.add(i.path()));
        return out;
    }

    /** The input paths alone, on any Flink file system (local ones as {@code file:} paths). */
    public List<org.apache.flink.core.fs.Path> inputFiles() {
        List<org.apache.flink.core.fs.Path> out = new ArrayList<>();
        inputs.forEach(i -> out.add(i.file()));
        return out;
    }

    /** What the file says that changes nothing (ignored table properties, USE CATALOG). */
    public List<String> warnings() {
        return warnings;
    }

    /**
     * Reads, parses and compiles a pipeline file; errors name it as given.
     *
     * @throws SqlException for any error of the file (see {@link SqlException} for the codes)
     * @throws IOException when the file cannot be read
     */
    public static SqlPipeline read(Path file) throws IOException {
        String n = file.getFileName().toString();
        String name =
                dev.changeflow.jobs.config.IngestOptions.jobNameOf(
                        n.endsWith(".sql") ? n.substring(0, n.length() - 4) : n);
        Path dir = file.toAbsolutePath().getParent();
        return compile(Files.readString(file), file.toString(), dir, name);
    }

    /**
     * Parses and compiles pipeline text.
     *
     * @param text the statements
     * @param where how positions name the file
     * @param baseDir the folder relative {@code read_files} paths are resolved against
     * @param defaultName the job's name unless {@code SET name = ...} gives one
     * @throws SqlException for any error of the text (see {@link SqlException} for the codes)
     */
    public static SqlPipeline compile(String text, String where, Path baseDir, String defaultName) {
        return new SqlCompiler(baseDir, where).compile(SqlParser.parse(text, where), defaultName);
    }
}
