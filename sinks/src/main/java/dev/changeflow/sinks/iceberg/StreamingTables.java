package dev.changeflow.sinks.iceberg;

import dev.changeflow.operators.AutoCdcException;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.utils.TypeConversions;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdatePartitionSpec;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Creation and validation of the Iceberg tables that AUTO CDC flows write (semantics.md A1, A3, A4,
 * K8).
 *
 * <p>A new table gets: the schema of the flow's target type (Flink types mapped by Iceberg's {@link
 * FlinkSchemaUtil}: {@code TIMESTAMP(p)} → {@code timestamp}, {@code TIMESTAMP_LTZ(p)} → {@code
 * timestamptz}, {@code CHAR/VARCHAR} → {@code string}, ...), the identifier fields (KEYS, plus
 * {@code __START_AT} for SCD2 — they must be NOT NULL), the partition spec of {@link
 * StreamingTableOptions#partitionBy()}, and these properties:
 *
 * <ul>
 *   <li>{@code format-version} = 2 or 3;
 *   <li>{@code write.upsert.enabled=false}: changeflow emits {@code +I} for new keys, so inserts
 *       write no equality delete;
 *   <li>{@value #EQ_DELETES_CARRY_ROWS}{@code =true}: equality-delete files written by changeflow
 *       carry the complete previous row (the change feed takes pre-images from them);
 *   <li>{@code write.parquet.bloom-filter-enabled.column.<id>=true} per identifier column (option);
 *   <li>{@value #MAX_CONTINUOUS_EMPTY_COMMITS}{@code =2147483647}: an idle sink commits no empty
 *       snapshots, so every version holds changes (one exception, Iceberg's: a bounded job whose
 *       end of input reaches the committer before the last checkpoint's completion may add one
 *       empty snapshot, docs/semantics.md K4);
 *   <li>{@code write.metadata.delete-after-commit.enabled=true}: each commit deletes the metadata
 *       files older than the last {@code write.metadata.previous-versions-max} (Iceberg's default
 *       100). Without it every commit leaves its {@code metadata.json}, and each of those lists
 *       every retained snapshot (about 1.2 KB each): 2,000 commits of the pgbench stream left 2,246
 *       files of up to 2.6 MB, 3.0 GB, beside 625 MB of data ({@code MaintenanceBenchmark});
 *       snapshots, time travel and the change feed do not use the old files;
 *   <li>{@code write.target-file-size-bytes} when set, then the extra properties of the options
 *       (which may override any of the above).
 * </ul>
 *
 * Iceberg's post-commit maintenance (compaction, snapshot expiry, orphan clean-up in the sink) is
 * not enabled; changeflow runs its own maintenance, aware of change-feed consumers (F7).
 */
@PublicEvolving
public final class StreamingTables {
    private static final Logger LOG = LoggerFactory.getLogger(StreamingTables.class);

    /** Table property marking equality-delete files that carry complete rows. */
    public static final String EQ_DELETES_CARRY_ROWS = "changeflow.eq-deletes-carry-rows";

    /**
     * Snapshot summary property set by {@link StreamingTableSink#write} and {@link
     * StreamingTableSink#replaceUsing} on every commit: the sink's uid suffix. The change feed
     * trusts the rows of equality-delete files only in snapshots whose whole retained ancestry
     * carries the same value ({@code replace} snapshots aside), semantics.md F2.
     */
    public static final String CHANGELOG_WRITER = "changeflow.changelog-writer";

    /** Iceberg Flink committer's table property: every n-th empty checkpoint commits a snapshot. */
    public static final String MAX_CONTINUOUS_EMPTY_COMMITS = "flink.max-continuous-empty-commits";

    /** Prefix of the per-column expected number of distinct values of a Parquet bloom filter. */
    public static final String BLOOM_FILTER_NDV_PREFIX =
            TableProperties.PARQUET_BLOOM_FILTER_COLUMN_NDV_PREFIX;

    /** Default expected distinct values per file and identifier column (sizes the bloom filter). */
    public static final long DEFAULT_BLOOM_FILTER_NDV = 100_000L;

    /** Prefix of the per-column Parquet bloom filter property. */
    public static final String BLOOM_FILTER_PREFIX =
            TableProperties.PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX;

    private StreamingTables() {}

    /**
     * Returns the table, creating its namespace and the table itself when missing; an existing
     * table is validated with {@link #validateSchema} and its partitioning must be the definition's
     * ({@link #checkPartitioning}: an empty table takes the definition's); of its properties only
     * {@code write.metadata.delete-after-commit.enabled} is set, to {@code true}, when the table
     * does not name it (a table of an earlier release; see the class comment).
     *
     * @param targetType the flow's target row type (AutoCdcSpec.targetType()), in column order
     * @param identifierFields KEYS (SCD1) or KEYS + {@code __START_AT} (SCD2); empty for
     *     append-only tables
     * @throws AutoCdcException {@code TARGET_SCHEMA_MISMATCH} when the existing table does not
     *     match (A1), or holds rows and is partitioned otherwise than the definition says
     * @throws IllegalArgumentException when an identifier field is missing from or nullable in the
     *     target type, or a partition field names an unknown column
     */
    public static Table ensureTable(
            Catalog catalog,
            TableIdentifier identifier,
            RowType targetType,
            List<String> identifierFields,
            StreamingTableOptions options) {
        Objects.requireNonNull(catalog, "catalog");
        Objects.requireNonNull(identifier, "identifier");
        Objects.requireNonNull(options, "options");
        Schema schema = icebergSchema(targetType, identifierFields, identifier);
        if (catalog.tableExists(identifier)) {
            Table existing = catalog.loadTable(identifier);
            validateSchema(existing, identifier, schema);
            checkPartitioning(existing, identifier, options.partitionBy());
            deleteOldMetadataAfterCommit(existing, identifier);
            return existing;
        }
        checkFormatVersion(schema, options.formatVersion(), identifier);
        ensureNamespace(catalog, identifier.namespace());
        PartitionSpec spec =
                PartitionTransforms.toSpec(schema, options.partitionBy(), identifier.toString());
        Map<String, String> props = tableProperties(schema, options);
        try {
            Table created =
                    catalog.buildTable(identifier, schema)
                            .withPartitionSpec(spec)
                            .withProperties(props)
                            .create();
            LOG.info(
                    "Created Iceberg table {} (format v{}, spec {}, identifier fields {})",
                    identifier,
                    options.formatVersion(),
                    spec,
                    identifierFields);
            return created;
        } catch (AlreadyExistsException raced) {
            Table existing = catalog.loadTable(identifier);
            validateSchema(existing, identifier, schema);
            checkPartitioning(existing, identifier, options.partitionBy());
            return existing;
        }
    }

    /**
     * Nanosecond timestamps ({@code TIMESTAMP(7..9)}, e.g. from Debezium's {@code NanoTimestamp};
     * Iceberg {@code timestamp_ns}) exist from Iceberg format version 3 on (semantics.md A5).
     *
     * @throws IllegalArgumentException naming the column and {@code format-version: 3} when a
     *     top-level column is {@code timestamp_ns} and {@code formatVersion} is below 3
     */
    static void checkFormatVersion(Schema schema, int formatVersion, TableIdentifier identifier) {
        if (formatVersion >= 3) {
            return;
        }
        for (Types.NestedField f : schema.columns()) {
            if (f.type().typeId() == Type.TypeID.TIMESTAMP_NANO) {
                throw new IllegalArgumentException(
                        "table "
                                + identifier
                                + ": column '"
                                + f.name()
                                + "' holds nanoseconds (TIMESTAMP(9), e.g. Debezium"
                                + " NanoTimestamp), which Iceberg stores as timestamp_ns from"
                                + " format version 3 on; set 'format-version: 3' for the flow, or"
                                + " declare the column TIMESTAMP(6)");
            }
        }
    }

    /**
     * The Iceberg schema of a target type: columns in order, Flink nullability as Iceberg
     * optional/required, a field's description (a declared {@code COMMENT}) as the column's doc,
     * the given identifier fields.
     *
     * @throws IllegalArgumentException when an identifier field is missing or nullable
     */
    public static Schema icebergSchema(RowType targetType, List<String> identifierFields) {
        return icebergSchema(targetType, identifierFields, null);
    }

    private static Schema icebergSchema(
            RowType targetType, List<String> identifierFields, TableIdentifier table) {
        Objects.requireNonNull(targetType, "targetType");
        Objects.requireNonNull(identifierFields, "identifierFields");
        Schema plain = FlinkSchemaUtil.convert(withComments(targetType));
        Set<Integer> ids = new HashSet<>();
        for (String name : identifierFields) {
            Types.NestedField field = plain.findField(name);
            String where = table == null ? "" : " of table " + table;
            if (field == null || plain.asStruct().field(name) == null) {
                throw new IllegalArgumentException(
                        "identifier field '"
                                + name
                                + "'"
                                + where
                                + " is not a top-level column of "
                                + targetType.asSummaryString());
            }
            if (field.isOptional()) {
                throw new IllegalArgumentException(
                        "identifier field '"
                                + name
                                + "'"
                                + where
                                + " must be NOT NULL, but the target "
                                + "type declares it nullable: "
                                + targetType.asSummaryString());
            }
            for (Types.NestedField leaf : leaves(field)) {
                if (leaf.isOptional() || !leaf.type().isPrimitiveType()) {
                    throw new IllegalArgumentException(
                            "identifier field '"
                                    + name
                                    + "'"
                                    + where
                                    + " is a STRUCT whose fields must all be NOT NULL and of"
                                    + " primitive types (they become the identifier fields), but '"
                                    + leaf.name()
                                    + "' is "
                                    + (leaf.isOptional() ? "nullable" : leaf.type().toString())
                                    + ": "
                                    + targetType.asSummaryString());
                }
                ids.add(leaf.fieldId());
            }
        }
        return new Schema(plain.columns(), ids);
    }

    /**
     * {@code FlinkSchemaUtil.toResolvedSchema(type)} with each top-level field's description as its
     * column's comment, which {@code FlinkSchemaUtil.convert} writes as the Iceberg field's doc.
     */
    private static ResolvedSchema withComments(RowType type) {
        List<Column> columns = new ArrayList<>();
        for (RowType.RowField f : type.getFields()) {
            Column c =
                    Column.physical(
                            f.getName(), TypeConversions.fromLogicalToDataType(f.getType()));
            columns.add(f.getDescription().map(c::withComment).orElse(c));
        }
        return ResolvedSchema.of(columns);
    }

    /**
     * The Iceberg identifier fields that a list of top-level identifier columns stands for, as full
     * names: a primitive column itself; a STRUCT column (SCD type 2 {@code __START_AT} of a
     * multi-column SEQUENCE BY, semantics.md A4) every primitive field nested in it ({@code
     * __START_AT.file}, {@code __START_AT.pos}), since Iceberg identifier fields must be primitive.
     *
     * @throws IllegalArgumentException when a name is not a top-level column of {@code schema}
     */
    public static List<String> identifierFieldNames(Schema schema, List<String> topLevelFields) {
        List<String> out = new ArrayList<>();
        for (String name : topLevelFields) {
            Types.NestedField field = schema.asStruct().field(name);
            if (field == null) {
                throw new IllegalArgumentException(
                        "identifier field '" + name + "' is not a top-level column of " + schema);
            }
            for (Types.NestedField leaf : leaves(field)) {
                out.add(schema.findColumnName(leaf.fieldId()));
            }
        }
        return out;
    }

    /** {@code field} itself when it is not a struct, else the leaves nested in it, in order. */
    private static List<Types.NestedField> leaves(Types.NestedField field) {
        if (!field.type().isStructType()) {
            return List.of(field);
        }
        List<Types.NestedField> out = new ArrayList<>();
        for (Types.NestedField child : field.type().asStructType().fields()) {
            if (child.type().isStructType()) {
                if (child.isOptional()) {
                    out.add(child); // refused by the caller: a nullable struct
                } else {
                    out.addAll(leaves(child));
                }
            } else {
                out.add(child);
            }
        }
        return out;
    }

    /**
     * Checks that an existing table matches a flow's target type and identifier fields (A1 last
     * rule): same column names in the same order, the same Iceberg types (so for SCD2 {@code
     * __START_AT}/{@code __END_AT} have exactly the sequence type), no column the table requires
     * but the flow may leave null, and the same identifier fields.
     *
     * @throws AutoCdcException {@code TARGET_SCHEMA_MISMATCH} naming the table, the column, both
     *     types and the fix
     */
    public static void validateSchema(
            Table table,
            TableIdentifier identifier,
            RowType targetType,
            List<String> identifierFields) {
        validateSchema(table, identifier, icebergSchema(targetType, identifierFields, identifier));
    }

    private static void validateSchema(Table table, TableIdentifier identifier, Schema expected) {
        Schema actual = table.schema();
        for (Types.NestedField want : expected.columns()) {
            Types.NestedField have = actual.asStruct().field(want.name());
            if (have == null) {
                throw mismatch(
                        identifier,
                        "column '"
                                + want.name()
                                + "' ("
                                + describe(want.type())
                                + " in the definition) does not exist in the table");
            }
            if (!sameType(have.type(), want.type())) {
                throw mismatch(identifier, typeDiffers(have, want));
            }
            if (have.isRequired() && want.isOptional()) {
                throw mismatch(
                        identifier,
                        "column '"
                                + want.name()
                                + "' is NOT NULL in the table but "
                                + "nullable in the definition ("
                                + describe(want.type())
                                + ")");
            }
        }
        for (Types.NestedField have : actual.columns()) {
            if (expected.asStruct().field(have.name()) == null) {
                throw mismatch(
                        identifier,
                        "column '"
                                + have.name()
                                + "' ("
                                + describe(have.type())
                                + " in the table) is not in the definition");
            }
        }
        List<String> haveOrder = names(actual.columns());
        List<String> wantOrder = names(expected.columns());
        if (!haveOrder.equals(wantOrder)) {
            throw mismatch(
                    identifier,
                    "the column order differs: table ("
                            + String.join(", ", haveOrder)
                            + "), definition ("
                            + String.join(", ", wantOrder)
                            + ")");
        }
        Set<String> haveIds = new TreeSet<>(actual.identifierFieldNames());
        Set<String> wantIds = new TreeSet<>(expected.identifierFieldNames());
        if (!haveIds.equals(wantIds)) {
            throw mismatch(
                    identifier,
                    "the identifier fields differ: table "
                            + haveIds
                            + ", definition "
                            + wantIds
                            + " (KEYS, plus __START_AT for SCD type 2)");
        }
    }

    /**
     * What a full refresh ({@code REFRESH STREAMING TABLE t FULL}, {@code --full-refresh t},
     * docs/semantics.md S1) must change in an existing table's schema so that it matches the flow's
     * definition: one line per change (identifier fields, a column made NOT NULL or nullable, a
     * type widened as Iceberg allows, a column added, dropped or moved), empty when the schema
     * matches. Checked before the table is emptied (and by {@code --dry-run}).
     *
     * @param targetType the flow's target row type, in column order
     * @param identifierFields KEYS (SCD1) or KEYS + {@code __START_AT} (SCD2); empty for
     *     append-only tables
     * @throws AutoCdcException {@code TARGET_SCHEMA_MISMATCH} naming the table, the change a full
     *     refresh cannot apply in place (a type Iceberg cannot widen to the new one, a changed
     *     nested type, a dropped partition source column) and the fix; nothing is written
     */
    public static List<String> fullRefreshChanges(
            Table table,
            TableIdentifier identifier,
            RowType targetType,
            List<String> identifierFields,
            List<String> partitionBy) {
        Schema expected = icebergSchema(targetType, identifierFields, identifier);
        List<String> changes = schemaReset(table, identifier, expected, null);
        partitioningChange(table, expected, partitionBy, identifier).ifPresent(changes::add);
        return changes;
    }

    /**
     * Empties the table for a full refresh (S1) in one Iceberg commit: the schema changes of {@link
     * #fullRefreshChanges}, the definition's partitioning (the spec's fields replaced; the rows
     * written from then on use it) and a delete of every row, in one transaction (earlier snapshots
     * and the change feed are kept: the table is not dropped). Returns the changes applied.
     *
     * @throws AutoCdcException as {@link #fullRefreshChanges}, before anything is written
     */
    public static List<String> emptyForFullRefresh(
            Table table,
            TableIdentifier identifier,
            RowType targetType,
            List<String> identifierFields,
            List<String> partitionBy) {
        Schema expected = icebergSchema(targetType, identifierFields, identifier);
        List<String> changes = schemaReset(table, identifier, expected, null);
        Optional<String> partitioning =
                partitioningChange(table, expected, partitionBy, identifier);
        Transaction txn = table.newTransaction();
        if (!changes.isEmpty()) {
            UpdateSchema update = txn.updateSchema().allowIncompatibleChanges();
            schemaReset(table, identifier, expected, update);
            update.commit();
        }
        if (partitioning.isPresent()) {
            // after the schema update: a new partition column exists in the transaction's schema
            UpdatePartitionSpec spec = txn.updateSpec();
            replacePartitioning(
                    spec,
                    table.spec(),
                    table.schema(),
                    PartitionTransforms.toSpec(expected, partitionBy, identifier.toString()),
                    expected);
            spec.commit();
            changes.add(partitioning.get());
        }
        txn.newDelete()
                .deleteFromRowFilter(org.apache.iceberg.expressions.Expressions.alwaysTrue())
                .commit();
        txn.commitTransaction();
        return changes;
    }

    /**
     * Checks that an existing table is partitioned as its definition says ({@code partitionBy},
     * Iceberg transforms as in {@link StreamingTableOptions#partitionBy()}; the fields compared by
     * transform and source column, in order). A table without a snapshot takes the definition's
     * partitioning (one metadata commit). A table with snapshots keeps its partitioning: an
     * equality delete applies only to data files of its own partition spec (Iceberg spec, "Scan
     * Planning"), so rows written under an old spec would survive the deletes and updates written
     * under a new one; a full refresh (docs/semantics.md S1) empties the table and changes its
     * partitioning in the same commit.
     *
     * @throws AutoCdcException {@code TARGET_SCHEMA_MISMATCH} naming both partitionings and the fix
     *     (a full refresh, or the definition changed back) when a table with snapshots is
     *     partitioned otherwise
     */
    public static void checkPartitioning(
            Table table, TableIdentifier identifier, List<String> partitionBy) {
        checkPartitioning(table, identifier, partitionBy, true);
    }

    /**
     * As {@link #checkPartitioning(Table, TableIdentifier, List)}; with {@code takeWhenEmpty} false
     * a table without a snapshot is left as it is (a check that writes nothing, e.g. for a dry
     * run).
     */
    public static void checkPartitioning(
            Table table,
            TableIdentifier identifier,
            List<String> partitionBy,
            boolean takeWhenEmpty) {
        Optional<String> change =
                partitioningChange(table, table.schema(), partitionBy, identifier);
        if (change.isEmpty()) {
            return;
        }
        if (table.currentSnapshot() == null) {
            if (!takeWhenEmpty) {
                return;
            }
            UpdatePartitionSpec spec = table.updateSpec();
            replacePartitioning(
                    spec,
                    table.spec(),
                    table.schema(),
                    PartitionTransforms.toSpec(table.schema(), partitionBy, identifier.toString()),
                    table.schema());
            spec.commit();
            LOG.info("Table {} had no snapshot: {}", identifier, change.get());
            return;
        }
        throw new AutoCdcException(
                AutoCdcException.Code.TARGET_SCHEMA_MISMATCH,
                "table "
                        + identifier
                        + " is partitioned by "
                        + partitioning(table.spec(), table.schema())
                        + " but its definition says "
                        + partitioning(
                                PartitionTransforms.toSpec(
                                        table.schema(), partitionBy, identifier.toString()),
                                table.schema())
                        + "; a table that holds rows keeps its partitioning (an equality delete"
                        + " applies only to data files of its own partition spec). Fix: rebuild"
                        + " the table under the new partitioning with a full refresh (REFRESH"
                        + " STREAMING TABLE "
                        + identifier.name()
                        + " FULL in a pipeline file, or run FILE.sql --full-refresh "
                        + identifier.name()
                        + "; history and change feed kept; a flows file: ingest --from-scratch,"
                        + " which drops them), or change the definition back");
    }

    /**
     * Checks that {@code partitionBy} (Iceberg transforms, {@link
     * StreamingTableOptions#partitionBy()}) makes a valid partition spec of the table a flow
     * creates: every column exists, each transform fits its column's type, no field twice.
     *
     * @param targetType the flow's target row type, in column order
     * @param identifierFields KEYS (SCD1), KEYS + {@code __START_AT} (SCD2), or empty
     * @throws IllegalArgumentException naming the entry, the table and what is wrong
     */
    public static void checkPartitionBy(
            RowType targetType,
            List<String> identifierFields,
            List<String> partitionBy,
            TableIdentifier identifier) {
        if (partitionBy.isEmpty()) {
            return;
        }
        Schema schema = icebergSchema(targetType, identifierFields, identifier);
        try {
            PartitionTransforms.toSpec(schema, partitionBy, identifier.toString());
        } catch (RuntimeException e) {
            if (e instanceof IllegalArgumentException
                    && String.valueOf(e.getMessage()).startsWith("partitionBy '")) {
                throw e; // names its entry already
            }
            // the spec as a whole (Iceberg's builder): a field twice, ...
            throw new IllegalArgumentException(
                    "partitionBy "
                            + partitionBy
                            + " of table "
                            + identifier
                            + ": "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * {@code "partitioned by [a] -> [b]"} when the table's current spec differs from {@code
     * partitionBy} over {@code schema}, else empty.
     */
    private static Optional<String> partitioningChange(
            Table table, Schema schema, List<String> partitionBy, TableIdentifier identifier) {
        List<String> have = partitioning(table.spec(), table.schema());
        List<String> want =
                partitioning(
                        PartitionTransforms.toSpec(schema, partitionBy, identifier.toString()),
                        schema);
        return have.equals(want)
                ? Optional.empty()
                : Optional.of("partitioned by " + have + " -> " + want);
    }

    /**
     * A spec's fields as {@code transform(column)} ({@code column} for identity), in order; void
     * fields (removed in a format v1 table) left out.
     */
    static List<String> partitioning(PartitionSpec spec, Schema schema) {
        List<String> out = new ArrayList<>();
        for (PartitionField f : spec.fields()) {
            if (!f.transform().isVoid()) {
                out.add(partitionField(f, schema));
            }
        }
        return out;
    }

    /** {@code transform(column)}, or {@code column} for identity. */
    private static String partitionField(PartitionField f, Schema schema) {
        String column = schema.findColumnName(f.sourceId());
        return f.transform().isIdentity() ? column : f.transform() + "(" + column + ")";
    }

    /** Adds to {@code update} what turns spec {@code have} into spec {@code want}. */
    private static void replacePartitioning(
            UpdatePartitionSpec update,
            PartitionSpec have,
            Schema haveSchema,
            PartitionSpec want,
            Schema wantSchema) {
        List<String> wanted = partitioning(want, wantSchema);
        List<String> existing = partitioning(have, haveSchema);
        for (PartitionField f : have.fields()) {
            if (!f.transform().isVoid() && !wanted.contains(partitionField(f, haveSchema))) {
                update.removeField(f.name());
            }
        }
        for (PartitionField f : want.fields()) {
            String column = wantSchema.findColumnName(f.sourceId());
            if (existing.contains(partitionField(f, wantSchema))) {
                continue;
            }
            if (f.transform().isIdentity()) {
                update.addField(column);
            } else {
                update.addField(
                        org.apache.iceberg.expressions.Expressions.transform(
                                column, f.transform()));
            }
        }
    }

    /**
     * The changes from the table's schema to {@code expected}, added to {@code update} when it is
     * not null.
     */
    private static List<String> schemaReset(
            Table table, TableIdentifier identifier, Schema expected, UpdateSchema update) {
        Schema actual = table.schema();
        List<String> changes = new ArrayList<>();
        Set<String> haveIds = new TreeSet<>(actual.identifierFieldNames());
        Set<String> wantIds = new TreeSet<>(expected.identifierFieldNames());
        if (!haveIds.equals(wantIds)) {
            changes.add("identifier fields " + haveIds + " -> " + wantIds);
            if (update != null) {
                update.setIdentifierFields(wantIds);
            }
        }
        Set<Integer> partitionSources = new HashSet<>();
        table.specs()
                .values()
                .forEach(spec -> spec.fields().forEach(pf -> partitionSources.add(pf.sourceId())));
        for (Types.NestedField have : actual.columns()) {
            if (expected.asStruct().field(have.name()) == null) {
                if (partitionSources.contains(have.fieldId())) {
                    throw cannotReset(
                            identifier,
                            "column '"
                                    + have.name()
                                    + "' is not in the definition but the table is partitioned"
                                    + " by it");
                }
                changes.add("drop column '" + have.name() + "'");
                if (update != null) {
                    update.deleteColumn(have.name());
                }
            }
        }
        for (Types.NestedField want : expected.columns()) {
            Types.NestedField have = actual.asStruct().field(want.name());
            if (have == null) {
                changes.add(
                        "add column '"
                                + want.name()
                                + "' "
                                + describe(want.type())
                                + (want.isRequired() ? " NOT NULL" : ""));
                if (update != null) {
                    if (want.isRequired()) {
                        update.addRequiredColumn(want.name(), want.type(), want.doc());
                    } else {
                        update.addColumn(want.name(), want.type(), want.doc());
                    }
                }
                continue;
            }
            if (!sameType(have.type(), want.type())) {
                if (have.type().isPrimitiveType()
                        && want.type().isPrimitiveType()
                        && org.apache.iceberg.types.TypeUtil.isPromotionAllowed(
                                have.type(), want.type().asPrimitiveType())) {
                    changes.add(
                            "column '"
                                    + want.name()
                                    + "' "
                                    + describe(have.type())
                                    + " -> "
                                    + describe(want.type()));
                    if (update != null) {
                        update.updateColumn(want.name(), want.type().asPrimitiveType());
                    }
                } else {
                    throw cannotReset(
                            identifier,
                            typeDiffers(have, want) + ", a change Iceberg cannot make in place");
                }
            }
            if (have.isRequired() && want.isOptional()) {
                changes.add("column '" + want.name() + "' NOT NULL -> nullable");
                if (update != null) {
                    update.makeColumnOptional(want.name());
                }
            } else if (have.isOptional() && want.isRequired()) {
                changes.add("column '" + want.name() + "' nullable -> NOT NULL");
                if (update != null) {
                    update.requireColumn(want.name());
                }
            }
        }
        List<String> kept = new ArrayList<>(names(actual.columns()));
        kept.retainAll(names(expected.columns()));
        List<String> wantKept = new ArrayList<>(names(expected.columns()));
        wantKept.retainAll(names(actual.columns()));
        if (!kept.equals(wantKept)) {
            changes.add("column order (" + String.join(", ", names(expected.columns())) + ")");
        }
        if (update != null && !names(actual.columns()).equals(names(expected.columns()))) {
            List<String> order = names(expected.columns());
            update.moveFirst(order.get(0));
            for (int i = 1; i < order.size(); i++) {
                update.moveAfter(order.get(i), order.get(i - 1));
            }
        }
        return changes;
    }

    private static AutoCdcException cannotReset(TableIdentifier table, String what) {
        return new AutoCdcException(
                AutoCdcException.Code.TARGET_SCHEMA_MISMATCH,
                "a full refresh cannot rebuild table "
                        + table
                        + " under the flow's definition: "
                        + what
                        + ". Nothing was emptied or written. Fix: change the definition back, or"
                        + " drop the table and rebuild it (DROP TABLE "
                        + table
                        + "; in the file before its definition, or run with --from-scratch: its"
                        + " history and change feed are lost)");
    }

    /**
     * True when the table has no snapshot or its current snapshot holds no live row (for the K8
     * check {@code STATE_MISSING_FOR_EXISTING_TABLE}). Reads at most one row.
     */
    public static boolean isEmpty(Table table) {
        Snapshot current = table.currentSnapshot();
        if (current == null) {
            return true;
        }
        Map<String, String> summary = current.summary();
        if (summary != null && "0".equals(summary.get(SnapshotSummary.TOTAL_RECORDS_PROP))) {
            return true;
        }
        try (CloseableIterable<Record> rows =
                IcebergGenerics.read(table).useSnapshot(current.snapshotId()).build()) {
            return !rows.iterator().hasNext();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read table " + table.name(), e);
        }
    }

    /**
     * The start rule K8 (docs/semantics.md), in the one place every runtime checks it: an AUTO CDC
     * flow that starts without its state (no checkpoint or savepoint) must not write to a table
     * that already holds rows, because applying changes without the stored sequences and tombstones
     * could resurrect deleted rows or re-apply old ones.
     *
     * @param table the flow's target table
     * @param name how the message names it (e.g. {@code public.accounts})
     * @param withoutState who starts without state, e.g. {@code "no checkpoint or savepoint of 'j'
     *     exists under /ck"} or {@code "job 1a2b started without a checkpoint or savepoint"}
     * @param remedy what the user can do in that runtime
     * @throws AutoCdcException {@code STATE_MISSING_FOR_EXISTING_TABLE} when the table holds a row:
     *     {@code "table T already holds rows but WITHOUT_STATE: applying changes without the AUTO
     *     CDC state (sequences, tombstones) could resurrect deleted rows or re-apply old ones.
     *     REMEDY"}
     */
    public static void checkStartWithoutState(
            Table table, String name, String withoutState, String remedy) {
        if (!isEmpty(table)) {
            throw new AutoCdcException(
                    AutoCdcException.Code.STATE_MISSING_FOR_EXISTING_TABLE,
                    "table "
                            + name
                            + " already holds rows but "
                            + withoutState
                            + ": applying changes without the AUTO CDC state (sequences,"
                            + " tombstones) could resurrect deleted rows or re-apply old ones. "
                            + remedy);
        }
    }

    /**
     * Drops the table with {@code purge} (data and metadata files deleted) when it exists; for
     * {@code --from-scratch}. Returns whether a table was dropped.
     */
    public static boolean dropIfExists(Catalog catalog, TableIdentifier identifier) {
        try {
            boolean dropped = catalog.dropTable(identifier, true);
            if (dropped) {
                LOG.info("Dropped Iceberg table {} (purge)", identifier);
            }
            return dropped;
        } catch (NoSuchTableException e) {
            return false;
        }
    }

    /** Creates the namespace (and, for catalogs that need it, its parents) when missing. */
    public static void ensureNamespace(Catalog catalog, Namespace namespace) {
        if (namespace.isEmpty() || !(catalog instanceof SupportsNamespaces)) {
            return;
        }
        SupportsNamespaces namespaces = (SupportsNamespaces) catalog;
        String[] levels = namespace.levels();
        for (int i = 1; i <= levels.length; i++) {
            Namespace ns = Namespace.of(Arrays.copyOf(levels, i));
            if (!namespaces.namespaceExists(ns)) {
                try {
                    namespaces.createNamespace(ns);
                } catch (AlreadyExistsException raced) {
                    // created concurrently
                }
            }
        }
    }

    /**
     * Sets {@code write.metadata.delete-after-commit.enabled=true} on a table that does not name
     * the property (one property commit, no snapshot): a table created before changeflow set it at
     * creation keeps every commit's {@code metadata.json} otherwise. A table that names it either
     * way keeps its choice.
     */
    private static void deleteOldMetadataAfterCommit(Table table, TableIdentifier identifier) {
        if (table.properties().containsKey(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED)) {
            return;
        }
        table.updateProperties()
                .set(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
                .commit();
        LOG.info(
                "Set {}=true on table {}: each commit now deletes the metadata files beyond the"
                        + " last {} (its {})",
                TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED,
                identifier,
                table.properties()
                        .getOrDefault(
                                TableProperties.METADATA_PREVIOUS_VERSIONS_MAX,
                                Integer.toString(
                                        TableProperties.METADATA_PREVIOUS_VERSIONS_MAX_DEFAULT)),
                TableProperties.METADATA_PREVIOUS_VERSIONS_MAX);
    }

    static Map<String, String> tableProperties(Schema schema, StreamingTableOptions options) {
        Map<String, String> props = new LinkedHashMap<>();
        props.put(TableProperties.FORMAT_VERSION, Integer.toString(options.formatVersion()));
        props.put(TableProperties.UPSERT_ENABLED, "false");
        props.put(EQ_DELETES_CARRY_ROWS, "true");
        props.put(MAX_CONTINUOUS_EMPTY_COMMITS, Integer.toString(Integer.MAX_VALUE));
        props.put(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true");
        if (options.bloomFilters()) {
            for (String id : new TreeSet<>(schema.identifierFieldNames())) {
                props.put(BLOOM_FILTER_PREFIX + id, "true");
                // without an expected number of distinct values Parquet allocates the maximum
                // (1 MiB) per column and file, even for a 3-row file of a 2-second checkpoint;
                // 100,000 values at Iceberg's default 1% fpp take 128 KiB
                props.put(BLOOM_FILTER_NDV_PREFIX + id, Long.toString(DEFAULT_BLOOM_FILTER_NDV));
            }
        }
        options.targetFileSizeBytes()
                .ifPresent(
                        n ->
                                props.put(
                                        TableProperties.WRITE_TARGET_FILE_SIZE_BYTES,
                                        Long.toString(n)));
        props.putAll(options.properties());
        return props;
    }

    private static AutoCdcException mismatch(TableIdentifier table, String what) {
        return new AutoCdcException(
                AutoCdcException.Code.TARGET_SCHEMA_MISMATCH,
                "table "
                        + table
                        + " exists and does not match the flow's definition: "
                        + what
                        + ". Fix: run with --from-scratch to drop and recreate the table (its data is "
                        + "lost and reprocessed from the source), or change the definition to match the "
                        + "existing table; in a .sql pipeline, a full refresh of the table (run "
                        + "--full-refresh "
                        + table.name()
                        + ", or REFRESH STREAMING TABLE "
                        + table.name()
                        + " FULL) rebuilds it under the definition and keeps the table where Iceberg "
                        + "can evolve it (a type widened, a column added, dropped or moved).");
    }

    /** "column 'c' has type T1 in the table but T2 in the definition". */
    private static String typeDiffers(Types.NestedField have, Types.NestedField want) {
        return "column '"
                + want.name()
                + "' has type "
                + describe(have.type())
                + " in the table but "
                + describe(want.type())
                + " in the definition";
    }

    private static String describe(Type type) {
        String flink;
        try {
            flink = FlinkSchemaUtil.convert(type).asSummaryString();
        } catch (RuntimeException e) {
            flink = "?";
        }
        return flink
                + " (Iceberg "
                + (type.isPrimitiveType() ? type.toString() : type.toString())
                + ")";
    }

    private static List<String> names(List<Types.NestedField> fields) {
        return fields.stream().map(Types.NestedField::name).collect(Collectors.toList());
    }

    /** Type equality ignoring field ids of nested types. */
    public static boolean sameType(Type a, Type b) {
        if (a.isPrimitiveType() || b.isPrimitiveType()) {
            return a.equals(b);
        }
        if (a.typeId() != b.typeId()) {
            return false;
        }
        switch (a.typeId()) {
            case STRUCT:
                List<Types.NestedField> fa = a.asStructType().fields();
                List<Types.NestedField> fb = b.asStructType().fields();
                if (fa.size() != fb.size()) {
                    return false;
                }
                for (int i = 0; i < fa.size(); i++) {
                    if (!fa.get(i).name().equals(fb.get(i).name())
                            || fa.get(i).isOptional() != fb.get(i).isOptional()
                            || !sameType(fa.get(i).type(), fb.get(i).type())) {
                        return false;
                    }
                }
                return true;
            case LIST:
                return a.asListType().isElementOptional() == b.asListType().isElementOptional()
                        && sameType(a.asListType().elementType(), b.asListType().elementType());
            case MAP:
                return a.asMapType().isValueOptional() == b.asMapType().isValueOptional()
                        && sameType(a.asMapType().keyType(), b.asMapType().keyType())
                        && sameType(a.asMapType().valueType(), b.asMapType().valueType());
            default:
                return a.equals(b);
        }
    }

    /**
     * Schema evolution of {@code on-schema-change: add-columns} (docs/semantics.md A5): adds the
     * columns the table lacks, nullable, right after its last data column (before the metadata
     * columns COLUMNS lists and SCD type 2's {@code __START_AT}), which is where the wider flow's
     * target row has them (A1 checks the order), with Iceberg's {@link UpdateSchema}; rows written
     * before read null there. Retries up to 5 times on concurrent commits.
     *
     * @param columns the new columns (Flink types, converted with Iceberg's {@code
     *     FlinkSchemaUtil})
     * @param dataColumns the flow's data columns before the change
     * @return the added ones, described as {@code "name TYPE"}; empty when the table had them all
     * @throws CommitFailedException when the sixth attempt still conflicts
     */
    public static List<String> addColumns(
            Table table, List<RowType.RowField> columns, List<String> dataColumns) {
        for (int attempt = 0; ; attempt++) {
            table.refresh();
            Schema schema = table.schema();
            String before = null;
            for (Types.NestedField c : schema.columns()) {
                if (!dataColumns.contains(c.name())) {
                    before = c.name();
                    break;
                }
            }
            UpdateSchema update = table.updateSchema();
            List<String> added = new ArrayList<>();
            for (RowType.RowField c : columns) {
                if (schema.findField(c.getName()) != null) {
                    continue;
                }
                update.addColumn(c.getName(), FlinkSchemaUtil.convert(c.getType()));
                if (before != null) {
                    update.moveBefore(c.getName(), before);
                }
                added.add(c.getName() + " " + c.getType().asSummaryString());
            }
            if (added.isEmpty()) {
                return added;
            }
            try {
                update.commit();
                return added;
            } catch (CommitFailedException conflict) {
                if (attempt >= 5) {
                    throw conflict;
                }
            }
        }
    }

    /**
     * Table property prefix of a column's type before its first widening ({@link #widenColumns}).
     */
    public static final String PRE_WIDENING_TYPE_PREFIX = "changeflow.pre-widening-type.";

    /**
     * Widens columns of {@code table} to the given types with Iceberg's {@link
     * UpdateSchema#updateColumn} (semantics.md A7 item 4); Iceberg allows exactly the promotions
     * INT → BIGINT, FLOAT → DOUBLE and DECIMAL(p, s) → DECIMAL(p', s) with p' &gt; p. Rows written
     * before read their values in the wider type. Retries up to 5 times on concurrent commits.
     *
     * <p>In the same commit, the first widening of each column records the column's type before it
     * as table property {@value #PRE_WIDENING_TYPE_PREFIX}{@code <column>} (a serializable Flink
     * SQL type, e.g. {@code FLOAT}): the type that AUTO CDC state saved without a row-type record
     * holds the column in ({@code AutoCdcSpec.unrecordedStateTypes}).
     *
     * @param columns column name → its new, wider Iceberg type
     * @throws IllegalArgumentException from Iceberg when a change is not a promotion
     * @throws CommitFailedException when the sixth attempt still conflicts
     */
    public static void widenColumns(Table table, Map<String, Type.PrimitiveType> columns) {
        for (int attempt = 0; ; attempt++) {
            table.refresh();
            Transaction tx = table.newTransaction();
            UpdateSchema update = tx.updateSchema();
            Map<String, String> before = new LinkedHashMap<>();
            boolean any = false;
            for (Map.Entry<String, Type.PrimitiveType> c : columns.entrySet()) {
                Types.NestedField have = table.schema().findField(c.getKey());
                if (have != null && !have.type().equals(c.getValue())) {
                    update.updateColumn(c.getKey(), c.getValue());
                    String key = PRE_WIDENING_TYPE_PREFIX + c.getKey();
                    if (!table.properties().containsKey(key)) {
                        before.put(
                                key,
                                FlinkSchemaUtil.convert(have.type())
                                        .copy(true)
                                        .asSerializableString());
                    }
                    any = true;
                }
            }
            if (!any) {
                return;
            }
            try {
                update.commit();
                if (!before.isEmpty()) {
                    UpdateProperties props = tx.updateProperties();
                    before.forEach(props::set);
                    props.commit();
                }
                tx.commitTransaction();
                LOG.info("Widened columns of {}: {}", table.name(), columns);
                return;
            } catch (CommitFailedException conflict) {
                if (attempt >= 5) {
                    throw conflict;
                }
            }
        }
    }
}
