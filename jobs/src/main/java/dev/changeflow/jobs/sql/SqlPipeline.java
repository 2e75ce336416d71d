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
import dev.changeflow.jobs.sql.SqlStatement.AlterSchedule;
import dev.changeflow.jobs.sql.SqlStatement.AutoCdc;
import dev.changeflow.jobs.sql.SqlStatement.Column;
import dev.changeflow.jobs.sql.SqlStatement.CreateFlow;
import dev.changeflow.jobs.sql.SqlStatement.CreateStreamingTable;
import dev.changeflow.jobs.sql.SqlStatement.CreateView;
import dev.changeflow.jobs.sql.SqlStatement.Flow;
import dev.changeflow.jobs.sql.SqlStatement.ReadFiles;
import dev.changeflow.jobs.sql.SqlStatement.Schedule;
import dev.changeflow.jobs.sql.SqlStatement.Source;
import dev.changeflow.jobs.sql.SqlStatement.Use;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.sinks.iceberg.CatalogOptions;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.cdf.ChangeFeedColumns;
import dev.changeflow.sources.cdf.ChangeType;
import dev.changeflow.sources.cdf.StreamingAccess;
import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.kafka.KafkaInput;

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
import java.util.Optional;
import java.util.TreeSet;

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
 * ingest}); a relative path is resolved against the file's folder. Rules: docs/semantics.md S1
 * (statements, errors), S2 (read_files), A1 (the flow definition).
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
    private static final Map<String, ConfigOption<?>> READ_KAFKA_OPTIONS =
            Map.of(
                    "bootstrapServers", KafkaOptions.BOOTSTRAP_SERVERS,
                    "subscribe", KafkaOptions.TOPICS,
                    "subscribePattern", KafkaOptions.TOPIC_PATTERN,
                    "startingOffsets", KafkaOptions.STARTING_OFFSETS);

    private static final Map<String, String> SET_ALIASES =
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

    /** Where a flow's statement, KEYS columns and SEQUENCE BY clause are written. */
    private record FlowPlaces(
            SqlPosition statement,
            List<String> keys,
            List<SqlPosition> keyPositions,
            @Nullable SqlPosition sequenceBy) {}

    private SqlPipeline(
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

    /**
     * The pipeline restricted to the flows that write the named tables ({@code run --refresh
     * t,...}, the refresh a scheduled table's CronJob runs, S3). Naming every table gives this
     * pipeline. A true subset is a job of its own, named {@code <name>-refresh-<table>-...} in
     * declaration order, so its saved state (local checkpoints are per job name) is not mixed with
     * the whole pipeline's.
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
            chosen.add(k);
        }
        if (chosen.size() == tables.size()) {
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
                Path path = flowInputs.get(i).path();
                if (distinct.stream().noneMatch(in -> in.path().equals(path))) {
                    distinct.add(flowInputs.get(i));
                }
            }
        }
        for (int i = 0; i < flowTargets.size(); i++) {
            String other = flowTargets.get(i);
            if (flowInputs.get(i) == null) {
                continue; // a change feed or Kafka: every job reads from a position of its own
            }
            Path path = flowInputs.get(i).path();
            if (!chosen.contains(other.toLowerCase(Locale.ROOT))
                    && distinct.stream().anyMatch(in -> in.path().equals(path))) {
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
                labels.add(t.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]+", "_"));
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
     * giving an error of a flow the place it is about: a KEYS column the records do not have at
     * that column ({@code UNKNOWN_COLUMN}), a SEQUENCE BY the records cannot give at the clause
     * ({@code UNKNOWN_COLUMN}), any other error of a flow at its statement ({@code INVALID_FLOW}).
     *
     * @throws SqlException for an error of a flow
     * @throws IOException when an input cannot be read
     */
    public IngestPlan plan() throws IOException {
        try {
            if (config.kafka != null) {
                // A5: the first record of each partition chooses the default sequence
                return IngestPlanner.plan(
                        config,
                        List.of(),
                        KafkaSampler.firstRecords(
                                config.kafka,
                                config.kafka.groupId != null
                                        ? config.kafka.groupId
                                        : IngestJob.defaultGroupId(config),
                                KafkaSampler.DEFAULT_TIMEOUT));
            }
            return IngestPlanner.plan(config, inputPaths());
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
            return plan();
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
        try {
            return IngestPlanner.planChangeFeeds(config, sources, types);
        } catch (IllegalArgumentException | AutoCdcException e) {
            throw locate(e);
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
            boolean unknown =
                    msg.contains("is not a data column")
                            || msg.contains("is not a source column")
                            || msg.contains("is not in the source schema");
            Code code = unknown ? Code.UNKNOWN_COLUMN : Code.INVALID_FLOW;
            for (int k = 0; k < p.keys().size(); k++) {
                String named = "column '" + p.keys().get(k) + "'";
                if (msg.contains("key " + named) || msg.contains("KEYS " + named)) {
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
     * The schedule of each scheduled streaming table after the file's {@code ALTER STREAMING TABLE
     * ... SCHEDULE} statements (S3), by the table's name as declared, in declaration order. Tables
     * without a schedule are absent.
     */
    public Map<String, Schedule> schedules() {
        return schedules;
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

    /** A {@code read_files} path resolved against the file's folder, and where it is named. */
    public record Input(Path path, SqlPosition position) {}

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

    /** The input paths alone. */
    public List<Path> inputPaths() {
        List<Path> out = new ArrayList<>();
        inputs.forEach(i -> out.add(i.path()));
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
        String name = n.endsWith(".sql") ? n.substring(0, n.length() - 4) : n;
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
        return new Compiler(baseDir, where).compile(SqlParser.parse(text, where), defaultName);
    }

    /** One pass over the statements collects them, a second compiles the flows. */
    private static final class Compiler {
        private final Path baseDir;
        private final String where;
        private final List<OptionLayer> fileLayers = new ArrayList<>();
        private final List<OptionLayer> catalog = new ArrayList<>();
        private final Map<String, CreateView> views = new LinkedHashMap<>();
        private final Map<String, CreateStreamingTable> tables = new LinkedHashMap<>();
        private final List<FlowDef> flows = new ArrayList<>();
        private final List<String> warnings = new ArrayList<>();
        private final Map<String, Schedule> schedules = new LinkedHashMap<>();
        private final List<SqlStatement.Refresh> refreshes = new ArrayList<>();

        /** A flow with the statement defining it. */
        private record FlowDef(SqlPosition position, String name, String target, Flow flow) {}

        Compiler(Path baseDir, String where) {
            this.baseDir = baseDir;
            this.where = where;
        }

        SqlPipeline compile(List<SqlStatement> statements, String defaultName) {
            for (SqlStatement s : statements) {
                if (s instanceof SqlStatement.Set set) {
                    set(set);
                } else if (s instanceof Use use) {
                    use(use);
                } else if (s instanceof CreateView v) {
                    if (views.putIfAbsent(key(v.name()), v) != null) {
                        throw new SqlException(
                                Code.DUPLICATE_VIEW,
                                v.position(),
                                "view "
                                        + v.name()
                                        + " is already defined at "
                                        + views.get(key(v.name())).position());
                    }
                } else if (s instanceof CreateStreamingTable t) {
                    CreateStreamingTable before = tables.putIfAbsent(key(t.name()), t);
                    if (before != null) {
                        throw new SqlException(
                                Code.DUPLICATE_TABLE,
                                t.position(),
                                "streaming table "
                                        + t.name()
                                        + " is already defined at "
                                        + before.position());
                    }
                    checkColumnTypes(t);
                    if (t.flow() != null) {
                        flows.add(new FlowDef(t.position(), null, t.name(), t.flow()));
                    }
                    if (t.schedule() != null) {
                        schedules.put(key(t.name()), t.schedule());
                    }
                } else if (s instanceof AlterSchedule a) {
                    alterSchedule(a);
                } else if (s instanceof CreateFlow f) {
                    flows.add(new FlowDef(f.position(), f.name(), f.target(), f.flow()));
                } else if (s instanceof SqlStatement.Refresh r) {
                    refreshes.add(r);
                }
            }
            if (flows.isEmpty()) {
                throw new SqlException(
                        Code.INVALID_FLOW,
                        firstPosition(statements),
                        "the file defines no flow: give a streaming table FLOW AUTO CDC FROM"
                                + " STREAM(...) KEYS (...), or add CREATE FLOW ... AS AUTO CDC INTO"
                                + " ...");
            }
            IngestConfig cfg = new IngestConfig();
            cfg.name = defaultName;
            // per flow: its read_files call, or null for a change feed (then in feedOf)
            List<ReadFiles> sources = new ArrayList<>();
            List<Feed> feedOf = new ArrayList<>();
            List<SqlStatement.ReadKafka> kafkaOf = new ArrayList<>();
            for (FlowDef f : flows) {
                Object source = resolve(f.flow().source());
                sources.add(source instanceof ReadFiles r ? r : null);
                feedOf.add(source instanceof Feed feed ? feed : null);
                kafkaOf.add(source instanceof SqlStatement.ReadKafka k ? k : null);
            }
            cfg.kafka = kafka(kafkaOf);
            List<OptionLayer> top = new ArrayList<>(fileLayers);
            List<ReadFiles> files = new ArrayList<>(sources);
            files.removeIf(java.util.Objects::isNull);
            formatLayer(files).ifPresent(top::add);
            try {
                cfg.apply(OptionsResolver.resolve(IngestOptions.SET, top));
            } catch (IllegalArgumentException e) {
                throw asSqlException(e, Code.INVALID_OPTION, firstPosition(statements));
            }
            cfg.catalog.putAll(CatalogOptions.resolve(catalog));
            Map<String, FlowDef> byTarget = new LinkedHashMap<>();
            Map<String, FlowDef> byName = new LinkedHashMap<>();
            List<Input> inputs = new ArrayList<>();
            List<String> flowTargets = new ArrayList<>();
            List<Input> flowInputs = new ArrayList<>();
            List<FlowPlaces> flowPlaces = new ArrayList<>();
            List<Feed> feeds = new ArrayList<>();
            List<Feed> flowFeeds = new ArrayList<>();
            List<Boolean> flowKafka = new ArrayList<>();
            for (int i = 0; i < flows.size(); i++) {
                FlowDef f = flows.get(i);
                CreateStreamingTable target = tables.get(key(f.target()));
                if (target == null) {
                    throw new SqlException(
                            Code.UNKNOWN_TABLE,
                            f.position(),
                            "the flow writes "
                                    + f.target()
                                    + ", which no CREATE STREAMING TABLE of the file declares"
                                    + " (declare the target first: CREATE OR REFRESH STREAMING TABLE "
                                    + f.target()
                                    + ";)");
                }
                FlowDef other = byTarget.putIfAbsent(key(target.name()), f);
                if (other != null) {
                    throw new SqlException(
                            Code.DUPLICATE_FLOW,
                            f.position(),
                            "streaming table "
                                    + target.name()
                                    + " is already written by the flow at "
                                    + other.position()
                                    + "; a table is written by one flow");
                }
                ReadFiles source = sources.get(i);
                Feed feed = feedOf.get(i);
                SqlStatement.ReadKafka kafka = kafkaOf.get(i);
                FlowConfig flow =
                        feed != null
                                ? feedFlow(f, target, feed)
                                : kafka != null
                                        ? flow(f, target, shortName(target), Map.of())
                                        : flow(f, target, source);
                // a flow without a name is named after its target (FlowConfig.flowName)
                other = byName.putIfAbsent(key(flow.flowName()), f);
                if (other != null) {
                    throw new SqlException(
                            Code.DUPLICATE_FLOW,
                            f.position(),
                            "flow "
                                    + flow.flowName()
                                    + " is already defined at "
                                    + other.position()
                                    + " (a flow without a name is named after its table)");
                }
                cfg.flows.add(flow);
                AutoCdc cdc = f.flow().autoCdc();
                flowPlaces.add(
                        cdc == null
                                ? new FlowPlaces(f.position(), List.of(), List.of(), null)
                                : new FlowPlaces(
                                        f.position(),
                                        cdc.keys(),
                                        cdc.keyPositions(),
                                        cdc.sequenceByPosition()));
                flowTargets.add(target.name());
                flowFeeds.add(feed);
                flowKafka.add(kafka != null);
                if (feed != null || kafka != null) {
                    flowInputs.add(null);
                    if (feed != null
                            && feeds.stream()
                                    .noneMatch(x -> key(x.table()).equals(key(feed.table())))) {
                        feeds.add(feed);
                    }
                    continue;
                }
                Path path = path(source);
                flowInputs.add(new Input(path, source.position()));
                if (inputs.stream().noneMatch(in -> in.path().equals(path))) {
                    inputs.add(new Input(path, source.position()));
                }
            }
            for (CreateStreamingTable t : tables.values()) {
                if (!byTarget.containsKey(key(t.name()))) {
                    throw new SqlException(
                            Code.TABLE_WITHOUT_FLOW,
                            t.position(),
                            "no flow writes streaming table "
                                    + t.name()
                                    + ": add CREATE FLOW ... AS AUTO CDC INTO "
                                    + t.name()
                                    + " FROM STREAM(...) KEYS (...), or give the table FLOW AUTO CDC"
                                    + " or AS SELECT * FROM STREAM(...)");
                }
            }
            Map<String, Schedule> scheduled = new LinkedHashMap<>();
            List<String> tableNames = new ArrayList<>();
            for (CreateStreamingTable t : tables.values()) {
                tableNames.add(t.name());
                Schedule sc = schedules.get(key(t.name()));
                if (sc != null) {
                    scheduled.put(t.name(), sc);
                }
            }
            Map<String, SqlPosition> forbidden = new LinkedHashMap<>();
            for (CreateStreamingTable t : tables.values()) {
                String v = t.properties().get(RESET_ALLOWED);
                if (v != null && v.trim().equalsIgnoreCase("false")) {
                    forbidden.put(t.name(), t.position());
                }
            }
            SqlPipeline pipeline =
                    new SqlPipeline(
                            cfg,
                            inputs,
                            warnings,
                            scheduled,
                            tableNames,
                            flowTargets,
                            flowInputs,
                            flowPlaces,
                            forbidden,
                            refreshes,
                            feeds,
                            flowFeeds,
                            flowKafka);
            for (SqlStatement.Refresh r : refreshes) {
                checkRefresh(pipeline, r);
            }
            return pipeline;
        }

        /**
         * A REFRESH statement must name streaming tables of the file that can be refreshed on their
         * own ({@link SqlPipeline#refreshOnly(List, String)}), and FULL tables that allow it.
         */
        private void checkRefresh(SqlPipeline pipeline, SqlStatement.Refresh r) {
            for (String t : r.tables()) {
                if (!tables.containsKey(key(t))) {
                    throw new SqlException(
                            Code.UNKNOWN_TABLE,
                            r.position(),
                            "REFRESH STREAMING TABLE "
                                    + t
                                    + ": no CREATE STREAMING TABLE of the file declares that table"
                                    + " (tables: "
                                    + String.join(", ", pipeline.tables())
                                    + ")");
                }
            }
            SqlPipeline selected;
            try {
                selected = pipeline.refreshOnly(r.tables(), "REFRESH STREAMING TABLE");
            } catch (SqlException e) {
                throw e;
            } catch (IllegalArgumentException e) {
                throw new SqlException(Code.INVALID_REFRESH, r.position(), e.getMessage(), e);
            }
            if (r.full()) {
                selected.checkFullRefreshAllowed();
            }
        }

        /**
         * Every declared column's type must be a Flink SQL type ({@code UNKNOWN_TYPE} at the type,
         * e.g. {@code INTEGR}).
         */
        private void checkColumnTypes(CreateStreamingTable t) {
            for (Column c : t.columns()) {
                try {
                    SchemaSampler.parseColumns("`" + c.name() + "` " + c.type());
                } catch (IllegalArgumentException e) {
                    throw new SqlException(
                            Code.UNKNOWN_TYPE,
                            c.typePosition(),
                            "streaming table "
                                    + t.name()
                                    + ": "
                                    + e.getMessage()
                                    + " (Flink SQL types: INT, BIGINT, STRING, DECIMAL(p, s),"
                                    + " TIMESTAMP(p), DATE, BOOLEAN, ARRAY<t>, ROW<...>, ...)",
                            e);
                }
            }
        }

        /**
         * Applies {@code ALTER STREAMING TABLE ... SCHEDULE} to a table declared above it (S3): ADD
         * needs a table without a schedule, ALTER and DROP one with a schedule.
         */
        private void alterSchedule(AlterSchedule a) {
            CreateStreamingTable t = tables.get(key(a.table()));
            if (t == null) {
                throw new SqlException(
                        Code.UNKNOWN_TABLE,
                        a.position(),
                        "ALTER STREAMING TABLE "
                                + a.table()
                                + ": no CREATE STREAMING TABLE above it declares that table");
            }
            boolean has = schedules.containsKey(key(a.table()));
            if (a.action() == AlterSchedule.Action.ADD && has) {
                throw new SqlException(
                        Code.INVALID_SCHEDULE,
                        a.position(),
                        "streaming table "
                                + t.name()
                                + " already has a schedule: change it with ALTER SCHEDULE");
            }
            if (a.action() != AlterSchedule.Action.ADD && !has) {
                throw new SqlException(
                        Code.INVALID_SCHEDULE,
                        a.position(),
                        "streaming table "
                                + t.name()
                                + " has no schedule to "
                                + a.action()
                                + ": add one with ADD SCHEDULE");
            }
            if (a.action() == AlterSchedule.Action.DROP) {
                schedules.remove(key(a.table()));
            } else {
                schedules.put(key(a.table()), a.schedule());
            }
        }

        private void set(SqlStatement.Set s) {
            String key = s.key().trim();
            String label = s.position() + ": SET " + key;
            if (key.regionMatches(true, 0, "catalog.", 0, 8) && key.length() > 8) {
                OptionLayer property =
                        OptionLayer.single(
                                OptionSource.DEFINITION, label, key.substring(8), s.value());
                try {
                    CatalogOptions.resolve(List.of(property));
                } catch (IllegalArgumentException e) {
                    throw asSqlException(e, Code.INVALID_OPTION, s.position());
                }
                catalog.add(property);
                return;
            }
            String option = SET_ALIASES.getOrDefault(key, key);
            if (!IngestOptions.SET.keys().contains(option)) {
                throw new SqlException(
                        Code.INVALID_OPTION,
                        s.position(),
                        "unknown SET key '"
                                + key
                                + "' (known: "
                                + String.join(", ", new TreeSet<>(IngestOptions.SET.keys()))
                                + ", "
                                + String.join(", ", new TreeSet<>(SET_ALIASES.keySet()))
                                + ", catalog.<Iceberg catalog property>)");
            }
            OptionLayer layer =
                    OptionLayer.single(OptionSource.DEFINITION, label, option, s.value());
            try {
                OptionsResolver.resolve(IngestOptions.SET, List.of(layer));
            } catch (IllegalArgumentException e) {
                throw asSqlException(e, Code.INVALID_OPTION, s.position());
            }
            fileLayers.add(layer);
        }

        private void use(Use u) {
            if (u.catalog() != null) {
                warnings.add(
                        u.position()
                                + ": USE CATALOG "
                                + u.catalog()
                                + " changes nothing: the tables go to the catalog of --warehouse"
                                + " or of SET catalog.<property>");
                return;
            }
            fileLayers.add(
                    OptionLayer.single(
                            OptionSource.DEFINITION,
                            u.position() + ": USE",
                            IngestOptions.NAMESPACE.key(),
                            u.namespace()));
        }

        /** The layer of the {@code format =>} of the read_files calls, which must agree. */
        private Optional<OptionLayer> formatLayer(List<ReadFiles> sources) {
            ReadFiles first = null;
            for (ReadFiles r : sources) {
                String f = r.arguments().get("format");
                if (f == null) {
                    continue;
                }
                if (first == null) {
                    first = r;
                } else if (!first.arguments().get("format").equalsIgnoreCase(f)) {
                    throw new SqlException(
                            Code.CONFLICTING_FORMATS,
                            r.position(),
                            "read_files format '"
                                    + f
                                    + "' differs from format '"
                                    + first.arguments().get("format")
                                    + "' at "
                                    + first.position()
                                    + ": the files of one pipeline are read with one format");
                }
            }
            if (first == null) {
                return Optional.empty();
            }
            OptionLayer layer =
                    OptionLayer.single(
                            OptionSource.DEFINITION,
                            first.position() + ": read_files",
                            IngestOptions.FORMAT.key(),
                            first.arguments().get("format"));
            try {
                OptionsResolver.resolve(IngestOptions.SET, List.of(layer));
            } catch (IllegalArgumentException e) {
                throw asSqlException(e, Code.INVALID_OPTION, first.position());
            }
            return Optional.of(layer);
        }

        /**
         * What a source reads: a {@link ReadFiles} call (itself, or the one of the view it names),
         * or a {@link Feed}: a name that is no view of the file is the change feed of that table
         * (S7).
         */
        private Object resolve(Source source) {
            if (source instanceof ReadFiles || source instanceof SqlStatement.ReadKafka) {
                return source;
            }
            SqlStatement.Named n = (SqlStatement.Named) source;
            CreateView v = views.get(key(n.name()));
            if (v == null) {
                return new Feed(n.name(), n.position());
            }
            if (v.source() instanceof SqlStatement.Named inner
                    && key(inner.name()).equals(key(v.name()))) {
                throw new SqlException(
                        Code.UNKNOWN_SOURCE,
                        inner.position(),
                        "view " + v.name() + " reads itself");
            }
            return resolve(v.source());
        }

        private List<String> viewNames() {
            List<String> out = new ArrayList<>();
            views.values().forEach(v -> out.add(v.name()));
            return out;
        }

        /**
         * A flow over the change feed of a table (S7): an AUTO CDC flow (refused otherwise) whose
         * SEQUENCE BY defaults to {@code _commit_version} and APPLY AS DELETE WHEN to {@code
         * _change_type = 'delete'}; its columns are the source table's, so the target declares
         * none.
         */
        private FlowConfig feedFlow(FlowDef f, CreateStreamingTable target, Feed feed) {
            if (f.flow().autoCdc() == null) {
                throw new SqlException(
                        Code.UNSUPPORTED_STATEMENT,
                        feed.position(),
                        "not supported by changeflow yet: an append flow over STREAM("
                                + feed.table()
                                + "), which is the change feed of a table (with updates and"
                                + " deletes): read it with AUTO CDC ... KEYS (...), or name a"
                                + " temporary view over read_files");
            }
            if (!target.columns().isEmpty()) {
                throw new SqlException(
                        Code.UNSUPPORTED_STATEMENT,
                        target.position(),
                        "not supported by changeflow yet: a column list on streaming table "
                                + target.name()
                                + ", which reads the change feed of "
                                + feed.table()
                                + ": its columns are the source table's; choose them with COLUMNS");
            }
            int dot = feed.table().lastIndexOf('.');
            Map<String, Object> defaults = new LinkedHashMap<>();
            defaults.put(FlowOptions.FORMAT.key(), "json");
            defaults.put(FlowOptions.SEQUENCE_BY.key(), ChangeFeedColumns.COMMIT_VERSION);
            defaults.put(
                    FlowOptions.APPLY_AS_DELETE_WHEN.key(),
                    ChangeFeedColumns.CHANGE_TYPE + " = '" + ChangeType.DELETE.value() + "'");
            return flow(f, target, feed.table().substring(dot + 1), defaults);
        }

        private FlowConfig flow(FlowDef f, CreateStreamingTable target, ReadFiles source) {
            return flow(
                    f,
                    target,
                    source.arguments().getOrDefault("table", shortName(target)),
                    Map.of());
        }

        /** The target's name without namespace: the default source table of a flow. */
        private static String shortName(CreateStreamingTable target) {
            int dot = target.name().lastIndexOf('.');
            return target.name().substring(dot + 1);
        }

        /**
         * The Kafka input of the read_kafka calls (all alike: one job reads one subscription), or
         * null without one; its arguments are resolved as {@link KafkaOptions} (INVALID_OPTION).
         */
        @Nullable
        private KafkaInput kafka(List<SqlStatement.ReadKafka> calls) {
            SqlStatement.ReadKafka first = null;
            for (SqlStatement.ReadKafka k : calls) {
                if (k == null) {
                    continue;
                }
                if (first == null) {
                    first = k;
                } else if (!first.arguments().equals(k.arguments())) {
                    throw new SqlException(
                            Code.CONFLICTING_SOURCES,
                            k.position(),
                            "read_kafka "
                                    + k.arguments()
                                    + " differs from read_kafka "
                                    + first.arguments()
                                    + " at "
                                    + first.position()
                                    + ": the flows of one job read one Kafka subscription, and"
                                    + " records reach the flow of their table (the topic's last"
                                    + " segment or source.table)");
                }
            }
            if (first == null) {
                return null;
            }
            Map<String, Object> options = new LinkedHashMap<>();
            for (Map.Entry<String, String> a : first.arguments().entrySet()) {
                options.put(READ_KAFKA_OPTIONS.get(a.getKey()).key(), a.getValue());
            }
            KafkaInput input = new KafkaInput();
            try {
                KafkaOptions.apply(
                        OptionsResolver.resolve(
                                KafkaOptions.SET,
                                List.of(
                                        OptionLayer.of(
                                                OptionSource.DEFINITION,
                                                first.position() + ": read_kafka",
                                                options))),
                        input);
                input.validate();
            } catch (IllegalArgumentException e) {
                throw asSqlException(e, Code.INVALID_OPTION, first.position());
            }
            return input;
        }

        /**
         * A flow's options from its statement and its target's declaration.
         *
         * @param table the source table ({@code table})
         * @param defaults options the statement's clauses override (same layer)
         */
        private FlowConfig flow(
                FlowDef f,
                CreateStreamingTable target,
                String table,
                Map<String, Object> defaults) {
            String targetName = target.name();
            int dot = targetName.lastIndexOf('.');
            String shortName = dot < 0 ? targetName : targetName.substring(dot + 1);
            Map<String, Object> def = new LinkedHashMap<>(defaults);
            def.put(FlowOptions.TABLE.key(), table);
            if (dot >= 0 || !shortName.equals(table)) {
                def.put(FlowOptions.TARGET.key(), targetName);
            }
            if (f.name() != null && !f.name().equals(shortName)) {
                def.put(FlowOptions.NAME.key(), f.name());
            }
            AutoCdc cdc = f.flow().autoCdc();
            if (cdc == null) {
                def.put(FlowOptions.APPEND_ONLY.key(), "true");
            } else {
                def.put(FlowOptions.KEYS.key(), cdc.keys());
                putIfSet(def, FlowOptions.SEQUENCE_BY.key(), cdc.sequenceBy());
                putIfSet(
                        def,
                        FlowOptions.SCD_TYPE.key(),
                        cdc.scdType() == null ? null : cdc.scdType().toString());
                putIfSet(def, FlowOptions.COLUMNS.key(), cdc.columns());
                putIfSet(
                        def,
                        FlowOptions.IGNORE_NULL_UPDATES.key(),
                        cdc.ignoreNullUpdates() ? "true" : null);
                putIfSet(def, FlowOptions.TRACK_HISTORY_ON.key(), cdc.trackHistoryOn());
                putIfSet(def, FlowOptions.APPLY_AS_DELETE_WHEN.key(), cdc.applyAsDeleteWhen());
                putIfSet(def, FlowOptions.APPLY_AS_TRUNCATE_WHEN.key(), cdc.applyAsTruncateWhen());
            }
            if (!target.columns().isEmpty()) {
                List<String> cols = new ArrayList<>();
                for (Column c : target.columns()) {
                    cols.add(c.name() + " " + c.type() + (c.notNull() ? " NOT NULL" : ""));
                }
                def.put(FlowOptions.SCHEMA.key(), String.join(", ", cols));
            }
            if (!target.partitionedBy().isEmpty()) {
                def.put(FlowOptions.PARTITIONED_BY.key(), target.partitionedBy());
            }
            Map<String, Object> props = new LinkedHashMap<>();
            for (Map.Entry<String, String> p : target.properties().entrySet()) {
                String k = p.getKey();
                if (k.equals(RESET_ALLOWED)) {
                    String v = p.getValue().trim().toLowerCase(Locale.ROOT);
                    if (!v.equals("true") && !v.equals("false")) {
                        throw new SqlException(
                                Code.INVALID_OPTION,
                                target.position(),
                                "table property '"
                                        + RESET_ALLOWED
                                        + "' of "
                                        + targetName
                                        + " is '"
                                        + p.getValue()
                                        + "': give 'true' or 'false'");
                    }
                    continue;
                }
                if (!k.startsWith(PROPERTY_PREFIX)) {
                    warnings.add(
                            target.position()
                                    + ": table property '"
                                    + k
                                    + "' of "
                                    + targetName
                                    + " is not used (flow options take the prefix '"
                                    + PROPERTY_PREFIX
                                    + "')");
                    continue;
                }
                String option = k.substring(PROPERTY_PREFIX.length());
                if (!FlowOptions.SET.keys().contains(option)) {
                    throw new SqlException(
                            Code.INVALID_OPTION,
                            target.position(),
                            "table property '"
                                    + k
                                    + "' of "
                                    + targetName
                                    + " names no flow option (known: "
                                    + String.join(", ", new TreeSet<>(FlowOptions.SET.keys()))
                                    + ")");
                }
                props.put(option, p.getValue());
            }
            OptionLayer definition =
                    OptionLayer.of(
                            OptionSource.DEFINITION,
                            f.position() + ": flow into " + targetName,
                            def);
            OptionLayer properties =
                    OptionLayer.of(
                            OptionSource.TABLE_PROPERTY,
                            target.position() + ": TBLPROPERTIES of " + targetName,
                            props);
            try {
                OptionsResolver.resolve(FlowOptions.SET, List.of(properties));
            } catch (IllegalArgumentException e) {
                throw asSqlException(e, Code.INVALID_OPTION, target.position());
            }
            FlowConfig flow;
            try {
                flow =
                        new FlowConfig()
                                .apply(
                                        OptionsResolver.resolve(
                                                FlowOptions.SET, List.of(definition, properties)));
            } catch (IllegalArgumentException e) {
                throw asSqlException(e, Code.INVALID_OPTION, f.position());
            }
            try {
                flow.validate();
            } catch (IllegalArgumentException e) {
                throw asSqlException(e, Code.INVALID_FLOW, f.position());
            }
            return flow;
        }

        private Path path(ReadFiles r) {
            String p = r.path();
            if (p.contains("://")) {
                throw new SqlException(
                        Code.UNSUPPORTED_STATEMENT,
                        r.position(),
                        "not supported by changeflow yet: read_files of '"
                                + p
                                + "' (run reads local files; object stores are planned)");
            }
            Path path = Path.of(p);
            return (path.isAbsolute() ? path : baseDir.resolve(path)).normalize();
        }

        private static void putIfSet(Map<String, Object> m, String key, Object value) {
            if (value != null) {
                m.put(key, value);
            }
        }

        /** Names compare without case, as the vendor's identifiers do. */
        private static String key(String name) {
            return name.toLowerCase(Locale.ROOT);
        }

        private SqlPosition firstPosition(List<SqlStatement> statements) {
            return statements.isEmpty()
                    ? new SqlPosition(where, 1, 1)
                    : statements.get(0).position();
        }

        /** The resolver's message already names the place: keep it, add the code. */
        private static SqlException asSqlException(
                IllegalArgumentException e, Code code, SqlPosition position) {
            String msg = e.getMessage();
            String prefix = position + ": ";
            String detail = msg.startsWith(prefix) ? msg.substring(prefix.length()) : msg;
            return new SqlException(code, position, detail, e);
        }
    }
}
