package dev.changeflow.jobs.config;

import dev.changeflow.operators.options.ResolvedOptions;
import dev.changeflow.sources.kafka.KafkaInput;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything an ingest job needs besides its input: the Iceberg catalog, the default namespace and
 * record format, checkpointing, and the flows. Read from a flows file by {@link FlowsFile}; command
 * line flags may override single values.
 */
public final class IngestConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * Job / checkpoint id: local checkpoints live under {@code
     * warehouse/.changeflow/checkpoints/<name>}.
     */
    @Nullable public String name;

    /**
     * Iceberg catalog properties ({@code type}, {@code warehouse}, {@code uri}, ...); empty = local
     * Hadoop catalog.
     */
    public Map<String, String> catalog = new LinkedHashMap<>();

    /**
     * Flink configuration of the file systems the inputs are read from ({@code s3.endpoint}, {@code
     * s3.access-key}, {@code s3.secret-key}, {@code s3.path.style.access}, {@code gs.*}, {@code
     * fs.*}; docs/semantics.md S2), as {@code SET} gives them; empty = Flink's defaults (and the
     * {@code config.yaml} of {@code FLINK_CONF_DIR}).
     */
    public Map<String, String> fileSystem = new LinkedHashMap<>();

    /**
     * Namespace of the target tables; null = the Debezium schema of the records, else {@code
     * default}.
     */
    @Nullable public String namespace;

    /** {@code debezium-json} (default) or {@code json}. */
    public String format = IngestOptions.FORMAT.defaultValue();

    public Duration checkpointInterval = IngestOptions.CHECKPOINT_INTERVAL.defaultValue();

    /** Checkpoint timeout ({@link IngestOptions#CHECKPOINT_TIMEOUT}). */
    public Duration checkpointTimeout = IngestOptions.CHECKPOINT_TIMEOUT.defaultValue();

    /** Parallelism of the keyed operators and writers; default: available cores. */
    public int parallelism = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));

    /** Parallelism of the Kafka reader and decoder ({@link IngestOptions#KAFKA_READERS}). */
    public int kafkaReaders = IngestOptions.KAFKA_READERS.defaultValue();

    /** Parallelism of the file reader and decoder ({@link IngestOptions#FILE_READERS}). */
    public int fileReaders = IngestOptions.FILE_READERS.defaultValue();

    /**
     * Whether the file itself set {@link #checkpointInterval} (not the default); {@code deploy}
     * then renders it into the FlinkDeployment.
     */
    public boolean checkpointIntervalSet;

    /**
     * Whether the file itself set {@link #parallelism} (not the default of this machine's cores);
     * {@code deploy} then renders it unless {@code --parallelism} is given.
     */
    public boolean parallelismSet;

    /** Largest record accepted, bytes (larger ones are quarantined as RECORD_TOO_LARGE). */
    public int maxRecordBytes = IngestOptions.MAX_RECORD_BYTES.defaultValue();

    /**
     * Files input: false takes the files present when the job first starts as read ({@link
     * IngestOptions#INCLUDE_EXISTING_FILES}, docs/semantics.md S2).
     */
    public boolean includeExistingFiles = IngestOptions.INCLUDE_EXISTING_FILES.defaultValue();

    /**
     * At most this many new files per checkpoint ({@code max-files-per-trigger}, {@link
     * IngestOptions#MAX_FILES_PER_TRIGGER}, docs/semantics.md S2); null = no limit.
     */
    @javax.annotation.Nullable public Integer maxFilesPerTrigger;

    /**
     * How CSV files are read ({@code csv-header}, {@code csv-sep}, {@code csv-quote}, {@code
     * csv-escape}, {@code csv-null-value}, {@code csv-comment}; docs/semantics.md S2).
     */
    public dev.changeflow.sources.files.CsvOptions csv =
            dev.changeflow.sources.files.CsvOptions.DEFAULT;

    public List<FlowConfig> flows = new ArrayList<>();

    /**
     * The flows file's REPLACE WHERE flows (docs/semantics.md S4), in file order: each has {@link
     * FlowConfig#replaceWhere} and {@link FlowConfig#query} and no source table. They are not part
     * of the ingest job of {@link #flows}; {@code ingest} refreshes each after it, one Flink batch
     * job apiece.
     */
    public List<FlowConfig> replaceWheres = new ArrayList<>();

    /**
     * Kafka input (the flows file's {@code kafka:} block or the launcher's flags); null = files.
     */
    @Nullable public KafkaInput kafka;

    /**
     * Kafka, local runs: stop once no record arrived for this long, instead of at the end offsets
     * seen at launch.
     */
    @Nullable public Duration untilIdle;

    /**
     * Sets every option that {@code r} holds from a place other than its default onto this
     * configuration.
     *
     * @param r options of {@link IngestOptions#SET}
     * @return this configuration
     */
    public IngestConfig apply(ResolvedOptions r) {
        if (r.isSet(IngestOptions.NAME)) {
            name = r.get(IngestOptions.NAME);
        }
        if (r.isSet(IngestOptions.FORMAT)) {
            format = r.get(IngestOptions.FORMAT);
        }
        if (r.isSet(IngestOptions.NAMESPACE)) {
            namespace = r.get(IngestOptions.NAMESPACE);
        }
        if (r.isSet(IngestOptions.CHECKPOINT_INTERVAL)) {
            checkpointInterval = r.get(IngestOptions.CHECKPOINT_INTERVAL);
            checkpointIntervalSet = true;
        }
        if (r.isSet(IngestOptions.CHECKPOINT_TIMEOUT)) {
            checkpointTimeout = r.get(IngestOptions.CHECKPOINT_TIMEOUT);
        }
        if (r.isSet(IngestOptions.PARALLELISM)) {
            parallelism = r.get(IngestOptions.PARALLELISM);
            parallelismSet = true;
        }
        if (r.isSet(IngestOptions.KAFKA_READERS)) {
            kafkaReaders = r.get(IngestOptions.KAFKA_READERS);
        }
        if (r.isSet(IngestOptions.FILE_READERS)) {
            fileReaders = r.get(IngestOptions.FILE_READERS);
        }
        if (r.isSet(IngestOptions.MAX_RECORD_BYTES)) {
            maxRecordBytes = r.get(IngestOptions.MAX_RECORD_BYTES);
        }
        if (r.isSet(IngestOptions.MAX_FILES_PER_TRIGGER)) {
            maxFilesPerTrigger = r.get(IngestOptions.MAX_FILES_PER_TRIGGER);
        }
        if (r.isSet(IngestOptions.INCLUDE_EXISTING_FILES)) {
            includeExistingFiles = r.get(IngestOptions.INCLUDE_EXISTING_FILES);
        }
        if (r.isSet(IngestOptions.CSV_HEADER)
                || r.isSet(IngestOptions.CSV_SEPARATOR)
                || r.isSet(IngestOptions.CSV_QUOTE)
                || r.isSet(IngestOptions.CSV_ESCAPE)
                || r.isSet(IngestOptions.CSV_NULL_VALUE)
                || r.isSet(IngestOptions.CSV_COMMENT)) {
            csv =
                    new dev.changeflow.sources.files.CsvOptions(
                            r.isSet(IngestOptions.CSV_HEADER)
                                    ? r.get(IngestOptions.CSV_HEADER)
                                    : csv.header,
                            r.isSet(IngestOptions.CSV_SEPARATOR)
                                    ? r.get(IngestOptions.CSV_SEPARATOR).charAt(0)
                                    : csv.separator,
                            r.isSet(IngestOptions.CSV_QUOTE)
                                    ? r.get(IngestOptions.CSV_QUOTE).charAt(0)
                                    : csv.quote,
                            r.isSet(IngestOptions.CSV_ESCAPE)
                                    ? Character.valueOf(r.get(IngestOptions.CSV_ESCAPE).charAt(0))
                                    : csv.escape,
                            r.isSet(IngestOptions.CSV_NULL_VALUE)
                                    ? r.get(IngestOptions.CSV_NULL_VALUE)
                                    : csv.nullValue,
                            r.isSet(IngestOptions.CSV_COMMENT)
                                    ? Character.valueOf(r.get(IngestOptions.CSV_COMMENT).charAt(0))
                                    : csv.comment);
        }
        return this;
    }

    /**
     * The REPLACE WHERE flow named {@code name} (its {@link FlowConfig#flowName()}, or its target
     * as written; case-insensitive), or null.
     */
    @Nullable
    public FlowConfig replaceWhere(String name) {
        for (FlowConfig f : replaceWheres) {
            if (f.flowName().equalsIgnoreCase(name)
                    || (f.target != null && f.target.equalsIgnoreCase(name))) {
                return f;
            }
        }
        return null;
    }

    /** The flow reading {@code table}, or null. */
    @Nullable
    public FlowConfig flow(String table) {
        for (FlowConfig f : flows) {
            if (f.table.equals(table)) {
                return f;
            }
        }
        return null;
    }
}
