package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowOptions;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcPredicates;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.operators.ReplaceUsingSpec;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTables;
import dev.changeflow.sources.cdf.ChangeFeedColumns;
import dev.changeflow.sources.changes.ChangeRecordFormat;
import dev.changeflow.sources.changes.DebeziumMetadata;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.changes.OnInvalidRecord;
import dev.changeflow.sources.changes.OnSchemaChange;
import dev.changeflow.sources.changes.SchemaSampler;
import dev.changeflow.sources.files.ChangeFiles;

import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Resolves an {@link IngestConfig} against its input into an {@link IngestPlan}: column types
 * (declared {@code schema}, else Debezium's schema wrapper or inference from a sample of the input,
 * A5), sequence defaults (per Debezium connector, sampled from {@code source.connector}: {@code
 * source.lsn} for PostgreSQL or when unknown, {@code log_position} for the others), aliases of
 * metadata columns, and the AUTO CDC definition of each keyed flow (validated, A1).
 */
public final class IngestPlanner {
    /** Default namespace when neither the flows file nor the records name one. */
    public static final String DEFAULT_NAMESPACE = "default";

    private IngestPlanner() {}

    /**
     * @param config the flows
     * @param inputs files or folders used to sample column types of flows without a declared schema
     * @throws IllegalArgumentException when a flow has no declared schema and no sample record
     * @throws dev.changeflow.operators.AutoCdcException when a definition breaks an A1 rule
     */
    public static IngestPlan plan(IngestConfig config, List<Path> inputs) throws IOException {
        return plan(config, inputs, null);
    }

    /**
     * Plans a job whose input is Kafka: as {@link #plan(IngestConfig, List)}, with the first
     * records of the subscribed partitions ({@link KafkaSampler#firstRecords}) sampled in place of
     * input files (A5): their {@code source.connector} chooses each flow's default sequence (none
     * sampled for a flow: {@code source.lsn}, as before) and they give the columns of flows without
     * a declared schema. The namespace is not taken from them ({@code namespace}, else {@value
     * #DEFAULT_NAMESPACE}, as before).
     *
     * @param inputs files or folders (with {@code kafkaSample} null), else ignored
     * @param kafkaSample the Kafka records to sample, or null to sample {@code inputs}
     * @throws IllegalArgumentException when a flow has no declared schema and no sample record
     * @throws dev.changeflow.operators.AutoCdcException when a definition breaks an A1 rule
     */
    public static IngestPlan plan(
            IngestConfig config,
            List<Path> inputs,
            @javax.annotation.Nullable List<SchemaSampler.KafkaSample> kafkaSample)
            throws IOException {
        return plan(config, inputs, kafkaSample, null);
    }

    /**
     * As {@link #plan(IngestConfig, List, List)}, with the catalog of the target tables: a flow
     * without a declared schema whose option (COLUMNS, IGNORE NULL UPDATES ON, TRACK HISTORY ON)
     * names a column its sampled records lack — the source dropped it (A7 item 3) — takes that
     * column from its existing target table, typed as there, instead of failing with {@code
     * UNKNOWN_COLUMN}. The catalog is opened only when such a flow exists.
     *
     * @param tables the catalog of the targets, or null to look at no table
     */
    public static IngestPlan plan(
            IngestConfig config,
            List<Path> inputs,
            @javax.annotation.Nullable List<SchemaSampler.KafkaSample> kafkaSample,
            @javax.annotation.Nullable CatalogSettings tables)
            throws IOException {
        List<org.apache.flink.core.fs.Path> files = new ArrayList<>();
        for (Path p : inputs) {
            files.add(dev.changeflow.sources.files.InputFileSystems.of(p));
        }
        return planFiles(config, files, kafkaSample, tables);
    }

    /**
     * As {@link #plan(IngestConfig, List, List, CatalogSettings)}, with inputs on any Flink file
     * system (local {@code file:} paths, {@code s3://...}; docs/semantics.md S2): the records are
     * sampled, and CSV headers and Parquet schemas probed, through Flink's file systems.
     *
     * @throws dev.changeflow.sources.files.InputFileSystems.NoFileSystemException when no file
     *     system serves an input's scheme
     */
    public static IngestPlan planFiles(
            IngestConfig config,
            List<org.apache.flink.core.fs.Path> inputs,
            @javax.annotation.Nullable List<SchemaSampler.KafkaSample> kafkaSample,
            @javax.annotation.Nullable CatalogSettings tables)
            throws IOException {
        if (config.flows.isEmpty()) {
            throw new IllegalArgumentException(
                    "no flows: the flows file has an empty 'flows:' list, or no flows file"
                            + " (--flows) or --table/--keys flags were given");
        }
        Set<String> toSample = new LinkedHashSet<>();
        Set<String> names = new HashSet<>();
        for (FlowConfig f : config.flows) {
            f.validate();
            if (f.isFromSnapshot()) {
                throw new IllegalArgumentException(
                        "flow '"
                                + f.flowName()
                                + "': 'from-snapshot' flows are run by LocalSnapshotIngest (ingest"
                                + " --flows with snapshot flows only) or AutoCdcFlow.fromSnapshots;"
                                + " they do not mix with change-record flows");
            }
            if (!names.add(f.flowName())) {
                throw new IllegalArgumentException(
                        "two flows are named '"
                                + f.flowName()
                                + "' (table '"
                                + f.table
                                + "'): give each flow its own"
                                + " 'target' (or 'name'); a table is written by one flow");
            }
            if (f.schema == null) {
                toSample.add(f.table);
            } else if (f.sequenceBy.isEmpty()
                    && !f.appendOnly
                    && format(f.format != null ? f.format : config.format)
                            == ChangeRecordFormat.DEBEZIUM_JSON) {
                toSample.add(f.table); // its connector chooses the default sequence (A5)
            }
        }
        Map<String, RowType> sampled = Map.of();
        SchemaSampler.Result sample = null;
        ChangeFiles.Format files = fileFormat(config.format);
        for (FlowConfig f : config.flows) {
            if (f.format != null && fileFormat(f.format) != files) {
                // S2: one file source reads every file of the job one way
                throw new IllegalArgumentException(
                        "flow '"
                                + f.flowName()
                                + "': format '"
                                + f.format
                                + "' differs from the job's format '"
                                + config.format
                                + "'; the files of one job are read one way (give csv or parquet"
                                + " as the flows file's top-level 'format', not per flow)");
            }
        }
        if (config.maxFilesPerTrigger != null && kafkaSample != null) {
            throw new IllegalArgumentException(
                    "'max-files-per-trigger' limits the files read per checkpoint; the job reads"
                            + " Kafka (give it without 'kafka', or leave it out)");
        }
        if (files != ChangeFiles.Format.LINES && kafkaSample != null) {
            throw new IllegalArgumentException(
                    "format "
                            + config.format
                            + " reads files (read_files / --input), not Kafka records");
        }
        if (files == ChangeFiles.Format.CSV && !config.csv.header) {
            // S2: a CSV file without a header line is read by position: into the declared
            // columns of the job's (one) plain-row flow, else _c0, _c1, ...
            for (FlowConfig f : config.flows) {
                if (f.schema != null) {
                    List<String> declared = new ArrayList<>();
                    for (RowType.RowField field :
                            SchemaSampler.parseColumns(f.schema).getFields()) {
                        declared.add(field.getName());
                    }
                    if (config.csv.columns != null && !config.csv.columns.equals(declared)) {
                        throw new IllegalArgumentException(
                                "flow '"
                                        + f.flowName()
                                        + "' declares the columns "
                                        + declared
                                        + ", another flow of the job "
                                        + config.csv.columns
                                        + "; CSV files without a header (header => false) are read"
                                        + " by position into one column list");
                    }
                    config.csv = config.csv.withColumns(declared);
                }
            }
        }
        if (files != ChangeFiles.Format.LINES) {
            // S2: CSV columns are the header's, STRING (the declared columns or schema-hints type
            // them); Parquet columns are the file's
            RowType columns = toSample.isEmpty() ? null : fileColumns(files, inputs, config.csv);
            if (columns != null) {
                Map<String, RowType> byTable = new LinkedHashMap<>();
                for (String t : toSample) {
                    byTable.put(t, columns);
                }
                sampled = byTable;
            }
        } else if (kafkaSample != null) {
            if (!toSample.isEmpty()) {
                sample = SchemaSampler.sampleKafka(kafkaSample, format(config.format), toSample);
                sampled = sample.types();
            }
        } else if (!toSample.isEmpty() || config.namespace == null) {
            sample =
                    SchemaSampler.sampleFlinkPaths(
                            inputs,
                            format(config.format),
                            toSample,
                            SchemaSampler.DEFAULT_MAX_LINES);
            sampled = sample.types();
        }
        String namespace = config.namespace;
        if (namespace == null) {
            namespace =
                    kafkaSample == null && sample != null && sample.namespace() != null
                            ? sample.namespace()
                            : DEFAULT_NAMESPACE;
        }
        List<IngestPlan.Flow> flows = new ArrayList<>();
        List<Catalog> openedCatalog = new ArrayList<>(1);
        try {
            planFlows(
                    config,
                    inputs,
                    kafkaSample,
                    tables,
                    sampled,
                    sample,
                    namespace,
                    flows,
                    openedCatalog);
        } finally {
            for (Catalog c : openedCatalog) {
                if (c instanceof java.io.Closeable) {
                    ((java.io.Closeable) c).close();
                }
            }
        }
        return plan(config, flows, namespace);
    }

    private static void planFlows(
            IngestConfig config,
            List<org.apache.flink.core.fs.Path> inputs,
            @javax.annotation.Nullable List<SchemaSampler.KafkaSample> kafkaSample,
            @javax.annotation.Nullable CatalogSettings tables,
            Map<String, RowType> sampled,
            @javax.annotation.Nullable SchemaSampler.Result sample,
            String namespace,
            List<IngestPlan.Flow> flows,
            List<Catalog> openedCatalog) {
        for (FlowConfig f : config.flows) {
            ChangeRecordFormat format = format(f.format != null ? f.format : config.format);
            RowType dataType;
            if (f.schema != null) {
                dataType = SchemaSampler.parseColumns(f.schema);
            } else {
                dataType = sampled.get(f.table);
                if (dataType == null) {
                    throw new IllegalArgumentException(
                            "flow '"
                                    + f.flowName()
                                    + "': no record of table '"
                                    + f.table
                                    + "' found in "
                                    + (kafkaSample != null
                                            ? "the first records of the Kafka topics ("
                                                    + kafkaSample.size()
                                                    + " sampled)"
                                            : display(inputs))
                                    + " to infer its columns; declare them with 'schema: \"col TYPE, ...\"'");
                }
            }
            if (f.schema == null && tables != null) {
                dataType =
                        withDroppedOptionColumns(
                                f, dataType, format, namespace, tables, openedCatalog);
            }
            if (f.schemaHints != null) {
                RowType hints = FlowOptions.schemaHintColumns(f.schemaHints);
                if (f.schema != null) {
                    checkHintsAgree(f, dataType, hints);
                }
                dataType = withHints(dataType, hints);
            }
            String connector = sample == null ? null : sample.connectors().get(f.table);
            flows.add(
                    flow(
                            config,
                            f,
                            format,
                            dataType,
                            namespace,
                            List.of(),
                            DebeziumMetadata.defaultSequence(connector),
                            null));
        }
    }

    /**
     * {@code sampled} plus the columns that {@code f}'s options name and its sample lacks, where
     * its target table has them (typed from the table, nullable); {@code sampled} itself when there
     * are none. Opens the catalog into {@code opened} the first time it is needed.
     */
    private static RowType withDroppedOptionColumns(
            FlowConfig f,
            RowType sampled,
            ChangeRecordFormat format,
            String namespace,
            CatalogSettings tables,
            List<Catalog> opened) {
        boolean debezium = format == ChangeRecordFormat.DEBEZIUM_JSON;
        Set<String> wanted = new LinkedHashSet<>();
        for (ColumnSelection c :
                java.util.Arrays.asList(f.columns, f.ignoreNullUpdates, f.trackHistoryOn)) {
            if (c == null || c.mode() == ColumnSelection.Mode.ALL) {
                continue;
            }
            for (String name : c.columns()) {
                String n = debezium ? DebeziumMetadata.resolveAlias(name) : name;
                if (!sampled.getFieldNames().contains(n)
                        && !DebeziumMetadata.NAMES.contains(n)
                        && !n.startsWith("_source")
                        && !n.contains(".")) {
                    wanted.add(n);
                }
            }
        }
        if (wanted.isEmpty()) {
            return sampled;
        }
        if (opened.isEmpty()) {
            opened.add(tables.open());
        }
        Catalog catalog = opened.get(0);
        TableIdentifier target = target(f, namespace);
        if (!catalog.tableExists(target)) {
            return sampled; // a new table: the option names an unknown column (UNKNOWN_COLUMN)
        }
        // the sampled columns and the wanted ones the table has, in the table's column order
        Map<String, RowType.RowField> rest = new LinkedHashMap<>();
        for (RowType.RowField d : sampled.getFields()) {
            rest.put(d.getName(), d);
        }
        List<RowType.RowField> fields = new ArrayList<>();
        for (Types.NestedField c : catalog.loadTable(target).schema().columns()) {
            RowType.RowField d = rest.remove(c.name());
            if (d != null) {
                fields.add(d);
            } else if (wanted.contains(c.name())) {
                fields.add(
                        new RowType.RowField(
                                c.name(), FlinkSchemaUtil.convert(c.type()).copy(true)));
            }
        }
        fields.addAll(rest.values());
        return new RowType(fields);
    }

    /**
     * {@code schema-hints} over a flow's source columns (docs/semantics.md S2): a hinted column
     * takes the hint's type (nullable unless the hint says NOT NULL), in its place; hinted columns
     * the type lacks are added at the end.
     */
    /**
     * S2: a declared column list types its columns; a schema hint that gives one of them another
     * type contradicts it (refused before anything runs, instead of the hint silently winning).
     *
     * @throws IllegalArgumentException naming the column, both types and the fix
     */
    private static void checkHintsAgree(FlowConfig f, RowType declared, RowType hints) {
        for (RowType.RowField h : hints.getFields()) {
            for (RowType.RowField d : declared.getFields()) {
                if (d.getName().equals(h.getName())
                        && !d.getType().copy(true).equals(h.getType().copy(true))) {
                    throw new IllegalArgumentException(
                            "flow '"
                                    + f.flowName()
                                    + "': schema-hints types column '"
                                    + h.getName()
                                    + "' "
                                    + h.getType().copy(true).asSummaryString()
                                    + ", the declared column list "
                                    + d.getType().copy(true).asSummaryString()
                                    + "; a declared column takes the declared type (leave the hint"
                                    + " out, or change the column list)");
                }
            }
        }
    }

    static RowType withHints(RowType dataType, RowType hints) {
        Map<String, RowType.RowField> hinted = new LinkedHashMap<>();
        for (RowType.RowField h : hints.getFields()) {
            hinted.put(h.getName(), h);
        }
        List<RowType.RowField> fields = new ArrayList<>();
        for (RowType.RowField d : dataType.getFields()) {
            RowType.RowField h = hinted.remove(d.getName());
            fields.add(h != null ? new RowType.RowField(d.getName(), h.getType()) : d);
        }
        fields.addAll(hinted.values());
        return new RowType(fields);
    }

    /**
     * The table a flow writes: its {@code target} (namespace-qualified or in {@code namespace}, the
     * flows file's namespace or {@link #DEFAULT_NAMESPACE}).
     */
    public static TableIdentifier target(FlowConfig f, String namespace) {
        String ns = f.targetNamespace() != null ? f.targetNamespace() : namespace;
        return TableIdentifier.of(Namespace.of(ns.split("\\.")), f.targetName());
    }

    /** The plan of {@code flows}, each writing a table of its own. */
    private static IngestPlan plan(
            IngestConfig config, List<IngestPlan.Flow> flows, String namespace) {
        Set<TableIdentifier> targets = new HashSet<>();
        for (IngestPlan.Flow f : flows) {
            if (!targets.add(f.target)) {
                throw new IllegalArgumentException(
                        "two flows write table " + f.target + ": give each flow its own 'target'");
            }
        }
        return new IngestPlan(config, flows, Namespace.of(namespace.split("\\.")));
    }

    /**
     * Plans a job whose flows read the change feeds of Iceberg tables (docs/semantics.md S7). A
     * flow's rows are its source table's change feed: the table's columns, then {@code
     * _change_type}, {@code _commit_version} and {@code _commit_timestamp} (F1), which are metadata
     * columns — usable by SEQUENCE BY and predicates, stored only when COLUMNS lists them. Every
     * flow must be keyed and name its sequence and, if any, its delete predicate (the SQL front end
     * gives the defaults {@code _commit_version} and {@code _change_type = 'delete'}).
     *
     * @param sources per flow of {@code config} (by index), the table whose change feed it reads
     * @param feedTypes per source table, its change feed's row type ({@code
     *     StreamingAccess.rowType})
     * @throws IllegalArgumentException when a flow is append-only or its definition does not fit
     *     the change feed's columns
     * @throws dev.changeflow.operators.AutoCdcException when a definition breaks an A1 rule
     */
    public static IngestPlan planChangeFeeds(
            IngestConfig config,
            List<TableIdentifier> sources,
            Map<TableIdentifier, RowType> feedTypes) {
        String namespace = config.namespace != null ? config.namespace : DEFAULT_NAMESPACE;
        List<IngestPlan.Flow> flows = new ArrayList<>();
        for (int i = 0; i < config.flows.size(); i++) {
            FlowConfig f = config.flows.get(i);
            f.validate();
            // S7: an append flow takes the rows appended to the table (IngestJob checks that
            // every change row is an insert)
            flows.add(
                    flow(
                            config,
                            f,
                            ChangeRecordFormat.JSON,
                            feedTypes.get(sources.get(i)),
                            namespace,
                            List.of(),
                            List.of(),
                            sources.get(i)));
        }
        return plan(config, flows, namespace);
    }

    /**
     * One flow of the plan: decoder routing, AUTO CDC definition, target and table options.
     *
     * @param changeFeed the table whose change feed the flow reads (its metadata columns are then
     *     the change feed's), or null for change records
     */
    private static IngestPlan.Flow flow(
            IngestConfig config,
            FlowConfig f,
            ChangeRecordFormat format,
            RowType dataType,
            String namespace,
            List<String> added,
            List<String> defaultSequence,
            @javax.annotation.Nullable TableIdentifier changeFeed) {
        boolean debezium = format == ChangeRecordFormat.DEBEZIUM_JSON;
        List<String> sequence = new ArrayList<>();
        for (String s : f.sequenceBy) {
            sequence.add(debezium ? DebeziumMetadata.resolveAlias(s) : s);
        }
        boolean replaceUsing = f.isReplaceUsing();
        if (sequence.isEmpty() && !f.appendOnly && !replaceUsing) {
            if (!debezium) {
                throw new IllegalArgumentException(
                        "flow '" + f.flowName() + "': 'sequence-by' is required for format json");
            }
            sequence.addAll(defaultSequence); // A5: by the records' connector
        }
        // S5: the decoder checks a REPLACE USING flow's sequence like AUTO CDC's (NULL_SEQUENCE
        // with the record's file and line, or topic, partition and offset); a sequence column
        // that is no data column is left to ReplaceUsingSpec, which names it with A1's code
        List<String> decoderSequence =
                !replaceUsing || dataType.getFieldNames().containsAll(sequence)
                        ? sequence
                        : List.of();
        DecoderFlow decoder =
                DecoderFlow.builder(f.flowName(), format, dataType)
                        .sourceNames(routing(config, f, format))
                        .keys(f.keys)
                        .sequenceBy(decoderSequence)
                        .truncateEnabled(f.truncate || f.applyAsTruncateWhen != null)
                        // S5: rows come in as an append-only flow's; the operator replaces them
                        .appendOnly(f.appendOnly || replaceUsing)
                        .onSchemaChange(OnSchemaChange.fromConfigName(f.onSchemaChange))
                        .onInvalidRecord(OnInvalidRecord.fromConfigName(f.onInvalidRecord))
                        .maxRecordBytes(config.maxRecordBytes)
                        .unavailablePlaceholder(f.unavailablePlaceholder)
                        .build();
        AutoCdcSpec spec = null;
        ReplaceUsingSpec replace = null;
        if (replaceUsing) {
            replace =
                    ReplaceUsingSpec.of(
                            f.flowName(),
                            decoder.dataType(),
                            f.replaceUsing,
                            sequence,
                            OnInvalidRecord.fromConfigName(f.onInvalidRecord)
                                    == OnInvalidRecord.FAIL);
        } else if (!f.appendOnly) {
            spec =
                    AutoCdcSpec.builder(f.flowName(), decoder.sourceType())
                            .metadataColumns(
                                    changeFeed != null
                                            ? ChangeFeedColumns.RESERVED
                                            : decoder.metadataColumns())
                            .keys(f.keys)
                            .sequenceBy(sequence)
                            .scdType(f.scdType)
                            .columns(withAdded(resolve(f.columns, debezium), added))
                            .ignoreNullUpdates(f.ignoreNullUpdates)
                            .trackHistory(f.trackHistoryOn)
                            .deleteWhen(f.applyAsDeleteWhen)
                            .truncateWhen(f.applyAsTruncateWhen)
                            .expectations(f.expectations)
                            .truncateEnabled(f.truncate)
                            .tombstoneGcThreshold(f.tombstoneGcThreshold)
                            .applyBufferKeys(f.applyBufferKeys)
                            .build();
            // a bad APPLY AS DELETE/TRUNCATE WHEN or expectation (S8) fails here, before any table
            // is created
            AutoCdcPredicates.validate(spec);
        }
        AppendQuery query = null;
        if (f.appendOnly && f.hasQuery()) {
            // S1: the select list and WHERE, planned by Flink over the rows the flow appends
            RowType in =
                    new IngestPlan.Flow(f, decoder, null, target(f, namespace), null, changeFeed)
                            .appendInputType();
            query =
                    AppendQuery.plan(
                            f.flowName(),
                            in,
                            f.select,
                            f.selectWhere,
                            f.targetColumns == null
                                    ? null
                                    : SchemaSampler.parseColumns(f.targetColumns));
        }
        TableIdentifier target = target(f, namespace);
        // A5: nanosecond timestamps (Iceberg timestamp_ns) need format v3; chosen when not given
        RowType stored =
                spec != null
                        ? spec.targetType()
                        : new IngestPlan.Flow(
                                        f, decoder, null, target, null, changeFeed, null, query)
                                .appendType();
        if (spec == null && f.appendOnly) {
            // S8: an append flow's expectations are Flink SQL over the rows it appends (the
            // table's columns); a bad one fails here, before any table is created
            AutoCdcPredicates.validateExpectations(f.flowName(), stored, f.expectations);
        }
        int formatVersion = !f.formatVersionSet && hasNanoTimestamp(stored) ? 3 : f.formatVersion;
        StreamingTableOptions options =
                StreamingTableOptions.builder()
                        .formatVersion(formatVersion)
                        .partitionBy(f.partitionedBy)
                        .build();
        return new IngestPlan.Flow(f, decoder, spec, target, options, changeFeed, replace, query);
    }

    /** Whether a top-level column is TIMESTAMP(7..9) or TIMESTAMP_LTZ(7..9) (timestamp_ns). */
    static boolean hasNanoTimestamp(RowType type) {
        for (LogicalType t : type.getChildren()) {
            if (t instanceof TimestampType && ((TimestampType) t).getPrecision() > 6
                    || t instanceof LocalZonedTimestampType
                            && ((LocalZonedTimestampType) t).getPrecision() > 6) {
                return true;
            }
        }
        return false;
    }

    /**
     * The plan with every flow's data columns following its existing target table (semantics.md
     * A7), for flows under {@code on-schema-change = add-columns} and flows whose columns were
     * inferred (no declared {@code schema}):
     *
     * <ul>
     *   <li>columns the table has and the flow lacks — added by an earlier run that met a {@link
     *       dev.changeflow.sources.changes.SchemaChangeException}, or dropped at the source since
     *       (A7 items 2, 3) — become nullable data columns typed from the Iceberg schema, in the
     *       table's column order (columns the table lacks follow), so records without them read
     *       null;
     *   <li>a column the table holds in a wider type than the flow (an Iceberg promotion: INT →
     *       BIGINT, FLOAT → DOUBLE, DECIMAL(p, s) → DECIMAL(p', s), p' &gt; p) is read in the
     *       table's type: every value fits;
     *   <li>a column the flow has in a wider type than the table is widened in the table (Iceberg
     *       {@code UpdateSchema.updateColumn}) when the flow is under {@code add-columns} (A7 item
     *       4).
     * </ul>
     *
     * Flows reading the same source table get the same columns, so they keep sharing one decoder;
     * an explicit COLUMNS list includes the added ones too. Returns {@code plan} itself when
     * nothing changes. Call it before building the job, so a restart — local or on a cluster —
     * reads the evolved tables with the wider row type.
     *
     * <p>Saved AUTO CDC state follows every such widening, also FLOAT → DOUBLE and DECIMAL across
     * 18 digits, whose stored encoding differs: the apply operators rewrite their stored rows when
     * they are restored with the wider type ({@code dev.changeflow.operators.StateMigration}).
     *
     * @throws AutoCdcException {@code INCOMPATIBLE_TYPE_CHANGE} naming the column, the table's and
     *     the source's type: a change that is no Iceberg promotion either way, a KEYS or SEQUENCE
     *     BY column that changed type, or a widening without {@code add-columns}
     */
    public static IngestPlan withAddedColumns(IngestPlan plan, Catalog catalog) {
        Map<String, List<RowType.RowField>> bySource = new LinkedHashMap<>();
        Map<String, List<String>> addedBySource = new LinkedHashMap<>();
        for (IngestPlan.Flow f : plan.flows) {
            if (!followsTable(f) || !catalog.tableExists(f.target)) {
                continue;
            }
            Table table = catalog.loadTable(f.target);
            List<RowType.RowField> data =
                    bySource.getOrDefault(f.config.table, f.decoder.dataType().getFields());
            List<String> added =
                    addedBySource.computeIfAbsent(f.config.table, k -> new ArrayList<>());
            List<RowType.RowField> merged = followTable(f, table, data, added);
            bySource.put(f.config.table, merged);
        }
        boolean changed = false;
        for (IngestPlan.Flow f : plan.flows) {
            List<RowType.RowField> merged = bySource.get(f.config.table);
            if (merged != null
                    && followsTable(f)
                    && !merged.equals(f.decoder.dataType().getFields())) {
                changed = true;
            }
        }
        if (!changed) {
            return withStateTypes(plan, catalog);
        }
        List<IngestPlan.Flow> flows = new ArrayList<>();
        for (IngestPlan.Flow f : plan.flows) {
            List<RowType.RowField> merged = bySource.get(f.config.table);
            if (merged == null
                    || !followsTable(f)
                    || merged.equals(f.decoder.dataType().getFields())) {
                flows.add(f);
                continue;
            }
            flows.add(
                    flow(
                            plan.config,
                            f.config,
                            f.decoder.format(),
                            new RowType(merged),
                            plan.quarantineNamespace.toString(),
                            addedBySource.get(f.config.table),
                            f.decoder.sequenceBy(),
                            f.changeFeed));
        }
        return withStateTypes(
                new IngestPlan(plan.config, flows, plan.quarantineNamespace), catalog);
    }

    /**
     * Gives each keyed flow the pre-widening types its table records ({@link
     * StreamingTables#PRE_WIDENING_TYPE_PREFIX}), so AUTO CDC state saved by a release without the
     * row-type record is read in the types it was written in (A7 item 4, {@link
     * AutoCdcSpec#unrecordedStateTypes()}); {@code plan} itself when no table records any.
     */
    static IngestPlan withStateTypes(IngestPlan plan, Catalog catalog) {
        List<IngestPlan.Flow> flows = new ArrayList<>();
        boolean changed = false;
        for (IngestPlan.Flow f : plan.flows) {
            Map<String, String> types = new LinkedHashMap<>();
            if (f.spec != null && catalog.tableExists(f.target)) {
                catalog.loadTable(f.target)
                        .properties()
                        .forEach(
                                (k, v) -> {
                                    if (k.startsWith(StreamingTables.PRE_WIDENING_TYPE_PREFIX)) {
                                        types.put(
                                                k.substring(
                                                        StreamingTables.PRE_WIDENING_TYPE_PREFIX
                                                                .length()),
                                                v);
                                    }
                                });
            }
            if (types.isEmpty() || types.equals(f.spec.unrecordedStateTypes())) {
                flows.add(f);
                continue;
            }
            flows.add(
                    new IngestPlan.Flow(
                            f.config,
                            f.decoder,
                            f.spec.withUnrecordedStateTypes(types),
                            f.target,
                            f.tableOptions,
                            f.changeFeed));
            changed = true;
        }
        return changed ? new IngestPlan(plan.config, flows, plan.quarantineNamespace) : plan;
    }

    /**
     * Add-columns flows, and flows whose columns come from the input (A7); not a flow over a change
     * feed, whose columns are its source table's.
     */
    private static boolean followsTable(IngestPlan.Flow f) {
        return f.changeFeed == null
                && f.query == null // S1: its columns are its select list's
                && (f.decoder.onSchemaChange() == OnSchemaChange.ADD_COLUMNS
                        || f.config.schema == null);
    }

    /**
     * {@code data} in the order of {@code table}'s columns, with the table's columns it lacks
     * (appended to {@code added}) and the types of A7 item 4; widens the table where the flow is
     * wider.
     */
    private static List<RowType.RowField> followTable(
            IngestPlan.Flow f, Table table, List<RowType.RowField> data, List<String> added) {
        Map<String, RowType.RowField> byName = new LinkedHashMap<>();
        for (RowType.RowField d : data) {
            byName.put(d.getName(), d);
        }
        Set<String> metadata = f.decoder.metadataColumns();
        Set<String> keysAndSequence = new HashSet<>(f.config.keys);
        keysAndSequence.addAll(f.decoder.sequenceBy());
        List<RowType.RowField> merged = new ArrayList<>();
        Map<String, org.apache.iceberg.types.Type.PrimitiveType> widen = new LinkedHashMap<>();
        for (org.apache.iceberg.types.Types.NestedField c : table.schema().columns()) {
            String n = c.name();
            if (n.equals(AutoCdcSpec.START_AT)
                    || n.equals(AutoCdcSpec.END_AT)
                    || metadata.contains(n)) {
                continue;
            }
            RowType.RowField d = byName.remove(n);
            LogicalType tableType = FlinkSchemaUtil.convert(c.type());
            if (d == null) {
                merged.add(new RowType.RowField(n, tableType.copy(true)));
                if (!added.contains(n)) {
                    added.add(n);
                }
                continue;
            }
            org.apache.iceberg.types.Type have = c.type();
            org.apache.iceberg.types.Type want = FlinkSchemaUtil.convert(d.getType());
            if (StreamingTables.sameType(have, want)) {
                merged.add(d);
            } else if (want.isPrimitiveType()
                    && have.isPrimitiveType()
                    && TypeUtil.isPromotionAllowed(want, have.asPrimitiveType())) {
                // the source is narrower than the table: read in the table's type, every value fits
                merged.add(
                        new RowType.RowField(
                                n,
                                tableType.copy(d.getType().isNullable()),
                                d.getDescription().orElse(null)));
            } else if (want.isPrimitiveType()
                    && have.isPrimitiveType()
                    && TypeUtil.isPromotionAllowed(have, want.asPrimitiveType())) {
                String problem = null;
                if (keysAndSequence.contains(n)) {
                    problem =
                            "it is a KEYS or SEQUENCE BY column, whose saved state and table"
                                    + " identity are bound to its type";
                } else if (f.decoder.onSchemaChange() != OnSchemaChange.ADD_COLUMNS) {
                    problem =
                            "the flow's on-schema-change is not add-columns (set it to widen the"
                                    + " table, A7)";
                }
                if (problem != null) {
                    throw incompatible(f, n, have, want, problem);
                }
                widen.put(n, want.asPrimitiveType());
                merged.add(d);
            } else {
                throw incompatible(
                        f,
                        n,
                        have,
                        want,
                        "neither type is an Iceberg promotion of the other (INT → BIGINT, FLOAT →"
                                + " DOUBLE, DECIMAL precision up at the same scale)");
            }
        }
        if (added.isEmpty() && widen.isEmpty() && sameTypes(merged, data)) {
            return data; // nothing evolved: the flow keeps its own column order
        }
        merged.addAll(byName.values());
        if (!widen.isEmpty()) {
            StreamingTables.widenColumns(table, widen);
        }
        return merged;
    }

    /** Whether every column of {@code merged} has its type in {@code data}. */
    private static boolean sameTypes(List<RowType.RowField> merged, List<RowType.RowField> data) {
        for (RowType.RowField m : merged) {
            for (RowType.RowField d : data) {
                if (d.getName().equals(m.getName()) && !d.getType().equals(m.getType())) {
                    return false;
                }
            }
        }
        return true;
    }

    static AutoCdcException incompatible(
            IngestPlan.Flow f,
            String column,
            org.apache.iceberg.types.Type have,
            org.apache.iceberg.types.Type want,
            String why) {
        return new AutoCdcException(
                AutoCdcException.Code.INCOMPATIBLE_TYPE_CHANGE,
                "flow '"
                        + f.name()
                        + "': column '"
                        + column
                        + "' is "
                        + have
                        + " in table "
                        + f.target
                        + " but "
                        + want
                        + " at the source, and the table cannot follow: "
                        + why
                        + ". Nothing was changed; the table and its history are kept. Fix: declare"
                        + " the column with the table's type in the flow's schema (values that do"
                        + " not fit are quarantined as TYPE_MISMATCH), or send the new values to a"
                        + " new column (A7).");
    }

    /** An INCLUDE list gains the added columns; ALL and EXCEPT select them already. */
    private static ColumnSelection withAdded(ColumnSelection c, List<String> added) {
        if (added.isEmpty() || c.mode() != ColumnSelection.Mode.INCLUDE) {
            return c;
        }
        List<String> cols = new ArrayList<>(c.columns());
        for (String a : added) {
            if (!cols.contains(a)) {
                cols.add(a);
            }
        }
        return ColumnSelection.include(cols);
    }

    private static ColumnSelection resolve(ColumnSelection c, boolean debezium) {
        if (!debezium || c.mode() == ColumnSelection.Mode.ALL) {
            return c;
        }
        List<String> cols = new ArrayList<>();
        for (String s : c.columns()) {
            cols.add(DebeziumMetadata.resolveAlias(s));
        }
        return c.mode() == ColumnSelection.Mode.INCLUDE
                ? ColumnSelection.include(cols)
                : ColumnSelection.except(cols);
    }

    /**
     * The table names a flow's records are routed by. Debezium records name their table; plain JSON
     * lines do not (unless they come in the {@code {"topic", "value"}} line form), so a job with a
     * single plain JSON flow sends it every record.
     */
    static List<String> routing(IngestConfig config, FlowConfig f, ChangeRecordFormat format) {
        if (format == ChangeRecordFormat.JSON) {
            long jsonTables =
                    config.flows.stream()
                            .filter(
                                    x ->
                                            format(x.format != null ? x.format : config.format)
                                                    == ChangeRecordFormat.JSON)
                            .map(x -> x.table)
                            .distinct()
                            .count();
            if (jsonTables == 1) {
                return List.of();
            }
        }
        return List.of(f.table);
    }

    /**
     * How the job's files are read (docs/semantics.md S2): CSV and Parquet files are turned into
     * plain JSON rows by the source, every other format is JSON lines.
     */
    public static ChangeFiles.Format fileFormat(String name) {
        return name.equalsIgnoreCase("csv")
                ? ChangeFiles.Format.CSV
                : name.equalsIgnoreCase("parquet")
                        ? ChangeFiles.Format.PARQUET
                        : ChangeFiles.Format.LINES;
    }

    /**
     * The source columns of CSV or Parquet files: the first CSV file's header (STRING columns) or
     * the first Parquet file's schema; null when there is no file yet.
     */
    @javax.annotation.Nullable
    private static RowType fileColumns(
            ChangeFiles.Format files,
            List<org.apache.flink.core.fs.Path> inputs,
            dev.changeflow.sources.files.CsvOptions csv)
            throws IOException {
        if (files == ChangeFiles.Format.PARQUET) {
            return ChangeFiles.parquetRowTypeForFlinkPaths(inputs);
        }
        List<String> header = ChangeFiles.csvHeaderForFlinkPaths(inputs, csv);
        if (header.isEmpty()) {
            return null;
        }
        List<RowType.RowField> fields = new ArrayList<>();
        for (String h : header) {
            fields.add(new RowType.RowField(h, new VarCharType(true, VarCharType.MAX_LENGTH)));
        }
        return new RowType(fields);
    }

    /** Inputs as messages show them: local paths plain, other file systems' as URIs. */
    private static List<String> display(List<org.apache.flink.core.fs.Path> inputs) {
        List<String> out = new ArrayList<>();
        inputs.forEach(p -> out.add(dev.changeflow.sources.files.FileGlob.key(p)));
        return out;
    }

    static ChangeRecordFormat format(String name) {
        return name.equalsIgnoreCase("json") || fileFormat(name) != ChangeFiles.Format.LINES
                ? ChangeRecordFormat.JSON
                : ChangeRecordFormat.DEBEZIUM_JSON;
    }
}
