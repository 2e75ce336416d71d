package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.maintain.JobMaintenance;
import dev.changeflow.operators.AutoCdcOperators;
import dev.changeflow.operators.AutoCdcPredicates;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ReplaceUsingOperators;
import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.InJobMaintenance;
import dev.changeflow.sinks.iceberg.StreamingTableSink;
import dev.changeflow.sinks.quarantine.QuarantineTable;
import dev.changeflow.sources.cdf.ChangeFeedColumns;
import dev.changeflow.sources.cdf.stream.ChangeFeedSource;
import dev.changeflow.sources.changes.DecoderFlow;
import dev.changeflow.sources.files.ChangeFiles;
import dev.changeflow.sources.files.DecodeFunction;
import dev.changeflow.sources.files.SourceLine;
import dev.changeflow.sources.kafka.KafkaChangeRecord;
import dev.changeflow.sources.kafka.KafkaChangeSource;
import dev.changeflow.sources.kafka.KafkaDecodeFunction;
import dev.changeflow.sources.kafka.KafkaInput;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.TableLoader;

import javax.annotation.Nullable;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the ingest topology on a {@link StreamExecutionEnvironment}:
 *
 * <pre>
 * change files ─┐
 *                ├─> decode ──(per flow)──> [APPLY AS ... WHEN] ──> keyBy(KEYS) ──> AUTO CDC ──> Iceberg
 * Kafka ─────────┘      └──> quarantine ──> &lt;namespace&gt;.changeflow_quarantine
 * change feed of an Iceberg table ──(per flow)──┘   (no decoder: the rows are typed already)
 * </pre>
 *
 * Files and Kafka differ only in the reader and the decode adapter ({@link DecodeFunction} / {@link
 * KafkaDecodeFunction}, same side outputs); everything after the decoder is one code path. Every
 * stateful operator has an explicit uid ({@code change-files}, {@code kafka-source}, {@code
 * decode}, {@code auto-cdc-<flow>}, Iceberg sinks with uid suffix {@code <flow>}) so savepoints
 * survive code changes. Tables must exist already ({@link LocalIngest} creates them on the client).
 *
 * <p>A flow with {@code maintenance: true} also gets its table's maintenance ({@link
 * JobMaintenance}: Iceberg's compaction and orphan-file tasks through {@link InJobMaintenance}, and
 * changeflow's consumer-aware expiry graph; uids ending in {@code maintenance-<flow>}); its monitor
 * source is unbounded, so such a job never finishes by itself, even on bounded input (a local run
 * stops with a savepoint).
 */
public final class IngestJob {
    private IngestJob() {}

    /**
     * Adds the ingest pipeline for {@code inputs} (files or folders).
     *
     * @param monitorInterval null reads the files present now and ends; else keeps discovering new
     *     files
     * @param doneDir where to record, per checkpoint, the files read completely (local runs), or
     *     null
     */
    public static void build(
            StreamExecutionEnvironment env,
            IngestPlan plan,
            CatalogSettings catalog,
            List<Path> inputs,
            @Nullable Duration monitorInterval,
            @Nullable Path doneDir) {
        build(env, plan, catalog, inputs, monitorInterval, doneDir, true, null);
    }

    /**
     * As {@link #build(StreamExecutionEnvironment, IngestPlan, CatalogSettings, List, Duration,
     * Path)}, with {@code include-existing-files} (docs/semantics.md S2).
     *
     * @param includeExisting false: when the job starts without restored state, the files already
     *     under the inputs are taken as read without reading them ({@link
     *     ChangeFiles#newFilesOnly}); needs a {@code monitorInterval}
     * @param skip with {@code includeExisting} false: exactly the files taken as existing (absolute
     *     paths, as a local launcher recorded them), or null for every file found at that start
     */
    public static void build(
            StreamExecutionEnvironment env,
            IngestPlan plan,
            CatalogSettings catalog,
            List<Path> inputs,
            @Nullable Duration monitorInterval,
            @Nullable Path doneDir,
            boolean includeExisting,
            @Nullable List<String> skip) {
        List<org.apache.flink.core.fs.Path> files = new ArrayList<>();
        for (Path p : inputs) {
            files.add(new org.apache.flink.core.fs.Path(p.toAbsolutePath().toUri()));
        }
        buildFiles(
                env,
                plan,
                catalog,
                files,
                monitorInterval,
                doneDir == null ? null : StateFiles.of(doneDir),
                includeExisting,
                skip,
                null);
    }

    /**
     * As {@link #build(StreamExecutionEnvironment, IngestPlan, CatalogSettings, List, Duration,
     * Path, boolean, List)}, with inputs on any Flink file system (local {@code file:} paths,
     * {@code s3://...}; docs/semantics.md S2), read by Flink's file source through the file system
     * of each path's scheme. The reader and its chained progress function (uids {@code
     * change-files}, {@code file-progress}) and the decoder run at {@code file-readers} (default
     * 1): each file is one split read by one reader, so a file's records keep their order up to the
     * keyBy, and no shuffle precedes it.
     *
     * @param skip with {@code includeExisting} false: exactly the files taken as existing (local
     *     absolute paths or URIs, as {@link dev.changeflow.sources.files.FileGlob#key} names them),
     *     or null for every file found at that start
     * @param doneDir as in {@link #build(StreamExecutionEnvironment, IngestPlan, CatalogSettings,
     *     List, Duration, Path)}, on any Flink file system (a local folder or an object store)
     * @param runFiles the files a local run is to read (keys as {@code skip}), whose completed
     *     count gauge {@code inputFilesCompleted} tells its launcher, or null ({@link
     *     FileProgressFunction})
     */
    public static void buildFiles(
            StreamExecutionEnvironment env,
            IngestPlan plan,
            CatalogSettings catalog,
            List<org.apache.flink.core.fs.Path> inputs,
            @Nullable Duration monitorInterval,
            @Nullable org.apache.flink.core.fs.Path doneDir,
            boolean includeExisting,
            @Nullable List<String> skip,
            @Nullable Collection<String> runFiles) {
        // S2: CSV lines and Parquet records become plain rows in the source
        ChangeFiles.Format format = IngestPlanner.fileFormat(plan.config.format);
        Source<
                        SourceLine,
                        org.apache.flink.connector.file.src.FileSourceSplit,
                        org.apache.flink.connector.file.src.PendingSplitsCheckpoint<
                                org.apache.flink.connector.file.src.FileSourceSplit>>
                files =
                        includeExisting
                                ? ChangeFiles.forFlinkPaths(
                                        inputs,
                                        monitorInterval,
                                        DecoderFlow.DEFAULT_MAX_RECORD_BYTES,
                                        format,
                                        plan.config.csv)
                                : ChangeFiles.newFilesOnlyForFlinkPaths(
                                        inputs,
                                        monitorInterval,
                                        DecoderFlow.DEFAULT_MAX_RECORD_BYTES,
                                        skip,
                                        format,
                                        plan.config.csv);
        if (plan.config.maxFilesPerTrigger != null) {
            // S2: maxFilesPerTrigger, at most n new files per checkpoint (one commit)
            files =
                    new dev.changeflow.sources.files.FilesPerCheckpoint<>(
                            files, plan.config.maxFilesPerTrigger);
        }
        DataStream<SourceLine> lines =
                env.fromSource(
                                files,
                                WatermarkStrategy.noWatermarks(),
                                "change files",
                                HandedOverTypeInfo.of(SourceLine.class))
                        .uid("change-files")
                        .setParallelism(plan.config.fileReaders)
                        .process(
                                new FileProgressFunction(doneDir, runFiles),
                                HandedOverTypeInfo.of(SourceLine.class))
                        .uid("file-progress")
                        .name("file progress")
                        .setParallelism(plan.config.fileReaders);
        build(lines, plan, catalog);
    }

    /**
     * Adds the ingest pipeline reading Kafka: the source (uid {@code kafka-source}, one split per
     * partition), the progress function (uid {@code kafka-progress}) and the decoder run at {@code
     * kafka-readers} (default 1), chained: each partition is read by one reader, so its records
     * keep their order up to the keyBy (the result does not depend on it, docs/semantics.md A2, but
     * lateness counts do), and no shuffle precedes the keyBy.
     *
     * @param progress tracks consumed positions (a local run's end condition), see {@link
     *     KafkaProgressFunction}
     */
    public static void buildKafka(
            StreamExecutionEnvironment env,
            IngestPlan plan,
            CatalogSettings catalog,
            KafkaInput input,
            KafkaProgressFunction progress) {
        DataStream<KafkaChangeRecord> records =
                env.fromSource(
                                KafkaChangeSource.create(input, defaultGroupId(plan)),
                                WatermarkStrategy.noWatermarks(),
                                "kafka",
                                HandedOverTypeInfo.of(KafkaChangeRecord.class))
                        .uid("kafka-source")
                        .setParallelism(plan.config.kafkaReaders)
                        .process(progress, HandedOverTypeInfo.of(KafkaChangeRecord.class))
                        .uid("kafka-progress")
                        .name("kafka progress")
                        .setParallelism(plan.config.kafkaReaders);
        buildKafka(records, plan, catalog);
    }

    /** The consumer group of a job whose Kafka input names none: {@code changeflow-<job name>}. */
    public static String defaultGroupId(IngestPlan plan) {
        return defaultGroupId(plan.config);
    }

    /** The consumer group of a job of {@code config} whose Kafka input names none. */
    public static String defaultGroupId(dev.changeflow.jobs.config.IngestConfig config) {
        return "changeflow-" + (config.name == null ? "ingest" : config.name);
    }

    /**
     * Adds decode → apply → write for Kafka records (from {@link KafkaChangeSource}, or a test
     * source).
     */
    public static void buildKafka(
            DataStream<KafkaChangeRecord> records, IngestPlan plan, CatalogSettings catalog) {
        Decoders d = decoders(plan);
        SingleOutputStreamOperator<RowData> decoded =
                records.process(
                                new KafkaDecodeFunction(d.decoders),
                                InternalTypeInfo.of(QuarantineRecords.ROW_TYPE))
                        .uid("decode")
                        .name("decode change records")
                        .setParallelism(records.getParallelism());
        applyAndWrite(decoded, d, plan, catalog);
    }

    /** Adds decode → apply → write for already-read lines (files, or a test source). */
    public static void build(
            DataStream<SourceLine> lines, IngestPlan plan, CatalogSettings catalog) {
        Decoders d = decoders(plan);
        // decoding runs beside the reader (one thread decodes ~500,000 records/s): no shuffle
        // before
        // the keyBy, and records of one key keep their file order
        SingleOutputStreamOperator<RowData> decoded =
                lines.process(
                                new DecodeFunction(d.decoders),
                                InternalTypeInfo.of(QuarantineRecords.ROW_TYPE))
                        .uid("decode")
                        .name("decode change records")
                        .setParallelism(lines.getParallelism());
        applyAndWrite(decoded, d, plan, catalog);
    }

    /** The distinct decoder flows of a plan and, per plan flow, the index of its decoder flow. */
    private static final class Decoders {
        final List<DecoderFlow> decoders = new ArrayList<>();
        final int[] decoderOf;

        Decoders(int flows) {
            decoderOf = new int[flows];
        }
    }

    private static Decoders decoders(IngestPlan plan) {
        // flows reading the same source table the same way (e.g. an SCD1 and an SCD2 table of one
        // source) share one decoder output
        Decoders result = new Decoders(plan.flows.size());
        List<DecoderFlow> decoders = result.decoders;
        for (int i = 0; i < plan.flows.size(); i++) {
            DecoderFlow d = plan.flows.get(i).decoder;
            int found = -1;
            for (int j = 0; j < decoders.size(); j++) {
                if (sameRouting(decoders.get(j), d)) {
                    found = j;
                }
            }
            if (found < 0) {
                for (DecoderFlow other : decoders) {
                    if (other.sourceNames().stream().anyMatch(d.sourceNames()::contains)) {
                        throw new IllegalArgumentException(
                                "flows '"
                                        + other.flowId()
                                        + "' and '"
                                        + d.flowId()
                                        + "' read the same source table "
                                        + d.sourceNames()
                                        + " with different keys, sequence or columns; give them the same"
                                        + " keys, sequence-by and schema, or split them into two ingest jobs");
                    }
                }
                found = decoders.size();
                decoders.add(d);
            }
            result.decoderOf[i] = found;
        }
        return result;
    }

    /**
     * The part shared by every input: per flow [APPLY AS ... WHEN] → keyBy(KEYS) → AUTO CDC →
     * Iceberg (or append), and the quarantine table, from a decoder's side outputs ({@link
     * DecodeFunction#changesTag}, {@link DecodeFunction#truncatesTag}, {@link
     * DecodeFunction#quarantineTag}).
     */
    private static void applyAndWrite(
            SingleOutputStreamOperator<RowData> decoded,
            Decoders d,
            IngestPlan plan,
            CatalogSettings catalog) {
        List<DecoderFlow> decoders = d.decoders;
        int[] decoderOf = d.decoderOf;
        List<DataStream<RowData>> extraQuarantine = new ArrayList<>();
        for (int i = 0; i < plan.flows.size(); i++) {
            IngestPlan.Flow flow = plan.flows.get(i);
            DecoderFlow decoder = decoders.get(decoderOf[i]);
            DataStream<RowData> changes =
                    decoded.getSideOutput(DecodeFunction.changesTag(decoderOf[i], decoder));
            DataStream<RowData> truncates =
                    flow.spec != null && flow.spec.truncateEnabled()
                            ? decoded.getSideOutput(
                                    DecodeFunction.truncatesTag(decoderOf[i], decoder))
                            : null;
            writeFlow(changes, truncates, flow, catalog, extraQuarantine);
        }
        DataStream<RowData> quarantine = decoded.getSideOutput(DecodeFunction.quarantineTag());
        writeQuarantine(quarantine, extraQuarantine, plan, catalog);
    }

    /**
     * One flow from its decoded rows: append (append-only flows), or [APPLY AS ... WHEN] →
     * keyBy(KEYS) → AUTO CDC, into its Iceberg table; what the flow sets aside goes to {@code
     * quarantine}.
     *
     * @param changes rows of {@code flow.decoder.sourceType()}
     * @param truncates truncate records, or null
     */
    private static void writeFlow(
            DataStream<RowData> changes,
            @Nullable DataStream<RowData> truncates,
            IngestPlan.Flow flow,
            CatalogSettings catalog,
            List<DataStream<RowData>> quarantine) {
        if (flow.replaceUsing != null) {
            // S5: keyBy(REPLACE USING columns) → replace per key by sequence → Iceberg, rows
            // identified by all their columns
            DataStream<RowData> rows =
                    project(
                            changes,
                            flow.decoder.sourceType(),
                            flow.decoder.dataType(),
                            flow.name());
            ReplaceUsingOperators.Applied applied =
                    ReplaceUsingOperators.apply(rows, flow.replaceUsing);
            quarantine.add(applied.quarantine);
            StreamingTableSink.replaceUsing(
                    applied.rows, catalog.loader(), flow.target, flow.tableOptions, flow.name());
            return;
        }
        if (flow.spec == null) {
            DataStream<RowData> in = changes;
            if (flow.changeFeed != null) {
                // S7: a streaming read of a table takes its appended rows only
                RowType feed = flow.decoder.dataType();
                in =
                        changes.filter(
                                        new AppendedRowsOnly(
                                                flow.name(),
                                                flow.changeFeed.toString(),
                                                flow.target.toString(),
                                                feed.getFieldIndex(ChangeFeedColumns.CHANGE_TYPE),
                                                feed.getFieldIndex(
                                                        ChangeFeedColumns.COMMIT_VERSION)))
                                .name("appended rows only " + flow.name())
                                .uid("appended-rows-" + flow.name());
            }
            DataStream<RowData> rows =
                    project(in, flow.decoder.sourceType(), flow.appendInputType(), flow.name());
            if (flow.query != null) {
                // S1: the select list and WHERE, evaluated by Flink SQL
                rows = flow.query.apply(rows);
            }
            if (!flow.config.expectations.isEmpty()) {
                // S8: the appended rows are checked; DROP ROW violations go to the quarantine
                AutoCdcPredicates.Result checked =
                        AutoCdcPredicates.expect(
                                rows, flow.name(), flow.appendType(), flow.config.expectations);
                rows = checked.changes;
                quarantine.add(checked.quarantine);
            }
            // the rows written are the flow's "applied" (run summary, last refresh); no state
            rows =
                    rows.filter(new CountAppended())
                            .name("count appended " + flow.name())
                            .uid("count-appended-" + flow.name());
            StreamingTableSink.append(
                    rows, catalog.loader(), flow.target, flow.tableOptions, flow.name());
            maintain(changes.getExecutionEnvironment(), flow, catalog);
            return;
        }
        AutoCdcSpec spec = flow.spec;
        AutoCdcOperators.Applied applied = AutoCdcOperators.applyFlow(changes, truncates, spec);
        quarantine.add(applied.quarantine);
        StreamingTableSink.write(
                applied.rows,
                catalog.loader(),
                flow.target,
                spec.identifierFields(),
                flow.tableOptions,
                flow.name());
        maintain(changes.getExecutionEnvironment(), flow, catalog);
    }

    /**
     * The flow's in-job maintenance ({@link JobMaintenance}, docs/semantics.md M1, M2), when its
     * {@code maintenance} option is on: operator uids end in {@code maintenance-<flow>}.
     */
    private static void maintain(
            StreamExecutionEnvironment env, IngestPlan.Flow flow, CatalogSettings catalog) {
        JobMaintenance.append(
                env, catalog, flow.target, flow.config.maintenance, "maintenance-" + flow.name());
    }

    /** The quarantine table of the plan's namespace, from {@code first} and {@code others}. */
    private static void writeQuarantine(
            DataStream<RowData> first,
            List<DataStream<RowData>> others,
            IngestPlan plan,
            CatalogSettings catalog) {
        DataStream<RowData> quarantine = first;
        for (DataStream<RowData> q : others) {
            quarantine = quarantine.union(q);
        }
        QuarantineTable.append(
                quarantine, catalog.loader(), plan.quarantineNamespace, "quarantine");
    }

    /**
     * Adds the job of a plan whose flows read change feeds ({@link IngestPlanner#planChangeFeeds},
     * docs/semantics.md S7): per source table one {@link ChangeFeedSource} (uids {@code
     * cdf-<table>-source}, {@code cdf-<table>-pairing}; consumer id the job's name, F7) starting,
     * without state, at the table's current snapshot, and its {@link ChangeFeedProgressOperator}
     * (uid {@code cdf-<table>-progress}), shared by the flows reading that table; then each flow as
     * {@link #build(DataStream, IngestPlan, CatalogSettings)} applies it.
     *
     * @param upTo per source table, the version the run reads up to (its latest at launch)
     * @param monitorInterval how often a change feed looks for new versions
     */
    public static void buildChangeFeeds(
            StreamExecutionEnvironment env,
            IngestPlan plan,
            CatalogSettings catalog,
            Map<TableIdentifier, Long> upTo,
            Duration monitorInterval) {
        Map<TableIdentifier, DataStream<RowData>> feeds = new LinkedHashMap<>();
        List<DataStream<RowData>> quarantine = new ArrayList<>();
        for (IngestPlan.Flow flow : plan.flows) {
            TableIdentifier source = flow.changeFeed;
            if (source == null) {
                throw new IllegalArgumentException(
                        "flow '" + flow.name() + "' reads no change feed");
            }
            DataStream<RowData> changes =
                    feeds.computeIfAbsent(
                            source,
                            id -> {
                                String uid = "cdf-" + id;
                                DataStream<RowData> rows =
                                        ChangeFeedSource.forTable(
                                                        TableLoader.fromCatalog(
                                                                catalog.loader(), id))
                                                .uidPrefix(uid)
                                                .consumerId(plan.config.name)
                                                .monitorInterval(monitorInterval)
                                                .build(env);
                                RowType type = flow.decoder.sourceType();
                                return rows.transform(
                                                "change feed " + id,
                                                rows.getType(),
                                                new ChangeFeedProgressOperator(
                                                        upTo.get(id),
                                                        type.getFieldIndex(
                                                                ChangeFeedColumns.CHANGE_TYPE)))
                                        .uid(uid + "-progress");
                            });
            writeFlow(changes, null, flow, catalog, quarantine);
        }
        if (!quarantine.isEmpty()) { // append flows set aside DROP ROW violations only (S7, S8)
            writeQuarantine(
                    quarantine.get(0), quarantine.subList(1, quarantine.size()), plan, catalog);
        }
    }

    static boolean sameRouting(DecoderFlow a, DecoderFlow b) {
        return a.sourceNames().equals(b.sourceNames())
                && a.format() == b.format()
                && a.dataType().equals(b.dataType())
                && a.keys().equals(b.keys())
                && a.sequenceBy().equals(b.sequenceBy())
                && a.truncateEnabled() == b.truncateEnabled()
                && a.appendOnly() == b.appendOnly()
                && a.onSchemaChange() == b.onSchemaChange()
                && a.onInvalidRecord() == b.onInvalidRecord()
                && a.maxRecordBytes() == b.maxRecordBytes()
                && a.unavailablePlaceholder().equals(b.unavailablePlaceholder());
    }

    /** Keeps the data columns of source rows (drops envelope metadata) for append-only tables. */
    private static DataStream<RowData> project(
            DataStream<RowData> in, RowType source, RowType data, String flow) {
        int[] idx = new int[data.getFieldCount()];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = source.getFieldIndex(data.getFieldNames().get(i));
        }
        return in.map(new ProjectFunction(source, idx), InternalTypeInfo.of(data))
                .name("project " + flow)
                .uid("project-" + flow);
    }
}
