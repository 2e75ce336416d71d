package dev.changeflow.jobs.flow;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.FlowOptions;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.config.IngestOptions;
import dev.changeflow.jobs.ingest.ClusterIngest;
import dev.changeflow.jobs.ingest.HandedOverTypeInfo;
import dev.changeflow.jobs.ingest.IngestJob;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.SnapshotJob;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.Expectation;
import dev.changeflow.operators.ScdType;
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.files.SourceLine;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One AUTO CDC flow in a Flink job of your own, in the shape of Iceberg's {@code
 * FlinkSink.forRowData(..)...append()}: change records in, a streaming table out — decode (A5),
 * APPLY AS DELETE / TRUNCATE WHEN (Flink SQL), keyBy(KEYS) and apply (A2–A4, SCD type 1 or 2), the
 * Iceberg sink (exactly once, committed on checkpoints), and the quarantine table {@code
 * <namespace>.changeflow_quarantine} for records that cannot be applied.
 *
 * <pre>{@code
 * AutoCdcFlow.forStream(records)                  // DataStream<String>: one change record each
 *     .keys("aid")
 *     .sequenceBy("source.lsn")
 *     .schema("aid INT, bid INT, abalance INT, filler STRING")
 *     .applyAsDeleteWhen("abalance IS NULL")
 *     .storedAs(ScdType.TYPE_2)
 *     .option("apply-buffer-keys", "10000")      // any flow option of the README
 *     .catalog(CatalogSettings.localHadoop(warehouse))
 *     .into("public.pgbench_accounts");
 * }</pre>
 *
 * <p>Every setting is a flow option ({@link FlowOptions}) given by the flow's definition and
 * resolved like a flows-file entry ({@link OptionsResolver}): the typed methods and {@link
 * Builder#option} are the same thing, the later call wins, and an unknown option or a bad value
 * fails in {@link Builder#into} with the option, the value and what is allowed. The flows-file
 * launcher builds its jobs through the same planner and topology ({@link IngestPlanner}, {@link
 * IngestJob}).
 *
 * <p>Records are Debezium JSON envelopes (default; with or without the schema wrapper) or plain
 * JSON objects ({@code format("json")}, where op and sequence are ordinary columns). Uids: {@code
 * decode}, {@code auto-cdc-<flow>}, the Iceberg sink's with suffix {@code <flow>}; use one builder
 * per job (the uids are the job's).
 */
@PublicEvolving
public final class AutoCdcFlow {
    private final TableIdentifier target;
    @Nullable private final AutoCdcSpec spec;

    private AutoCdcFlow(TableIdentifier target, @Nullable AutoCdcSpec spec) {
        this.target = target;
        this.spec = spec;
    }

    /**
     * @param records change records, one JSON text per element (UTF-8 when written to Kafka or
     *     files; here a Java string)
     */
    public static Builder forStream(DataStream<String> records) {
        return new Builder(records);
    }

    /**
     * AUTO CDC FROM SNAPSHOT (docs/semantics.md A6): a folder of snapshot files, one per version
     * ({@code snapshot_1.csv}, {@code snapshot_2.json}, ...: {@code <name>_<n>.csv|json|jsonl}, n
     * an integer), each compared with the previous one per key — a new key is an insert, changed
     * values an update, an absent key a delete — and applied as SCD type 1 or 2 with the version as
     * the sequence.
     *
     * <pre>{@code
     * AutoCdcFlow.fromSnapshots(env, "/exports/cities")
     *     .keys("id")
     *     .schema("id BIGINT, city STRING")
     *     .storedAs(ScdType.TYPE_2)                  // __START_AT / __END_AT: BIGINT versions
     *     .catalog(CatalogSettings.localHadoop(warehouse))
     *     .into("geo.cities");
     * }</pre>
     *
     * @param folder a local folder or a Flink file system URI ({@code s3://bucket/exports/cities})
     */
    public static SnapshotBuilder fromSnapshots(StreamExecutionEnvironment env, String folder) {
        return new SnapshotBuilder(env, FlowOptions.FROM_SNAPSHOT.key(), folder);
    }

    /**
     * AUTO CDC FROM SNAPSHOT (docs/semantics.md A6) over the versions of an Iceberg table of the
     * builder's catalog: each version (snapshot sequence number on {@code main}) is read in full
     * and compared with the previous one per key, as {@link #fromSnapshots} does with files. The
     * columns are the table's (or those {@link SnapshotBuilder#schema} names); SCD type 2's {@code
     * __START_AT} / {@code __END_AT} are the source table's sequence numbers.
     *
     * <pre>{@code
     * AutoCdcFlow.fromSnapshotTable(env, "raw.cities")  // every version of raw.cities
     *     .keys("id")
     *     .storedAs(ScdType.TYPE_2)
     *     .option("snapshot-versions", "latest")       // optional: only the current version
     *     .catalog(CatalogSettings.localHadoop(warehouse))
     *     .into("geo.cities");
     * }</pre>
     *
     * @param table {@code [namespace.]name} in the catalog; without a namespace, the target's
     */
    public static SnapshotBuilder fromSnapshotTable(StreamExecutionEnvironment env, String table) {
        return new SnapshotBuilder(env, FlowOptions.FROM_SNAPSHOT_TABLE.key(), table);
    }

    /** The target table. */
    public TableIdentifier target() {
        return target;
    }

    /** The AUTO CDC definition as resolved and validated (A1); null for an append-only flow. */
    @Nullable
    public AutoCdcSpec spec() {
        return spec;
    }

    /** Resolves a builder's definition like a flows-file entry and checks it. */
    private static FlowConfig resolve(Map<String, Object> definition, String target) {
        int dot = target.lastIndexOf('.');
        if (dot <= 0) {
            throw new IllegalArgumentException(
                    "AutoCdcFlow into '" + target + "': give the table as namespace.table");
        }
        if (definition.containsKey(FlowOptions.REPLACE_WHERE.key())
                || definition.containsKey(FlowOptions.QUERY.key())) {
            // S4: a REPLACE WHERE flow reads tables, not a stream of records
            throw new IllegalArgumentException(
                    "AutoCdcFlow into '"
                            + target
                            + "': a REPLACE WHERE flow (options 'replace-where', 'query') is built"
                            + " with ReplaceWhereFlow.query(...).where(...)");
        }
        Map<String, Object> values = new LinkedHashMap<>(definition);
        values.putIfAbsent(FlowOptions.TABLE.key(), target.substring(dot + 1));
        values.put(FlowOptions.TARGET.key(), target);
        FlowConfig flow =
                new FlowConfig()
                        .apply(
                                OptionsResolver.resolve(
                                        FlowOptions.SET,
                                        List.of(
                                                OptionLayer.of(
                                                        OptionSource.DEFINITION,
                                                        "AutoCdcFlow into " + target,
                                                        values))));
        flow.validate();
        return flow;
    }

    /** Opens the catalog, runs {@code action} on it, closes it. */
    private static void withCatalog(
            CatalogSettings catalog, java.util.function.Consumer<Catalog> action) {
        Catalog cat = catalog.open();
        try {
            action.accept(cat);
        } finally {
            if (cat instanceof Closeable) {
                try {
                    ((Closeable) cat).close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    /** Builds one flow; see {@link AutoCdcFlow}. */
    public static final class Builder {
        private final DataStream<String> records;
        private final Map<String, Object> definition = new LinkedHashMap<>();
        private String format = IngestOptions.FORMAT.defaultValue();
        @Nullable private CatalogSettings catalog;
        @Nullable private String quarantineNamespace;

        private Builder(DataStream<String> records) {
            this.records = records;
        }

        /** Any flow option by its flows-file name, e.g. {@code ("apply-buffer-keys", "10000")}. */
        public Builder option(String key, String value) {
            definition.put(key, value);
            return this;
        }

        /** KEYS. */
        public Builder keys(String... columns) {
            definition.put(FlowOptions.KEYS.key(), List.of(columns));
            return this;
        }

        /**
         * SEQUENCE BY: one column, or several for a STRUCT; default for Debezium records: the
         * connector's log position.
         */
        public Builder sequenceBy(String... columns) {
            definition.put(FlowOptions.SEQUENCE_BY.key(), List.of(columns));
            return this;
        }

        /**
         * REPLACE USING (docs/semantics.md S5) instead of AUTO CDC: per value of these columns, the
         * incoming rows with the highest {@link #sequenceBy} (required) replace every target row of
         * that value; a lower sequence changes nothing, equal sequences are all kept, null matches
         * null. Takes no {@link #keys}: a key value may have many rows, and the target has no
         * identifier fields. Records are rows (use {@code format("json")}: plain JSON objects).
         */
        public Builder replaceUsing(String... columns) {
            definition.put(FlowOptions.REPLACE_USING.key(), List.of(columns));
            return this;
        }

        /** STORED AS SCD TYPE 1 (default) or 2. */
        public Builder storedAs(ScdType type) {
            definition.put(FlowOptions.SCD_TYPE.key(), type == ScdType.TYPE_1 ? "1" : "2");
            return this;
        }

        /** APPLY AS DELETE WHEN: a Flink SQL predicate over the source columns. */
        public Builder applyAsDeleteWhen(String predicate) {
            definition.put(FlowOptions.APPLY_AS_DELETE_WHEN.key(), predicate);
            return this;
        }

        /** APPLY AS TRUNCATE WHEN: a Flink SQL predicate (SCD type 1). */
        public Builder applyAsTruncateWhen(String predicate) {
            definition.put(FlowOptions.APPLY_AS_TRUNCATE_WHEN.key(), predicate);
            return this;
        }

        /**
         * Adds a data-quality expectation (docs/semantics.md S8): {@code CONSTRAINT name EXPECT
         * (expression) [ON VIOLATION DROP ROW | FAIL UPDATE]}, checked on upserts before the apply.
         *
         * @param expression a Flink SQL boolean expression over the source columns (NULL passes)
         * @param onViolation KEEP (applied and counted), DROP_ROW (to the quarantine table) or
         *     FAIL_UPDATE (the run fails)
         */
        @SuppressWarnings("unchecked")
        public Builder expect(String name, String expression, Expectation.OnViolation onViolation) {
            List<Map<String, String>> list =
                    (List<Map<String, String>>)
                            definition.computeIfAbsent(
                                    FlowOptions.EXPECTATIONS.key(), k -> new ArrayList<>());
            Map<String, String> item = new LinkedHashMap<>();
            item.put("name", name);
            item.put("expect", expression);
            item.put("on-violation", onViolation.configName());
            list.add(item);
            return this;
        }

        /** The source columns as a Flink DDL column list, e.g. {@code "aid INT, filler STRING"}. */
        public Builder schema(String columns) {
            definition.put(FlowOptions.SCHEMA.key(), columns);
            return this;
        }

        /**
         * The table name the records carry (Debezium {@code source.table}); default: the target's
         * name. Records of other tables are quarantined as {@code UNKNOWN_TOPIC}.
         */
        public Builder sourceTable(String table) {
            definition.put(FlowOptions.TABLE.key(), table);
            return this;
        }

        /** {@code debezium-json} (default) or {@code json}. */
        public Builder format(String format) {
            this.format = format;
            return this;
        }

        /** The Iceberg catalog of the target and quarantine tables (required). */
        public Builder catalog(CatalogSettings catalog) {
            this.catalog = catalog;
            return this;
        }

        /** Namespace of the quarantine table; default: the target's. */
        public Builder quarantineNamespace(String namespace) {
            this.quarantineNamespace = namespace;
            return this;
        }

        /**
         * Resolves and validates the flow, creates the target and quarantine tables when they do
         * not exist (an existing table must match: A1), and adds the flow to the records' job.
         *
         * @param target {@code namespace.table}
         * @throws IllegalArgumentException for an unknown option, a bad value, a missing catalog or
         *     schema, naming what is wrong
         * @throws dev.changeflow.operators.AutoCdcException when the definition breaks an A1 rule
         */
        public AutoCdcFlow into(String target) {
            if (catalog == null) {
                throw new IllegalArgumentException(
                        "AutoCdcFlow into " + target + ": give catalog(CatalogSettings)");
            }
            int dot = target.lastIndexOf('.');
            String label = "AutoCdcFlow into " + target;
            FlowConfig flow = resolve(definition, target);
            if (flow.isFromSnapshot()) {
                throw new IllegalArgumentException(
                        label + ": from-snapshot flows are built with AutoCdcFlow.fromSnapshots");
            }
            if (flow.schema == null) {
                throw new IllegalArgumentException(
                        label
                                + ": give schema(\"col TYPE, ...\"): a stream has no sample to infer"
                                + " the columns from");
            }
            IngestConfig config = new IngestConfig();
            config.apply(
                    OptionsResolver.resolve(
                            IngestOptions.SET,
                            List.of(
                                    OptionLayer.single(
                                            OptionSource.DEFINITION,
                                            label,
                                            IngestOptions.FORMAT.key(),
                                            format))));
            config.name = flow.flowName();
            config.namespace =
                    quarantineNamespace != null ? quarantineNamespace : target.substring(0, dot);
            config.parallelism = records.getExecutionEnvironment().getParallelism();
            config.flows.add(flow);
            IngestPlan plan;
            try {
                plan = IngestPlanner.plan(config, List.of());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            withCatalog(catalog, cat -> ClusterIngest.ensureTables(cat, plan));
            String source = "stream " + flow.flowName();
            DataStream<SourceLine> lines =
                    records.map(new ToSourceLine(source), HandedOverTypeInfo.of(SourceLine.class))
                            .name("records " + flow.flowName())
                            .uid("records-" + flow.flowName())
                            .setParallelism(records.getParallelism());
            IngestJob.build(lines, plan, catalog);
            return new AutoCdcFlow(plan.flows.get(0).target, plan.flows.get(0).spec);
        }
    }

    /** Builds one AUTO CDC FROM SNAPSHOT flow; see {@link #fromSnapshots}. */
    public static final class SnapshotBuilder {
        private final StreamExecutionEnvironment env;
        private final Map<String, Object> definition = new LinkedHashMap<>();
        @Nullable private CatalogSettings catalog;
        @Nullable private Duration monitorInterval;

        private SnapshotBuilder(StreamExecutionEnvironment env, String key, String source) {
            this.env = env;
            definition.put(key, source);
        }

        /** Any flow option by its flows-file name, e.g. {@code ("columns", "id, city")}. */
        public SnapshotBuilder option(String key, String value) {
            definition.put(key, value);
            return this;
        }

        /** KEYS: one row per key in every snapshot. */
        public SnapshotBuilder keys(String... columns) {
            definition.put(FlowOptions.KEYS.key(), List.of(columns));
            return this;
        }

        /**
         * The snapshot's columns as a Flink DDL column list (required for files; for a table:
         * optional, the table columns to read, with their types there).
         */
        public SnapshotBuilder schema(String columns) {
            definition.put(FlowOptions.SCHEMA.key(), columns);
            return this;
        }

        /** STORED AS SCD TYPE 1 (default: the latest snapshot) or 2 (history by version). */
        public SnapshotBuilder storedAs(ScdType type) {
            definition.put(FlowOptions.SCD_TYPE.key(), type == ScdType.TYPE_1 ? "1" : "2");
            return this;
        }

        /** TRACK HISTORY ON these columns (SCD type 2). */
        public SnapshotBuilder trackHistoryOn(String... columns) {
            definition.put(FlowOptions.TRACK_HISTORY_ON.key(), List.of(columns));
            return this;
        }

        /** The Iceberg catalog of the target table (required). */
        public SnapshotBuilder catalog(CatalogSettings catalog) {
            this.catalog = catalog;
            return this;
        }

        /**
         * Keeps reading new snapshot files, scanning the folder at this interval; default: read the
         * files present when the job starts, then end.
         */
        public SnapshotBuilder monitorInterval(Duration interval) {
            this.monitorInterval = interval;
            return this;
        }

        /**
         * Resolves and validates the flow, creates the target table when it does not exist (an
         * existing table must match: A1), and adds the flow to the environment's job.
         *
         * @param target {@code namespace.table}
         * @throws IllegalArgumentException for an unknown option, a bad value, a missing catalog or
         *     schema, naming what is wrong
         * @throws dev.changeflow.operators.AutoCdcException when the definition breaks an A1 rule,
         *     or {@code SNAPSHOT_VERSION_NOT_SORTABLE} for a snapshot file name without a version
         */
        public AutoCdcFlow into(String target) {
            if (catalog == null) {
                throw new IllegalArgumentException(
                        "AutoCdcFlow into " + target + ": give catalog(CatalogSettings)");
            }
            FlowConfig flow = resolve(definition, target);
            SnapshotJob.Plan[] plan = new SnapshotJob.Plan[1];
            withCatalog(
                    catalog,
                    cat -> {
                        plan[0] =
                                SnapshotJob.plan(
                                        flow, target.substring(0, target.lastIndexOf('.')), cat);
                        SnapshotJob.ensureTable(cat, plan[0]);
                    });
            return into(plan[0]);
        }

        private AutoCdcFlow into(SnapshotJob.Plan plan) {
            SnapshotJob.build(env, plan, catalog, monitorInterval);
            return new AutoCdcFlow(plan.target, plan.spec);
        }
    }

    /**
     * A record as a line of a named stream (its number counts per subtask, for quarantine rows).
     */
    private static final class ToSourceLine extends RichMapFunction<String, SourceLine> {
        private static final long serialVersionUID = 1L;
        private final String source;
        private transient long line;

        ToSourceLine(String source) {
            this.source = source;
        }

        @Override
        public SourceLine map(String record) {
            return SourceLine.data(source, ++line, record.getBytes(StandardCharsets.UTF_8));
        }
    }
}
