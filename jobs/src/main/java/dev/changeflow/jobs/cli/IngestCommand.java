package dev.changeflow.jobs.cli;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowOptions;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.config.IngestOptions;
import dev.changeflow.jobs.config.KafkaOptions;
import dev.changeflow.jobs.flow.ReplaceWhereRefresh;
import dev.changeflow.jobs.ingest.ClusterIngest;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.KafkaSampler;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.jobs.ingest.LocalSnapshotIngest;
import dev.changeflow.jobs.sql.SqlPipeline;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.jobs.sql.TableStatements;
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.operators.options.ResolvedOptions;
import dev.changeflow.sinks.iceberg.CatalogOptions;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.files.FileGlob;
import dev.changeflow.sources.files.InputFileSystems;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.flink.configuration.ConfigOption;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow ingest}: applies change-record files (a Debezium capture, plain JSON lines;
 * gzip or plain; files or folders) — or Kafka topics ({@code --kafka-bootstrap} with {@code
 * --topics} or {@code --topic-pattern}, or the flows file's {@code kafka:} block) — to Iceberg
 * streaming tables on a local MiniCluster. A Kafka run stops with a savepoint once it consumed
 * every record that was in the topics at launch ({@code --until-idle D}: once nothing arrived for
 * D). Flows come from a flows file ({@code --flows}); {@code --table} with {@code --keys}/{@code
 * --sequence-by}/ {@code --scd-type}/{@code --append-only}/{@code --schema} defines or overrides
 * one table, and {@code --set table.option=value} overrides any flow option.
 *
 * <p>A flows file's REPLACE WHERE flows (docs/semantics.md S4: {@code replace-where} and {@code
 * query}) are refreshed after the flows of change records, one Flink batch job and at most one
 * Iceberg commit each, in file order, as {@code run FILE.sql} refreshes its FLOW REPLACE WHERE
 * tables; each prints what it replaced ({@link ReplaceWhereStep}). A file of REPLACE WHERE flows
 * alone takes no input. {@code --refresh-where FLOW=PREDICATE} runs only the named refreshes, each
 * with that predicate instead of its own, this once (a backfill, as {@code REFRESH STREAMING TABLE
 * t WHERE ...}). Their predicates are checked for non-deterministic calls before anything runs
 * ({@code NON_DETERMINISTIC_PREDICATE}); the other errors of S4 come when the refresh's turn comes
 * (its query may read a table the ingest creates), with their codes and places in the flows file.
 */
@Command(
        name = "ingest",
        mixinStandardHelpOptions = true,
        description =
                "Apply change-record files or Kafka topics to Iceberg streaming tables (SCD type 1/2, append-only).")
public final class IngestCommand implements Callable<Integer> {
    @Parameters(
            arity = "0..*",
            paramLabel = "INPUT",
            description =
                    "Change-record files or folders (.jsonl, .json, .gz), local or on an object"
                            + " store (s3://bucket/prefix/, with the Flink file-system plugin);"
                            + " none when reading Kafka.")
    List<String> inputs = new ArrayList<>();

    @Option(names = "--flows", paramLabel = "FILE", description = "Flows file (YAML).")
    Path flows;

    @Mixin CliOptions.LocalRun local;

    @Option(
            names = "--catalog",
            paramLabel = "KEY=VALUE",
            description =
                    "Iceberg catalog property (type, uri, warehouse, ...); replaces the local Hadoop catalog.")
    Map<String, String> catalog;

    @Option(
            names = "--name",
            paramLabel = "ID",
            description =
                    "Job id: checkpoints live in <warehouse>/.changeflow/checkpoints/<ID>. Default: the flows file name.")
    String name;

    @Option(
            names = "--format",
            paramLabel = "FORMAT",
            description = "debezium-json (default) or json.")
    String format;

    @Option(
            names = "--namespace",
            paramLabel = "NS",
            description = "Namespace of the tables. Default: the Debezium schema of the records.")
    String namespace;

    @Option(
            names = "--parallelism",
            paramLabel = "N",
            description = "Parallelism of the AUTO CDC operators and writers.")
    Integer parallelism;

    @Option(
            names = "--checkpoint-interval",
            paramLabel = "DURATION",
            description =
                    "Default 5s (or the flows file's checkpoint-interval); e.g. 2s, 500ms, 1min.")
    String checkpointInterval;

    @Option(
            names = "--checkpoint-timeout",
            paramLabel = "DURATION",
            description =
                    "Default 2min (or the flows file's checkpoint-timeout): a checkpoint not complete by then fails and the next one starts.")
    String checkpointTimeout;

    @Option(
            names = "--table",
            paramLabel = "TABLE",
            description = "Source table that the following single-table flags define or override.")
    String table;

    @Option(names = "--keys", paramLabel = "COLS", split = ",", description = "KEYS of --table.")
    List<String> keys;

    @Option(
            names = "--sequence-by",
            paramLabel = "COLS",
            description =
                    "SEQUENCE BY of --table: a column, a,b or STRUCT(a, b). Default for Debezium: the connector's log position (source.lsn for PostgreSQL).")
    String sequenceBy;

    @Option(
            names = "--scd-type",
            paramLabel = "1|2",
            description = "STORED AS SCD TYPE of --table.")
    String scdType;

    @Option(names = "--append-only", description = "--table has no keys: every record is appended.")
    boolean appendOnly;

    @Option(
            names = "--schema",
            paramLabel = "COLUMNS",
            description = "Declared columns of --table, e.g. \"aid INT, filler STRING\".")
    String schema;

    @Option(
            names = "--kafka-bootstrap",
            paramLabel = "HOST:PORT",
            description = "Read Kafka instead of files: bootstrap servers (host:port[,host:port]).")
    String kafkaBootstrap;

    @Option(
            names = "--topics",
            paramLabel = "TOPICS",
            split = ",",
            description =
                    "Kafka topics to read (a,b); a topic maps to the flow whose table is its last segment.")
    List<String> topics;

    @Option(
            names = "--topic-pattern",
            paramLabel = "REGEX",
            description =
                    "Kafka topics to read, by a regex over whole names (instead of --topics).")
    String topicPattern;

    @Option(
            names = "--group-id",
            paramLabel = "G",
            description =
                    "Kafka consumer group (offsets committed on checkpoints). Default: changeflow-<name>.")
    String groupId;

    @Option(
            names = "--starting-offsets",
            paramLabel = "WHERE",
            description =
                    "earliest (default), latest, committed, timestamp:<epoch ms> or per-partition offsets"
                            + " {\"topic\":{\"0\":23}} (-2 earliest, -1 latest, unnamed partitions"
                            + " earliest); used only without saved state.")
    String startingOffsets;

    @Option(
            names = "--kafka-property",
            paramLabel = "KEY=VALUE",
            description = "Extra Kafka consumer property (security.protocol, sasl.*, ...).")
    Map<String, String> kafkaProperties;

    @Option(
            names = "--cluster",
            description =
                    "Run on the Flink cluster that executes this program (application mode, flink run) until stopped, instead of a local MiniCluster.")
    boolean cluster;

    @Option(
            names = "--until-idle",
            paramLabel = "DURATION",
            description =
                    "Kafka: stop once no record arrived for this long (e.g. 10s), instead of at the end offsets seen at launch.")
    String untilIdle;

    @Option(
            names = "--refresh-where",
            paramLabel = "FLOW=PREDICATE",
            description =
                    "Refresh only this REPLACE WHERE flow of the flows file, replacing the rows"
                            + " PREDICATE selects instead of its own predicate's, this once (a"
                            + " backfill); repeatable. Runs no flow of change records.")
    Map<String, String> refreshWhere;

    /** Where the refreshes' lines and notes go (a test may replace it). */
    PrintStream out = System.out;

    @Option(
            names = "--set",
            paramLabel = "TABLE.OPTION=VALUE",
            description =
                    "Override any flow option, e.g. pgbench_accounts.scd-type=2; or set a Flink"
                            + " file-system option of the inputs, e.g. s3.endpoint=http://minio:9000.")
    List<String> sets;

    @Override
    public Integer call() throws Exception {
        if (flows != null && !Files.isRegularFile(flows)) {
            throw CliErrors.fileNotFound("flows file", flows, "");
        }
        IngestConfig cfg;
        try {
            cfg = flows != null ? FlowsFile.read(flows) : new IngestConfig();
            applyOverrides(cfg);
        } catch (IllegalArgumentException e) {
            // the flows file's and the flags' errors, with a code (README "Exit codes")
            throw CliErrors.coded(e, flows != null ? flows.toString() : null);
        }
        List<org.apache.flink.core.fs.Path> files = inputFiles();
        if (!cfg.fileSystem.isEmpty()
                || files.stream()
                        .anyMatch(
                                f ->
                                        f.toUri().getScheme() != null
                                                && !f.toUri().getScheme().equals("file"))) {
            // S2: object stores through Flink's file-system plugins and options
            InputFileSystems.initialize(cfg.fileSystem);
        }
        for (int i = 0; i < files.size(); i++) {
            // S2: a glob pattern (quoted against the shell) needs its base folder; a scheme
            // without a file system is named with the plugin to add (NoFileSystemException)
            if (!InputFileSystems.exists(FileGlob.base(files.get(i)))) {
                throw CliErrors.fileNotFound(
                        "input",
                        inputs.get(i),
                        " (give change-record files or folders, or a quoted glob pattern)");
            }
        }
        // S4: every REPLACE WHERE flow is built (and its predicate checked) before anything runs
        List<SqlPipeline.ReplaceWhereTable> replaceWheres = new ArrayList<>();
        for (FlowConfig f : cfg.replaceWheres) {
            replaceWheres.add(SqlPipeline.ReplaceWhereTable.of(f, cfg, String.valueOf(flows)));
        }
        if (refreshWhere != null) {
            backfill(cfg, replaceWheres);
            return 0;
        }
        if (!replaceWheres.isEmpty() && cluster) {
            throw new IllegalArgumentException(
                    "the flows file has REPLACE WHERE flows, which are refreshed by local batch"
                            + " jobs after the flows of change records; --cluster runs those until"
                            + " stopped: put the REPLACE WHERE flows into a flows file of their own"
                            + " and run it with ingest --flows");
        }
        if (!cfg.flows.isEmpty() || replaceWheres.isEmpty()) {
            ingestRecords(cfg);
            if (cluster) {
                return 0;
            }
        } else if (!inputs.isEmpty() || cfg.kafka != null) {
            throw new IllegalArgumentException(
                    "the flows file has only REPLACE WHERE flows, whose queries name the tables"
                            + " they read: give no input files or Kafka");
        }
        // S4: after the flows of change records (their queries often read those tables), as run
        // FILE.sql does
        for (SqlPipeline.ReplaceWhereTable rw : replaceWheres) {
            ReplaceWhereStep.run(
                    rw,
                    LocalIngest.catalog(cfg, local.warehouse),
                    null,
                    null,
                    cfg.parallelism,
                    false,
                    out);
        }
        return 0;
    }

    /**
     * {@code --refresh-where FLOW=PREDICATE}: refreshes only the named REPLACE WHERE flows, each
     * replacing the slice of the given predicate instead of its own, in the order given (S4's
     * override, the flows file's form of {@code REFRESH STREAMING TABLE t WHERE ...}). Every name
     * and predicate is checked before the first refresh runs.
     */
    private void backfill(IngestConfig cfg, List<SqlPipeline.ReplaceWhereTable> replaceWheres)
            throws Exception {
        if (!inputs.isEmpty() || cluster) {
            throw new IllegalArgumentException(
                    "--refresh-where refreshes the named REPLACE WHERE flows only: give no input"
                            + " files and no --cluster");
        }
        List<String> names = new ArrayList<>();
        cfg.replaceWheres.forEach(f -> names.add(f.flowName()));
        List<SqlPipeline.ReplaceWhereTable> tables = new ArrayList<>();
        List<String> predicates = new ArrayList<>();
        List<SqlPosition> positions = new ArrayList<>();
        for (Map.Entry<String, String> e : refreshWhere.entrySet()) {
            String name = e.getKey().trim();
            FlowConfig f = cfg.replaceWhere(name);
            if (f == null) {
                throw new IllegalArgumentException(
                        "--refresh-where "
                                + name
                                + ": "
                                + (cfg.flow(name) != null
                                        ? "'"
                                                + name
                                                + "' is a flow of change records, which has no"
                                                + " predicate to override"
                                        : "no REPLACE WHERE flow is named '" + name + "'")
                                + " (REPLACE WHERE flows"
                                + (flows != null ? " of " + flows : "")
                                + ": "
                                + (names.isEmpty() ? "none" : String.join(", ", names))
                                + ")");
            }
            String predicate = e.getValue();
            if (predicate == null || predicate.isBlank()) {
                throw new IllegalArgumentException(
                        "--refresh-where "
                                + name
                                + "=: give the predicate of the slice to replace, e.g."
                                + " --refresh-where "
                                + name
                                + "=\"day >= DATE '2024-01-01'\"");
            }
            SqlPipeline.ReplaceWhereTable rw = replaceWheres.get(cfg.replaceWheres.indexOf(f));
            SqlPosition at = new SqlPosition("--refresh-where " + name, 1, 1);
            ReplaceWhereRefresh.checkDeterministic(rw.definition().target(), predicate, at);
            tables.add(rw);
            predicates.add(predicate);
            positions.add(at);
        }
        if (!cfg.flows.isEmpty()) {
            out.println(
                    "note: the flows of change records are not run: --refresh-where names what"
                            + " runs");
        }
        for (int i = 0; i < tables.size(); i++) {
            ReplaceWhereStep.run(
                    tables.get(i),
                    LocalIngest.catalog(cfg, local.warehouse),
                    predicates.get(i),
                    positions.get(i),
                    cfg.parallelism,
                    false,
                    out);
        }
    }

    /** The flows of change records: one local job (or the cluster's with {@code --cluster}). */
    private void ingestRecords(IngestConfig cfg) throws Exception {
        if (LocalSnapshotIngest.isSnapshotConfig(cfg)) {
            // A6: the snapshot folders come from the flows file
            if (!inputs.isEmpty() || cfg.kafka != null || cluster) {
                throw new IllegalArgumentException(
                        "'from-snapshot' flows read their snapshot folders: give no input files,"
                                + " Kafka or --cluster");
            }
            LocalIngest.Options o = new LocalIngest.Options();
            o.warehouse = local.warehouse;
            o.fromScratch = local.fromScratch;
            // S9: recorded in each table's last-refresh properties as a run's snapshot refresh
            String namespace =
                    cfg.namespace != null ? cfg.namespace : IngestPlanner.DEFAULT_NAMESPACE;
            List<TableIdentifier> written = new ArrayList<>();
            cfg.flows.forEach(f -> written.add(IngestPlanner.target(f, namespace)));
            TableStatements.RefreshRecord.record(
                    LocalIngest.catalog(cfg, local.warehouse),
                    written,
                    local.fromScratch,
                    () -> LocalSnapshotIngest.run(cfg, o).applied);
            return;
        }
        if (cfg.kafka != null && !inputs.isEmpty()) {
            throw new IllegalArgumentException(
                    "give either input files or Kafka (--kafka-bootstrap / the flows file's kafka: block), not both");
        }
        if (cfg.kafka == null && inputs.isEmpty()) {
            throw new IllegalArgumentException(
                    "no input: give change-record files or folders, or Kafka with --kafka-bootstrap HOST:PORT --topics a,b");
        }
        // the targets' catalog: columns the source dropped are taken from the tables (A7)
        CatalogSettings tables =
                cfg.catalog.isEmpty() && local.warehouse == null
                        ? null
                        : LocalIngest.catalog(cfg, local.warehouse);
        IngestPlan plan =
                IngestPlanner.planFiles(
                        cfg,
                        inputFiles(),
                        cfg.kafka == null
                                ? null
                                : KafkaSampler.firstRecords(
                                        cfg.kafka.validate(),
                                        cfg.kafka.groupId != null
                                                ? cfg.kafka.groupId
                                                : IngestJob.defaultGroupId(cfg),
                                        KafkaSampler.DEFAULT_TIMEOUT),
                        tables);
        LocalIngest.Options o = new LocalIngest.Options();
        o.warehouse = local.warehouse;
        o.fromScratch = local.fromScratch;
        if (cluster) {
            if (cfg.kafka == null) {
                throw new IllegalArgumentException(
                        "--cluster reads Kafka: give --kafka-bootstrap and --topics or --topic-pattern");
            }
            ClusterIngest.run(plan, cfg.kafka);
            return;
        }
        // S9: the run is recorded in each table's last-refresh properties, also when it fails
        List<TableIdentifier> written = new ArrayList<>();
        plan.flows.forEach(f -> written.add(f.target));
        TableStatements.RefreshRecord.record(
                LocalIngest.catalog(plan, local.warehouse),
                written,
                local.fromScratch,
                () ->
                        cfg.kafka != null
                                ? LocalIngest.runKafka(plan, cfg.kafka, cfg.untilIdle, o).records
                                : LocalIngest.runFiles(plan, inputFiles(), o).records);
    }

    /**
     * Applies this command line's flags to a flows-file configuration and validates the result.
     *
     * @throws IllegalArgumentException naming the flag or option that is wrong
     */
    /**
     * The INPUT arguments as Flink paths: {@code scheme://...} as given, a local path made absolute
     * against the working directory (docs/semantics.md S2).
     */
    List<org.apache.flink.core.fs.Path> inputFiles() {
        List<org.apache.flink.core.fs.Path> out = new ArrayList<>();
        for (String in : inputs) {
            out.add(InputFileSystems.parse(in, Path.of("").toAbsolutePath()));
        }
        return out;
    }

    public void applyOverrides(IngestConfig cfg) {
        if (name == null && cfg.name == null) {
            // without a flows file the job is named after its table, so flag-only runs of different
            // tables in one warehouse keep separate state
            cfg.name = table != null ? table : "ingest";
        }
        List<OptionLayer> top = new ArrayList<>();
        flag(top, "--name", IngestOptions.NAME, name);
        flag(top, "--format", IngestOptions.FORMAT, format);
        flag(top, "--namespace", IngestOptions.NAMESPACE, namespace);
        flag(top, "--parallelism", IngestOptions.PARALLELISM, parallelism);
        flag(top, "--checkpoint-interval", IngestOptions.CHECKPOINT_INTERVAL, checkpointInterval);
        flag(top, "--checkpoint-timeout", IngestOptions.CHECKPOINT_TIMEOUT, checkpointTimeout);
        cfg.apply(OptionsResolver.resolve(IngestOptions.SET, top));
        if (catalog != null) {
            Map<String, String> merged =
                    CatalogOptions.resolve(
                            List.of(
                                    OptionLayer.of(OptionSource.DEFINITION, "catalog", cfg.catalog),
                                    OptionLayer.of(OptionSource.FLAG, "--catalog", catalog)));
            cfg.catalog.clear();
            cfg.catalog.putAll(merged);
        }
        List<OptionLayer> kafka = new ArrayList<>();
        flag(kafka, "--kafka-bootstrap", KafkaOptions.BOOTSTRAP_SERVERS, kafkaBootstrap);
        flag(kafka, "--topics", KafkaOptions.TOPICS, topics);
        flag(kafka, "--topic-pattern", KafkaOptions.TOPIC_PATTERN, topicPattern);
        flag(kafka, "--group-id", KafkaOptions.GROUP_ID, groupId);
        flag(kafka, "--starting-offsets", KafkaOptions.STARTING_OFFSETS, startingOffsets);
        boolean kafkaFlags = !kafka.isEmpty() || kafkaProperties != null;
        flag(kafka, "--until-idle", KafkaOptions.UNTIL_IDLE, untilIdle);
        ResolvedOptions k = OptionsResolver.resolve(KafkaOptions.SET, kafka);
        if (kafkaFlags) {
            if (cfg.kafka == null) {
                cfg.kafka = new KafkaInput();
            }
            KafkaOptions.apply(k, cfg.kafka);
            if (kafkaProperties != null) {
                cfg.kafka.properties.putAll(kafkaProperties);
            }
        }
        if (k.isSet(KafkaOptions.UNTIL_IDLE)) {
            cfg.untilIdle = k.get(KafkaOptions.UNTIL_IDLE);
        }
        if (cfg.kafka != null) {
            cfg.kafka.validate();
        } else if (cfg.untilIdle != null) {
            throw new IllegalArgumentException("--until-idle applies to Kafka input only");
        }
        if (cfg.checkpointInterval.toMillis() < 10) {
            throw new IllegalArgumentException(
                    "checkpoint-interval must be at least 10ms, got "
                            + cfg.checkpointInterval.toMillis()
                            + "ms");
        }
        List<OptionLayer> tableFlags = new ArrayList<>();
        flag(tableFlags, "--keys", FlowOptions.KEYS, keys);
        flag(tableFlags, "--sequence-by", FlowOptions.SEQUENCE_BY, sequenceBy);
        flag(tableFlags, "--scd-type", FlowOptions.SCD_TYPE, scdType);
        flag(tableFlags, "--append-only", FlowOptions.APPEND_ONLY, appendOnly ? "true" : null);
        flag(tableFlags, "--schema", FlowOptions.SCHEMA, schema);
        if (table != null) {
            if (cfg.flow(table) == null) {
                FlowConfig f = new FlowConfig();
                f.table = table;
                cfg.flows.add(f);
            }
        } else if (!tableFlags.isEmpty()) {
            throw new IllegalArgumentException(
                    "--keys, --sequence-by, --scd-type, --append-only and --schema need --table");
        }
        Map<String, List<OptionLayer>> overrides = new LinkedHashMap<>();
        if (table != null) {
            overrides.computeIfAbsent(table, t -> new ArrayList<>()).addAll(tableFlags);
        }
        if (sets != null) {
            for (String s : sets) {
                int eq = s.indexOf('=');
                int dot = eq < 0 ? -1 : s.lastIndexOf('.', eq);
                if (eq < 0 || dot < 0) {
                    throw new IllegalArgumentException(
                            "--set takes TABLE.OPTION=VALUE, got '" + s + "'");
                }
                String t = s.substring(0, dot);
                if (cfg.flow(t) == null
                        && cfg.replaceWhere(t) == null
                        && InputFileSystems.isFileSystemOption(s.substring(0, eq))) {
                    // S2: a Flink file-system option (s3.endpoint=...), not a flow's
                    cfg.fileSystem.put(s.substring(0, eq), s.substring(eq + 1));
                    continue;
                }
                if (cfg.flow(t) == null && cfg.replaceWhere(t) == null) {
                    throw new IllegalArgumentException(
                            "--set " + s + ": no flow for table '" + t + "'");
                }
                overrides
                        .computeIfAbsent(t, x -> new ArrayList<>())
                        .add(
                                OptionLayer.single(
                                        OptionSource.SET,
                                        "--set " + s,
                                        s.substring(dot + 1, eq),
                                        s.substring(eq + 1)));
            }
        }
        for (Map.Entry<String, List<OptionLayer>> e : overrides.entrySet()) {
            FlowConfig f = cfg.flow(e.getKey());
            if (f == null) {
                f = cfg.replaceWhere(e.getKey()); // S4: by flow name
            }
            f.apply(OptionsResolver.resolve(FlowOptions.SET, e.getValue()));
        }
        for (FlowConfig f : cfg.flows) {
            f.validate();
        }
        for (FlowConfig f : cfg.replaceWheres) {
            f.validate();
        }
    }

    /** Adds the layer of one command-line flag that was given (a null value was not). */
    private static void flag(
            List<OptionLayer> layers, String flag, ConfigOption<?> option, Object value) {
        if (value != null) {
            layers.add(
                    OptionLayer.single(
                            OptionSource.FLAG,
                            flag,
                            option.key(),
                            value instanceof List ? value : value.toString()));
        }
    }
}
