package dev.changeflow.jobs.config;

import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.operators.options.OptionSet;

import org.apache.flink.configuration.ConfigOption;

import java.time.Duration;

import static org.apache.flink.configuration.ConfigOptions.key;

/**
 * The top-level options of a flows file (and the {@code ingest} flags that override them), declared
 * once with their parsers in {@link #SET}. The blocks {@code catalog:} (Iceberg catalog properties,
 * passed as they are), {@code kafka:} ({@link KafkaOptions}) and {@code flows:} ({@link
 * FlowOptions}) are read by {@link FlowsFile}. Applied to an {@link IngestConfig} by {@link
 * IngestConfig#apply}.
 */
public final class IngestOptions {
    private IngestOptions() {}

    public static final ConfigOption<String> NAME =
            key("name")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Job id: local checkpoints live in <warehouse>/.changeflow/checkpoints/<name>;"
                                    + " default: the flows file name without extension.");

    public static final ConfigOption<String> FORMAT =
            key("format")
                    .stringType()
                    .defaultValue("debezium-json")
                    .withDescription(
                            "Record format of every flow: debezium-json, json, csv (plain rows"
                                    + " from CSV files with a header line) or parquet.");

    public static final ConfigOption<String> NAMESPACE =
            key("namespace")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Namespace of the target tables; default: the Debezium schema of the records,"
                                    + " else 'default'.");

    public static final ConfigOption<Duration> CHECKPOINT_INTERVAL =
            key("checkpoint-interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(5))
                    .withDescription(
                            "Checkpoint interval: the Iceberg commit and Kafka offset commit cadence.");

    /**
     * How long a checkpoint may take before Flink declares it failed and starts the next one: 2
     * min, not Flink's 10 min, because Flink 2.1.1 can leave a resumed job's incremental RocksDB
     * checkpoint pending forever (its acknowledgement refused with "Attempt to reference unknown
     * state" in the JobMaster), blocking every later checkpoint — and with them the Iceberg commits
     * — for the whole timeout.
     */
    public static final ConfigOption<Duration> CHECKPOINT_TIMEOUT =
            key("checkpoint-timeout")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(2))
                    .withDescription(
                            "How long a checkpoint may take before it is declared failed and the"
                                    + " next one starts (Flink's execution.checkpointing.timeout).");

    public static final ConfigOption<Integer> PARALLELISM =
            key("parallelism")
                    .intType()
                    .noDefaultValue()
                    .withDescription(
                            "Parallelism of the AUTO CDC operators and writers; default: cores, at most 4.");

    public static final ConfigOption<Integer> MAX_RECORD_BYTES =
            key("max-record-bytes")
                    .intType()
                    .defaultValue(8 * 1024 * 1024)
                    .withDescription(
                            "Largest record accepted, bytes; larger ones are quarantined as"
                                    + " RECORD_TOO_LARGE.");

    /**
     * {@code read_files(..., includeExistingFiles => ...)} (docs/semantics.md S2): false takes the
     * files already under the inputs when the job first starts (no saved state: the first run, or
     * after {@code --from-scratch} / {@code REFRESH ... FULL}) as read without reading them.
     */
    public static final ConfigOption<Boolean> INCLUDE_EXISTING_FILES =
            key("include-existing-files")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Files input: false reads only files added after the job's first start"
                                    + " (a start without saved state); the files present then are"
                                    + " taken as read.");

    /**
     * {@code read_files(..., maxFilesPerTrigger => n)} (docs/semantics.md S2): at most n new files
     * per checkpoint (one Iceberg commit each); no limit by default.
     */
    public static final ConfigOption<Integer> MAX_FILES_PER_TRIGGER =
            key("max-files-per-trigger")
                    .intType()
                    .noDefaultValue()
                    .withDescription(
                            "Files input: at most this many new files per checkpoint (one Iceberg"
                                    + " commit); default: no limit.");

    /** The scalar top-level options with their parsers. */
    public static final OptionSet SET =
            OptionSet.builder("flows file")
                    .add(NAME, OptionParsers.text(NAME.key()))
                    .add(FORMAT, FlowOptions.format(FORMAT.key()))
                    .add(NAMESPACE, OptionParsers.text(NAMESPACE.key()))
                    .add(
                            CHECKPOINT_INTERVAL,
                            OptionParsers.parsing(
                                    CHECKPOINT_INTERVAL.key(),
                                    "a duration of at least 10ms (e.g. 5s, 500ms; a bare number is"
                                            + " seconds)",
                                    text ->
                                            atLeast(
                                                    text,
                                                    CHECKPOINT_INTERVAL.key(),
                                                    Duration.ofMillis(10),
                                                    "10ms")))
                    .add(
                            CHECKPOINT_TIMEOUT,
                            OptionParsers.parsing(
                                    CHECKPOINT_TIMEOUT.key(),
                                    "a duration of at least 1s (e.g. 2min, 90s)",
                                    text ->
                                            atLeast(
                                                    text,
                                                    CHECKPOINT_TIMEOUT.key(),
                                                    Duration.ofSeconds(1),
                                                    "1s")))
                    .add(
                            PARALLELISM,
                            OptionParsers.intRange(
                                    PARALLELISM.key(), 1, Short.MAX_VALUE, "subtasks"))
                    .add(
                            MAX_RECORD_BYTES,
                            OptionParsers.intRange(
                                    MAX_RECORD_BYTES.key(), 1, Integer.MAX_VALUE, "bytes"))
                    .add(INCLUDE_EXISTING_FILES, OptionParsers.bool(INCLUDE_EXISTING_FILES.key()))
                    .add(
                            MAX_FILES_PER_TRIGGER,
                            OptionParsers.intRange(
                                    MAX_FILES_PER_TRIGGER.key(), 1, Integer.MAX_VALUE, "files"))
                    .build();

    private static Duration atLeast(String text, String key, Duration min, String minText) {
        Duration d = OptionParsers.duration(text, key);
        if (d.compareTo(min) < 0) {
            throw new IllegalArgumentException(key + " below " + minText + ": " + text);
        }
        return d;
    }
}
