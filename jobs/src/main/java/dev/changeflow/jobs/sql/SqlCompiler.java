package dev.changeflow.jobs.sql;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowOptions;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.config.IngestOptions;
import dev.changeflow.jobs.config.KafkaOptions;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlPipeline.Feed;
import dev.changeflow.jobs.sql.SqlPipeline.FlowPlaces;
import dev.changeflow.jobs.sql.SqlPipeline.Input;
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
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.sinks.iceberg.CatalogOptions;
import dev.changeflow.sources.cdf.ChangeFeedColumns;
import dev.changeflow.sources.cdf.ChangeType;
import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.kafka.KafkaInput;

import javax.annotation.Nullable;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Compiles the statements of a pipeline file into a {@link SqlPipeline} (the flow model of the
 * flows file, semantics.md S1–S7): views, streaming tables and their flows, {@code SET} / {@code
 * USE}, schedules and {@code REFRESH} statements, each error a {@link SqlException} with its
 * position. One pass over the statements collects them, a second compiles the flows.
 */
final class SqlCompiler {
    private final Path baseDir;
    private final String where;
    private final List<OptionLayer> fileLayers = new ArrayList<>();
    private final List<OptionLayer> catalog = new ArrayList<>();

    /** S2: Flink file-system options of SET ({@code s3.endpoint}, ...), in file order. */
    private final Map<String, String> fileSystem = new LinkedHashMap<>();

    private final Map<String, CreateView> views = new LinkedHashMap<>();
    private final Map<String, CreateStreamingTable> tables = new LinkedHashMap<>();
    private final List<FlowDef> flows = new ArrayList<>();

    /** Tables with FLOW REPLACE WHERE (S4), by lower-case name, in file order. */
    private final Map<String, CreateStreamingTable> replaceWheres = new LinkedHashMap<>();

    private final List<String> warnings = new ArrayList<>();

    /** The AUTO CDC FROM SNAPSHOT flows (A6), in file order: not part of the ingest job. */
    private final List<SqlPipeline.SnapshotTable> snapshotTables = new ArrayList<>();

    private final Map<String, Schedule> schedules = new LinkedHashMap<>();
    private final List<SqlStatement.Refresh> refreshes = new ArrayList<>();
    private final List<SqlStatement.Describe> describes = new ArrayList<>();
    private final List<SqlStatement.Drop> drops = new ArrayList<>();

    /** A flow with the statement defining it. */
    private record FlowDef(SqlPosition position, String name, String target, Flow flow) {}

    SqlCompiler(Path baseDir, String where) {
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
                if (t.flow() != null && t.flow().replaceWhere() != null) {
                    replaceWheres.put(key(t.name()), t);
                    if (!t.constraints().isEmpty()) {
                        throw new SqlException(
                                Code.INVALID_FLOW,
                                t.constraints().get(0).position(),
                                "expectations check AUTO CDC and append flows, not REPLACE WHERE (S8); streaming table "
                                        + t.name()
                                        + " has a REPLACE WHERE flow");
                    }
                } else if (t.flow() != null) {
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
            } else if (s instanceof SqlStatement.Describe d) {
                describes.add(d);
            } else if (s instanceof SqlStatement.Drop d) {
                drops.add(d);
            }
        }
        // a file of DROP TABLE / DESCRIBE statements alone acts on the catalog (S9)
        if (flows.isEmpty()
                && replaceWheres.isEmpty()
                && (!tables.isEmpty() || (describes.isEmpty() && drops.isEmpty()))) {
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
            if (f.flow().source() instanceof SqlStatement.Snapshot) {
                // A6: a job of its own, read by LocalSnapshotIngest
                sources.add(null);
                feedOf.add(null);
                kafkaOf.add(null);
                continue;
            }
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
        includeExistingLayer(files).ifPresent(top::add);
        maxFilesLayer(files).ifPresent(top::add);
        csvLayer(files).ifPresent(top::add);
        checkSetAgrees(files);
        try {
            cfg.apply(OptionsResolver.resolve(IngestOptions.SET, top));
        } catch (IllegalArgumentException e) {
            throw asSqlException(e, Code.INVALID_OPTION, firstPosition(statements));
        }
        checkCsvOptions(files, cfg.format);
        if (!cfg.includeExistingFiles && files.isEmpty()) {
            throw new SqlException(
                    Code.INVALID_OPTION,
                    firstPosition(statements),
                    IngestOptions.INCLUDE_EXISTING_FILES.key()
                            + " = false applies to read_files, and no flow of the file reads"
                            + " files (read_kafka starts where startingOffsets says)");
        }
        if (cfg.fileReaders != IngestOptions.FILE_READERS.defaultValue() && files.isEmpty()) {
            throw new SqlException(
                    Code.INVALID_OPTION,
                    firstPosition(statements),
                    IngestOptions.FILE_READERS.key()
                            + " applies to read_files, and no flow of the file reads files"
                            + " (read_kafka's readers are kafka-readers)");
        }
        cfg.catalog.putAll(CatalogOptions.resolve(catalog));
        cfg.fileSystem.putAll(fileSystem);
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
            if (replaceWheres.containsKey(key(target.name()))) {
                throw new SqlException(
                        Code.DUPLICATE_FLOW,
                        f.position(),
                        "streaming table "
                                + target.name()
                                + " is already written by its FLOW REPLACE WHERE at "
                                + target.position()
                                + "; a table is written by one flow");
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
            if (f.flow().source() instanceof SqlStatement.Snapshot snapshot) {
                SqlPipeline.SnapshotTable st = snapshotTable(f, target, snapshot);
                other = byName.putIfAbsent(key(st.flow().flowName()), f);
                if (other != null) {
                    throw new SqlException(
                            Code.DUPLICATE_FLOW,
                            f.position(),
                            "flow "
                                    + st.flow().flowName()
                                    + " is already defined at "
                                    + other.position()
                                    + " (a flow without a name is named after its table)");
                }
                snapshotTables.add(st);
                continue;
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
            SqlStatement.ReplaceUsing replace = f.flow().replaceUsing();
            flowPlaces.add(
                    replace != null
                            ? new FlowPlaces(
                                    f.position(),
                                    replace.keys(),
                                    replace.keyPositions(),
                                    replace.sequenceByPosition(),
                                    target.constraints())
                            : cdc == null
                                    ? new FlowPlaces(
                                            f.position(),
                                            List.of(),
                                            List.of(),
                                            null,
                                            target.constraints(),
                                            f.flow().select())
                                    : new FlowPlaces(
                                            f.position(),
                                            cdc.keys(),
                                            cdc.keyPositions(),
                                            cdc.sequenceByPosition(),
                                            target.constraints()));
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
            org.apache.flink.core.fs.Path path = path(source);
            flowInputs.add(new Input(path, source.position(), source.path()));
            if (inputs.stream().noneMatch(in -> in.file().equals(path))) {
                inputs.add(new Input(path, source.position(), source.path()));
            }
        }
        for (CreateStreamingTable t : tables.values()) {
            if (!byTarget.containsKey(key(t.name())) && !replaceWheres.containsKey(key(t.name()))) {
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
            String v = t.properties().get(SqlPipeline.RESET_ALLOWED);
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
        pipeline.replaceWheres(replaceWhereTables(cfg));
        pipeline.snapshotTables(snapshotTables);
        for (SqlStatement.Refresh r : refreshes) {
            checkRefresh(pipeline, r);
        }
        Map<String, CreateStreamingTable> declared = new LinkedHashMap<>();
        tables.values().forEach(t -> declared.put(tableKeyOf(t.name()), t));
        pipeline.statements(describes, drops, declared);
        return pipeline;
    }

    /**
     * The REPLACE WHERE tables (S4) as refresh definitions: the target in the file's namespace
     * (unless qualified), the declared columns, PARTITIONED BY.
     */
    private List<SqlPipeline.ReplaceWhereTable> replaceWhereTables(IngestConfig cfg) {
        List<SqlPipeline.ReplaceWhereTable> out = new ArrayList<>();
        for (CreateStreamingTable t : replaceWheres.values()) {
            SqlStatement.ReplaceWhere rw = t.flow().replaceWhere();
            String schema = null;
            if (!t.columns().isEmpty()) {
                List<String> cols = new ArrayList<>();
                for (Column c : t.columns()) {
                    cols.add(
                            "`"
                                    + c.name().replace("`", "``")
                                    + "` "
                                    + c.type()
                                    + (c.notNull() ? " NOT NULL" : ""));
                }
                schema = String.join(", ", cols);
            }
            if (!t.properties().isEmpty()) {
                warnings.add(
                        "TBLPROPERTIES of "
                                + t.name()
                                + " are not used: a FLOW REPLACE WHERE table takes no flow options");
            }
            out.add(
                    SqlPipeline.ReplaceWhereTable.of(
                            t.name(),
                            t.name(),
                            cfg.namespace,
                            rw.query(),
                            rw.queryPosition(),
                            rw.predicate(),
                            rw.predicatePosition(),
                            schema,
                            dev.changeflow.sinks.iceberg.StreamingTableOptions.builder()
                                    .partitionBy(t.partitionedBy())
                                    .build()));
        }
        return out;
    }

    /** The key {@link SqlPipeline#declaration} looks a table up by. */
    private static String tableKeyOf(String name) {
        String k = name.trim().toLowerCase(Locale.ROOT);
        return k.startsWith("live.") ? k.substring(5) : k;
    }

    /**
     * A REFRESH statement must name streaming tables of the file that can be refreshed on their own
     * ({@link SqlPipeline#refreshOnly(List, String)}), and FULL tables that allow it.
     */
    private void checkRefresh(SqlPipeline pipeline, SqlStatement.Refresh r) {
        long replacing = r.tables().stream().filter(t -> replaceWheres.containsKey(key(t))).count();
        if (replacing > 0 || r.where() != null) {
            // S4: a REPLACE WHERE table is refreshed by its own Flink batch job
            if (replacing != r.tables().size() || r.tables().size() != 1) {
                throw new SqlException(
                        Code.INVALID_REFRESH,
                        r.position(),
                        r.where() != null && replacing == 0
                                ? "REFRESH STREAMING TABLE ... WHERE overrides the predicate of a"
                                        + " FLOW REPLACE WHERE table; "
                                        + String.join(", ", r.tables())
                                        + " has none"
                                : "a table with FLOW REPLACE WHERE is refreshed by a REFRESH"
                                        + " STREAMING TABLE statement naming that table alone");
            }
            if (r.full()) {
                throw new SqlException(
                        Code.UNSUPPORTED_STATEMENT,
                        r.position(),
                        "REFRESH STREAMING TABLE "
                                + r.tables().get(0)
                                + " FULL of a FLOW REPLACE WHERE table is not supported yet;"
                                + " REFRESH STREAMING TABLE "
                                + r.tables().get(0)
                                + " WHERE <predicate> replaces any slice");
            }
            return;
        }
        List<String> changeRecordTables = new ArrayList<>();
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
            if (pipeline.snapshotTable(t) == null) {
                changeRecordTables.add(t);
            } else if (r.full()) {
                throw new SqlException(
                        Code.UNSUPPORTED_STATEMENT,
                        r.position(),
                        "not supported by changeflow yet: REFRESH STREAMING TABLE "
                                + t
                                + " FULL of an AUTO CDC FROM SNAPSHOT table (A6); refresh it"
                                + " without FULL, or drop it (DROP TABLE "
                                + t
                                + ";) and run the file again to rebuild it from every snapshot");
            }
        }
        if (changeRecordTables.isEmpty()) {
            return; // A6: the snapshot job of the named tables
        }
        SqlPipeline selected;
        try {
            selected = pipeline.refreshOnly(changeRecordTables, "REFRESH STREAMING TABLE");
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
     * Every declared column's type must be a Flink SQL type ({@code UNKNOWN_TYPE} at the type, e.g.
     * {@code INTEGR}).
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
                    OptionLayer.single(OptionSource.DEFINITION, label, key.substring(8), s.value());
            try {
                CatalogOptions.resolve(List.of(property));
            } catch (IllegalArgumentException e) {
                throw asSqlException(e, Code.INVALID_OPTION, s.position());
            }
            catalog.add(property);
            return;
        }
        if (dev.changeflow.sources.files.InputFileSystems.isFileSystemOption(key)) {
            // S2: Flink configuration of the file systems read_files reads (s3.endpoint, ...)
            fileSystem.put(key, s.value());
            return;
        }
        String option = SqlPipeline.SET_ALIASES.getOrDefault(key, key);
        if (!IngestOptions.SET.keys().contains(option)) {
            throw new SqlException(
                    Code.INVALID_OPTION,
                    s.position(),
                    "unknown SET key '"
                            + key
                            + "' (known: "
                            + String.join(", ", new TreeSet<>(IngestOptions.SET.keys()))
                            + ", "
                            + String.join(", ", new TreeSet<>(SqlPipeline.SET_ALIASES.keySet()))
                            + ", catalog.<Iceberg catalog property>)");
        }
        OptionLayer layer = OptionLayer.single(OptionSource.DEFINITION, label, option, s.value());
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

    /**
     * The layer of the {@code maxFilesPerTrigger =>} of the read_files calls (docs/semantics.md
     * S2): the job's one file source takes at most that many files per checkpoint, so the calls
     * that give it must agree ({@code CONFLICTING_SOURCES}).
     */
    private Optional<OptionLayer> maxFilesLayer(List<ReadFiles> sources) {
        ReadFiles first = null;
        for (ReadFiles r : sources) {
            String n = r.arguments().get(SqlParser.MAX_FILES_PER_TRIGGER);
            if (n == null) {
                continue;
            }
            if (first == null) {
                first = r;
            } else if (!sameValue(
                    IngestOptions.MAX_FILES_PER_TRIGGER.key(),
                    first.arguments().get(SqlParser.MAX_FILES_PER_TRIGGER),
                    n)) {
                throw new SqlException(
                        Code.CONFLICTING_SOURCES,
                        r.position(),
                        "read_files "
                                + SqlParser.MAX_FILES_PER_TRIGGER
                                + " => "
                                + n
                                + " differs from "
                                + first.arguments().get(SqlParser.MAX_FILES_PER_TRIGGER)
                                + " at "
                                + first.position()
                                + ": the files of one job are read by one source (give every"
                                + " read_files of the file the same maxFilesPerTrigger)");
            }
        }
        if (first == null) {
            return Optional.empty();
        }
        return Optional.of(
                OptionLayer.single(
                        OptionSource.DEFINITION,
                        first.position() + ": read_files",
                        IngestOptions.MAX_FILES_PER_TRIGGER.key(),
                        first.arguments().get(SqlParser.MAX_FILES_PER_TRIGGER)));
    }

    /**
     * A {@code SET} of the file and a read_files argument that set one option of the job's file
     * source ({@code max-files-per-trigger} / {@code maxFilesPerTrigger}, {@code
     * include-existing-files} / {@code includeExistingFiles}, the CSV options) must agree
     * (docs/semantics.md S2): the argument would otherwise silently win. {@code
     * CONFLICTING_SOURCES} at the read_files call, naming both values and the SET's place.
     */
    private void checkSetAgrees(List<ReadFiles> sources) {
        for (ReadFiles r : sources) {
            for (Map.Entry<String, String> arg : r.arguments().entrySet()) {
                String key =
                        arg.getKey().equals(SqlParser.MAX_FILES_PER_TRIGGER)
                                ? IngestOptions.MAX_FILES_PER_TRIGGER.key()
                                : arg.getKey().equals(SqlParser.INCLUDE_EXISTING_FILES)
                                        ? IngestOptions.INCLUDE_EXISTING_FILES.key()
                                        : SqlParser.CSV_ARGUMENTS.get(arg.getKey());
                if (key == null) {
                    continue;
                }
                for (int i = fileLayers.size() - 1; i >= 0; i--) {
                    OptionLayer set = fileLayers.get(i);
                    Object given = set.values().get(key);
                    if (given == null) {
                        continue;
                    }
                    if (!sameValue(key, String.valueOf(given), arg.getValue())) {
                        throw new SqlException(
                                Code.CONFLICTING_SOURCES,
                                r.position(),
                                "read_files "
                                        + arg.getKey()
                                        + " => '"
                                        + arg.getValue()
                                        + "' differs from SET "
                                        + key
                                        + " = '"
                                        + given
                                        + "' at "
                                        + setPlace(set)
                                        + ": the files of one job are read by one source (give"
                                        + " the value once, or the same value)");
                    }
                    break;
                }
            }
        }
    }

    /** The place of a SET's layer ({@code p.sql:1:1}), from its label {@code p.sql:1:1: SET k}. */
    private static String setPlace(OptionLayer set) {
        int cut = set.label().lastIndexOf(": SET ");
        return cut > 0 ? set.label().substring(0, cut) : set.label();
    }

    /** Whether two texts of one file-source option mean the same value (both already checked). */
    private static boolean sameValue(String key, String a, String b) {
        if (key.equals(IngestOptions.MAX_FILES_PER_TRIGGER.key())) {
            return Long.parseLong(a.trim()) == Long.parseLong(b.trim());
        }
        if (key.equals(IngestOptions.CSV_HEADER.key())
                || key.equals(IngestOptions.INCLUDE_EXISTING_FILES.key())) {
            return a.trim().equalsIgnoreCase(b.trim());
        }
        return a.equals(b);
    }

    /**
     * The layer of the CSV options of the read_files calls ({@code header}, {@code sep} or {@code
     * delimiter}, {@code quote}, {@code escape}, {@code nullValue}, {@code comment};
     * docs/semantics.md S2): the job's one file source reads every file one way, so the calls that
     * give an option must agree ({@code CONFLICTING_SOURCES}). They apply to {@code format =>
     * 'csv'} only: {@link #checkCsvOptions} refuses them for another format.
     */
    private Optional<OptionLayer> csvLayer(List<ReadFiles> sources) {
        Map<String, String> values = new LinkedHashMap<>();
        Map<String, ReadFiles> givenBy = new HashMap<>();
        Map<String, String> givenAs = new HashMap<>();
        for (ReadFiles r : sources) {
            for (Map.Entry<String, String> arg : r.arguments().entrySet()) {
                String key = SqlParser.CSV_ARGUMENTS.get(arg.getKey());
                if (key == null) {
                    continue;
                }
                String value = arg.getValue();
                String before = values.putIfAbsent(key, value);
                if (before == null) {
                    givenBy.put(key, r);
                    givenAs.put(key, arg.getKey());
                } else if (!before.equals(value)) {
                    throw new SqlException(
                            Code.CONFLICTING_SOURCES,
                            r.position(),
                            "read_files "
                                    + arg.getKey()
                                    + " => '"
                                    + value
                                    + "' differs from "
                                    + givenAs.get(key)
                                    + " => '"
                                    + before
                                    + "' at "
                                    + givenBy.get(key).position()
                                    + ": the files of one job are read by one source (give every"
                                    + " read_files of the file the same CSV options)");
                }
            }
        }
        if (values.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(
                OptionLayer.of(
                        OptionSource.DEFINITION,
                        givenBy.values().iterator().next().position() + ": read_files",
                        values));
    }

    /**
     * The CSV options of read_files apply to CSV files only (docs/semantics.md S2): {@code
     * INVALID_OPTION} at the first call that gives one when the job reads another format.
     */
    private static void checkCsvOptions(List<ReadFiles> sources, String format) {
        if (format.equalsIgnoreCase("csv")) {
            return;
        }
        for (ReadFiles r : sources) {
            for (String arg : r.arguments().keySet()) {
                if (SqlParser.CSV_ARGUMENTS.containsKey(arg)) {
                    throw new SqlException(
                            Code.INVALID_OPTION,
                            r.position(),
                            "read_files "
                                    + arg
                                    + " => is an option of CSV files; the files are read as '"
                                    + format
                                    + "' (give format => 'csv', or leave it out)");
                }
            }
        }
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
     * The layer of the {@code includeExistingFiles =>} of the read_files calls (docs/semantics.md
     * S2): the job's one file source reads every folder one way, so the calls that give it must
     * agree, and a call without it beside one giving {@code false} is refused too ({@code
     * CONFLICTING_SOURCES} at the later call) — it would silently skip that call's files as well.
     */
    private Optional<OptionLayer> includeExistingLayer(List<ReadFiles> sources) {
        ReadFiles first = null;
        ReadFiles without = null;
        for (ReadFiles r : sources) {
            String v = r.arguments().get(SqlParser.INCLUDE_EXISTING_FILES);
            if (v == null) {
                without = without == null ? r : without;
            } else if (first == null) {
                first = r;
            } else if (!first.arguments()
                    .get(SqlParser.INCLUDE_EXISTING_FILES)
                    .equalsIgnoreCase(v)) {
                throw conflictingIncludeExisting(r, first);
            }
        }
        if (first == null) {
            return Optional.empty();
        }
        String value = first.arguments().get(SqlParser.INCLUDE_EXISTING_FILES);
        if (without != null && value.equalsIgnoreCase("false")) {
            ReadFiles later = sources.indexOf(without) > sources.indexOf(first) ? without : first;
            throw conflictingIncludeExisting(later, later == first ? without : first);
        }
        OptionLayer layer =
                OptionLayer.single(
                        OptionSource.DEFINITION,
                        first.position() + ": read_files",
                        IngestOptions.INCLUDE_EXISTING_FILES.key(),
                        value);
        try {
            OptionsResolver.resolve(IngestOptions.SET, List.of(layer));
        } catch (IllegalArgumentException e) {
            throw asSqlException(e, Code.INVALID_OPTION, first.position());
        }
        return Optional.of(layer);
    }

    private static SqlException conflictingIncludeExisting(ReadFiles r, ReadFiles other) {
        return new SqlException(
                Code.CONFLICTING_SOURCES,
                r.position(),
                "read_files "
                        + describeIncludeExisting(r)
                        + " differs from read_files "
                        + describeIncludeExisting(other)
                        + " at "
                        + other.position()
                        + ": the files of one job are read one way (give every read_files of"
                        + " the file the same includeExistingFiles, or refresh the tables"
                        + " separately)");
    }

    private static String describeIncludeExisting(ReadFiles r) {
        String v = r.arguments().get(SqlParser.INCLUDE_EXISTING_FILES);
        return v == null
                ? "without includeExistingFiles"
                : "includeExistingFiles => " + v.toLowerCase(Locale.ROOT);
    }

    /**
     * What a source reads: a {@link ReadFiles} call (itself, or the one of the view it names), or a
     * {@link Feed}: a name that is no view of the file is the change feed of that table (S7).
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
                    Code.UNKNOWN_SOURCE, inner.position(), "view " + v.name() + " reads itself");
        }
        return resolve(v.source());
    }

    private List<String> viewNames() {
        List<String> out = new ArrayList<>();
        views.values().forEach(v -> out.add(v.name()));
        return out;
    }

    /**
     * An AUTO CDC FROM SNAPSHOT flow (docs/semantics.md A6): {@code read_files('folder')} gives
     * {@code from-snapshot} (the folder resolved against the file's folder; the columns are the
     * target's declared column list, required), a table name gives {@code from-snapshot-table} (as
     * written; an unqualified name is resolved where the snapshot job resolves it). The target's
     * expectations are refused (S8 checks change records only); KEYS must be declared columns.
     */
    private SqlPipeline.SnapshotTable snapshotTable(
            FlowDef f, CreateStreamingTable target, SqlStatement.Snapshot snapshot) {
        if (!target.constraints().isEmpty()) {
            throw new SqlException(
                    Code.INVALID_FLOW,
                    target.constraints().get(0).position(),
                    "expectations are not checked on an AUTO CDC FROM SNAPSHOT flow (S8, A6): a"
                            + " row left out of a snapshot would read as a delete of its key;"
                            + " streaming table "
                            + target.name()
                            + " is written FROM SNAPSHOT at "
                            + snapshot.position());
        }
        AutoCdc cdc = f.flow().autoCdc();
        Map<String, Object> defaults = new LinkedHashMap<>();
        String source;
        if (snapshot.of() instanceof ReadFiles r) {
            if (target.columns().isEmpty()) {
                throw new SqlException(
                        Code.INVALID_FLOW,
                        r.position(),
                        "AUTO CDC FROM SNAPSHOT read_files('"
                                + r.path()
                                + "') needs the columns of the snapshot files: declare them on"
                                + " the streaming table, e.g. CREATE OR REFRESH STREAMING TABLE "
                                + target.name()
                                + " (id BIGINT, city STRING) (A6)");
            }
            for (int k = 0; k < cdc.keys().size(); k++) {
                String name = cdc.keys().get(k);
                if (target.columns().stream().noneMatch(c -> c.name().equals(name))) {
                    List<String> declared = new ArrayList<>();
                    target.columns().forEach(c -> declared.add(c.name()));
                    throw new SqlException(
                            Code.UNKNOWN_COLUMN,
                            cdc.keyPositions().get(k),
                            "KEYS column '"
                                    + name
                                    + "' is not a declared column of streaming table "
                                    + target.name()
                                    + " "
                                    + declared
                                    + ", whose columns the snapshot files are read with");
                }
            }
            Path folder = localPath(r);
            defaults.put(FlowOptions.FROM_SNAPSHOT.key(), folder.toString());
            source = "snapshot files in " + folder + " (read_files, FROM SNAPSHOT)";
        } else {
            SqlStatement.Named n = (SqlStatement.Named) snapshot.of();
            if (views.containsKey(key(n.name()))) {
                throw new SqlException(
                        Code.UNSUPPORTED_STATEMENT,
                        n.position(),
                        "not supported by changeflow yet: temporary view "
                                + n.name()
                                + " as a snapshot source; name read_files('folder') or a table"
                                + " after FROM SNAPSHOT");
            }
            defaults.put(FlowOptions.FROM_SNAPSHOT_TABLE.key(), n.name());
            source = "versions of table " + n.name() + " (FROM SNAPSHOT)";
        }
        FlowConfig flow = flow(f, target, shortName(target), defaults);
        return new SqlPipeline.SnapshotTable(
                target.name(),
                flow,
                f.position(),
                snapshot.of().position(),
                source,
                cdc.keys(),
                cdc.keyPositions(),
                snapshot.of() instanceof ReadFiles folder ? folder.path() : null);
    }

    /**
     * A flow over the change feed of a table (S7): an AUTO CDC flow (refused otherwise) whose
     * SEQUENCE BY defaults to {@code _commit_version} and APPLY AS DELETE WHEN to {@code
     * _change_type = 'delete'}; its columns are the source table's, so the target declares none.
     */
    private FlowConfig feedFlow(FlowDef f, CreateStreamingTable target, Feed feed) {
        if (f.flow().replaceUsing() != null) {
            throw new SqlException(
                    Code.UNSUPPORTED_STATEMENT,
                    feed.position(),
                    "not supported by changeflow yet: FLOW REPLACE USING over STREAM("
                            + feed.table()
                            + "), which is the change feed of a table; REPLACE USING reads rows"
                            + " (read_files or a temporary view over it, docs/semantics.md S5)");
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
        if (f.flow().autoCdc() == null) {
            // S7: an append flow takes the rows appended to the table; an update or delete in
            // its change feed fails the flow (SOURCE_ROWS_CHANGED)
            return flow(f, target, feed.table().substring(dot + 1), defaults);
        }
        defaults.put(FlowOptions.SEQUENCE_BY.key(), ChangeFeedColumns.COMMIT_VERSION);
        defaults.put(
                FlowOptions.APPLY_AS_DELETE_WHEN.key(),
                ChangeFeedColumns.CHANGE_TYPE + " = '" + ChangeType.DELETE.value() + "'");
        return flow(f, target, feed.table().substring(dot + 1), defaults);
    }

    private FlowConfig flow(FlowDef f, CreateStreamingTable target, ReadFiles source) {
        Map<String, Object> defaults = new LinkedHashMap<>();
        // S2: schemaHints type some source columns, as the flows file's schema-hints
        putIfSet(
                defaults,
                FlowOptions.SCHEMA_HINTS.key(),
                source.arguments().get(SqlParser.SCHEMA_HINTS));
        return flow(
                f, target, source.arguments().getOrDefault("table", shortName(target)), defaults);
    }

    /** The target's name without namespace: the default source table of a flow. */
    private static String shortName(CreateStreamingTable target) {
        int dot = target.name().lastIndexOf('.');
        return target.name().substring(dot + 1);
    }

    /**
     * The Kafka input of the read_kafka calls (all alike: one job reads one subscription), or null
     * without one; its arguments are resolved as {@link KafkaOptions} (INVALID_OPTION).
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
            options.put(SqlPipeline.READ_KAFKA_OPTIONS.get(a.getKey()).key(), a.getValue());
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
     * The target's declared columns as a Flink DDL column list ({@code name TYPE [NOT NULL]}, with
     * {@code comments} also {@code COMMENT '...'}).
     */
    private static String columnList(CreateStreamingTable target, boolean comments) {
        List<String> cols = new ArrayList<>();
        for (Column c : target.columns()) {
            cols.add(
                    c.name()
                            + " "
                            + c.type()
                            + (c.notNull() ? " NOT NULL" : "")
                            + (comments && c.comment() != null
                                    ? " COMMENT '" + c.comment().replace("'", "''") + "'"
                                    : ""));
        }
        return String.join(", ", cols);
    }

    /**
     * A flow's options from its statement and its target's declaration.
     *
     * @param table the source table ({@code table})
     * @param defaults options the statement's clauses override (same layer)
     */
    private FlowConfig flow(
            FlowDef f, CreateStreamingTable target, String table, Map<String, Object> defaults) {
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
        SqlStatement.ReplaceUsing replace = f.flow().replaceUsing();
        if (replace != null) {
            // S5: REPLACE USING (keys) SEQUENCE BY s
            def.put(FlowOptions.REPLACE_USING.key(), replace.keys());
            def.put(FlowOptions.SEQUENCE_BY.key(), replace.sequenceBy());
        } else if (cdc == null) {
            def.put(FlowOptions.APPEND_ONLY.key(), "true");
            SqlStatement.Select select = f.flow().select();
            if (select != null) {
                // S1: the select list and WHERE are Flink SQL, planned with the flow; a column
                // list declares the query's columns (matched by name, cast to the declared types)
                if (!target.columns().isEmpty()) {
                    def.put(FlowOptions.TARGET_COLUMNS.key(), columnList(target, true));
                }
                if (!select.list().equals("*")) {
                    def.put(FlowOptions.SELECT.key(), select.list());
                }
                putIfSet(def, FlowOptions.SELECT_WHERE.key(), select.where());
            }
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
        if (!target.constraints().isEmpty()) {
            // S8: the table's expectations check the flow into it (AUTO CDC or append)
            List<Map<String, String>> expectations = new ArrayList<>();
            for (SqlStatement.Constraint c : target.constraints()) {
                Map<String, String> item = new LinkedHashMap<>();
                item.put("name", c.name());
                item.put("expect", c.expression());
                item.put("on-violation", c.onViolation().configName());
                expectations.add(item);
            }
            def.put(FlowOptions.EXPECTATIONS.key(), expectations);
        }
        if (!target.columns().isEmpty() && !def.containsKey(FlowOptions.TARGET_COLUMNS.key())) {
            def.put(FlowOptions.SCHEMA.key(), columnList(target, false));
        }
        if (!target.partitionedBy().isEmpty()) {
            def.put(FlowOptions.PARTITIONED_BY.key(), target.partitionedBy());
        }
        Map<String, Object> props = new LinkedHashMap<>();
        for (Map.Entry<String, String> p : target.properties().entrySet()) {
            String k = p.getKey();
            if (k.equals(SqlPipeline.RESET_ALLOWED)) {
                String v = p.getValue().trim().toLowerCase(Locale.ROOT);
                if (!v.equals("true") && !v.equals("false")) {
                    throw new SqlException(
                            Code.INVALID_OPTION,
                            target.position(),
                            "table property '"
                                    + SqlPipeline.RESET_ALLOWED
                                    + "' of "
                                    + targetName
                                    + " is '"
                                    + p.getValue()
                                    + "': give 'true' or 'false'");
                }
                continue;
            }
            if (!k.startsWith(SqlPipeline.PROPERTY_PREFIX)) {
                warnings.add(
                        target.position()
                                + ": table property '"
                                + k
                                + "' of "
                                + targetName
                                + " is not used (flow options take the prefix '"
                                + SqlPipeline.PROPERTY_PREFIX
                                + "')");
                continue;
            }
            String option = k.substring(SqlPipeline.PROPERTY_PREFIX.length());
            if (option.equals(FlowOptions.REPLACE_WHERE.key())
                    || option.equals(FlowOptions.QUERY.key())) {
                // S4: the flows file's form; a statement writes FLOW REPLACE WHERE
                throw new SqlException(
                        Code.INVALID_OPTION,
                        target.position(),
                        "table property '"
                                + k
                                + "' of "
                                + targetName
                                + ": a REPLACE WHERE flow is written CREATE OR REFRESH STREAMING"
                                + " TABLE "
                                + targetName
                                + " FLOW REPLACE WHERE <predicate> BY NAME <query>");
            }
            if (option.equals(FlowOptions.TARGET_COLUMNS.key())) {
                // S1: the flows file's form; a statement declares the table's column list
                throw new SqlException(
                        Code.INVALID_OPTION,
                        target.position(),
                        "table property '"
                                + k
                                + "' of "
                                + targetName
                                + ": declare the columns in the table's column list, CREATE OR"
                                + " REFRESH STREAMING TABLE "
                                + targetName
                                + " (col TYPE [NOT NULL] [COMMENT '...'], ...) AS SELECT ...");
            }
            if (!FlowOptions.SET.keys().contains(option)) {
                TreeSet<String> known = new TreeSet<>(FlowOptions.SET.keys());
                known.remove(FlowOptions.REPLACE_WHERE.key());
                known.remove(FlowOptions.QUERY.key());
                known.remove(FlowOptions.TARGET_COLUMNS.key());
                throw new SqlException(
                        Code.INVALID_OPTION,
                        target.position(),
                        "table property '"
                                + k
                                + "' of "
                                + targetName
                                + " names no flow option (known: "
                                + String.join(", ", known)
                                + ")");
            }
            props.put(option, p.getValue());
        }
        OptionLayer definition =
                OptionLayer.of(
                        OptionSource.DEFINITION, f.position() + ": flow into " + targetName, def);
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

    /**
     * S2: a local path resolved against the file's folder, or an object-store URI ({@code
     * s3://...}) as written; both read through Flink's file systems.
     */
    private org.apache.flink.core.fs.Path path(ReadFiles r) {
        try {
            return dev.changeflow.sources.files.InputFileSystems.parse(r.path(), baseDir);
        } catch (IllegalArgumentException e) {
            throw new SqlException(
                    Code.INVALID_OPTION,
                    r.position(),
                    "read_files path '"
                            + r.path()
                            + "' is no valid path or URI: "
                            + e.getMessage());
        }
    }

    /** A local folder of snapshot files (A6), resolved against the file's folder. */
    private Path localPath(ReadFiles r) {
        String p = r.path();
        if (p.contains("://")) {
            throw new SqlException(
                    Code.UNSUPPORTED_STATEMENT,
                    r.position(),
                    "not supported by changeflow yet: read_files of '"
                            + p
                            + "' as snapshot files (FROM SNAPSHOT reads local folders)");
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
        return statements.isEmpty() ? new SqlPosition(where, 1, 1) : statements.get(0).position();
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
