package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sources.changes.ChangeRecordFormat;
import dev.changeflow.sources.changes.DebeziumMetadata;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.changes.OnInvalidRecord;
import dev.changeflow.sources.changes.OnSchemaChange;
import dev.changeflow.sources.changes.SchemaSampler;

import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.FlinkSchemaUtil;

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
        if (config.flows.isEmpty()) {
            throw new IllegalArgumentException(
                    "no flows: give a flows file (--flows) or --table/--keys flags");
        }
        Set<String> toSample = new LinkedHashSet<>();
        Set<String> names = new HashSet<>();
        for (FlowConfig f : config.flows) {
            f.validate();
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
        if (!toSample.isEmpty() || config.namespace == null) {
            sample = SchemaSampler.sample(inputs, format(config.format), toSample);
            sampled = sample.types();
        }
        String namespace = config.namespace;
        if (namespace == null) {
            namespace =
                    sample != null && sample.namespace() != null
                            ? sample.namespace()
                            : DEFAULT_NAMESPACE;
        }
        List<IngestPlan.Flow> flows = new ArrayList<>();
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
                                    + inputs
                                    + " to infer its columns; declare them with 'schema: \"col TYPE, ...\"'");
                }
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
                            DebeziumMetadata.defaultSequence(connector)));
        }
        Set<TableIdentifier> targets = new HashSet<>();
        for (IngestPlan.Flow f : flows) {
            if (!targets.add(f.target)) {
                throw new IllegalArgumentException(
                        "two flows write table " + f.target + ": give each flow its own 'target'");
            }
        }
        return new IngestPlan(config, flows, Namespace.of(namespace.split("\\.")));
    }

    /** One flow of the plan: decoder routing, AUTO CDC definition, target and table options. */
    private static IngestPlan.Flow flow(
            IngestConfig config,
            FlowConfig f,
            ChangeRecordFormat format,
            RowType dataType,
            String namespace,
            List<String> added,
            List<String> defaultSequence) {
        boolean debezium = format == ChangeRecordFormat.DEBEZIUM_JSON;
        List<String> sequence = new ArrayList<>();
        for (String s : f.sequenceBy) {
            sequence.add(debezium ? DebeziumMetadata.resolveAlias(s) : s);
        }
        if (sequence.isEmpty() && !f.appendOnly) {
            if (!debezium) {
                throw new IllegalArgumentException(
                        "flow '" + f.flowName() + "': 'sequence-by' is required for format json");
            }
            sequence.addAll(defaultSequence); // A5: by the records' connector
        }
        DecoderFlow decoder =
                DecoderFlow.builder(f.flowName(), format, dataType)
                        .sourceNames(routing(config, f, format))
                        .keys(f.keys)
                        .sequenceBy(sequence)
                        .truncateEnabled(f.truncate || f.applyAsTruncateWhen != null)
                        .appendOnly(f.appendOnly)
                        .onSchemaChange(OnSchemaChange.fromConfigName(f.onSchemaChange))
                        .onInvalidRecord(OnInvalidRecord.fromConfigName(f.onInvalidRecord))
                        .maxRecordBytes(config.maxRecordBytes)
                        .unavailablePlaceholder(f.unavailablePlaceholder)
                        .build();
        AutoCdcSpec spec = null;
        if (!f.appendOnly) {
            spec =
                    AutoCdcSpec.builder(f.flowName(), decoder.sourceType())
                            .metadataColumns(decoder.metadataColumns())
                            .keys(f.keys)
                            .sequenceBy(sequence)
                            .scdType(f.scdType)
                            .columns(withAdded(resolve(f.columns, debezium), added))
                            .ignoreNullUpdates(f.ignoreNullUpdates)
                            .trackHistory(f.trackHistoryOn)
                            .deleteWhen(f.applyAsDeleteWhen)
                            .truncateWhen(f.applyAsTruncateWhen)
                            .truncateEnabled(f.truncate)
                            .tombstoneGcThreshold(f.tombstoneGcThreshold)
                            .applyBufferKeys(f.applyBufferKeys)
                            .build();
        }
        String ns = f.targetNamespace() != null ? f.targetNamespace() : namespace;
        TableIdentifier target = TableIdentifier.of(Namespace.of(ns.split("\\.")), f.targetName());
        // A5: nanosecond timestamps (Iceberg timestamp_ns) need format v3; chosen when not given
        RowType stored = spec != null ? spec.targetType() : decoder.dataType();
        int formatVersion = !f.formatVersionSet && hasNanoTimestamp(stored) ? 3 : f.formatVersion;
        StreamingTableOptions options =
                StreamingTableOptions.builder()
                        .formatVersion(formatVersion)
                        .partitionBy(f.partitionedBy)
                        .build();
        return new IngestPlan.Flow(f, decoder, spec, target, options);
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
     * The plan with, for every flow under {@code on-schema-change = add-columns} whose target table
     * exists, the columns that were added to that table after the flow's columns were resolved (by
     * an earlier run that met a {@link dev.changeflow.sources.changes.SchemaChangeException})
     * appended to the flow's data columns as nullable columns, typed from the Iceberg schema. Flows
     * reading the same source table get the union of their tables' added columns, so they keep
     * sharing one decoder; an explicit COLUMNS list includes them too (add-columns adds a new
     * source column to every table of the source). Returns {@code plan} itself when nothing was
     * added.
     *
     * <p>Call it before building the job, so a restart — local or on a cluster — reads the evolved
     * tables with the wider row type.
     */
    public static IngestPlan withAddedColumns(IngestPlan plan, Catalog catalog) {
        Map<String, LinkedHashMap<String, RowType.RowField>> bySource = new LinkedHashMap<>();
        for (IngestPlan.Flow f : plan.flows) {
            if (f.decoder.onSchemaChange() != OnSchemaChange.ADD_COLUMNS
                    || !catalog.tableExists(f.target)) {
                continue;
            }
            RowType table = FlinkSchemaUtil.convert(catalog.loadTable(f.target).schema());
            RowType source = f.decoder.sourceType();
            LinkedHashMap<String, RowType.RowField> extra =
                    bySource.computeIfAbsent(f.config.table, k -> new LinkedHashMap<>());
            for (RowType.RowField c : table.getFields()) {
                String n = c.getName();
                if (source.getFieldNames().contains(n)
                        || n.equals(AutoCdcSpec.START_AT)
                        || n.equals(AutoCdcSpec.END_AT)) {
                    continue;
                }
                extra.putIfAbsent(n, new RowType.RowField(n, c.getType().copy(true)));
            }
        }
        bySource.values().removeIf(Map::isEmpty);
        if (bySource.isEmpty()) {
            return plan;
        }
        List<IngestPlan.Flow> flows = new ArrayList<>();
        for (IngestPlan.Flow f : plan.flows) {
            LinkedHashMap<String, RowType.RowField> extra = bySource.get(f.config.table);
            if (extra == null || f.decoder.onSchemaChange() != OnSchemaChange.ADD_COLUMNS) {
                flows.add(f);
                continue;
            }
            List<RowType.RowField> fields = new ArrayList<>(f.decoder.dataType().getFields());
            fields.addAll(extra.values());
            flows.add(
                    flow(
                            plan.config,
                            f.config,
                            f.decoder.format(),
                            new RowType(fields),
                            plan.quarantineNamespace.toString(),
                            new ArrayList<>(extra.keySet()),
                            f.decoder.sequenceBy()));
        }
        return new IngestPlan(plan.config, flows, plan.quarantineNamespace);
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

    static ChangeRecordFormat format(String name) {
        return name.equalsIgnoreCase("json")
                ? ChangeRecordFormat.JSON
                : ChangeRecordFormat.DEBEZIUM_JSON;
    }
}
