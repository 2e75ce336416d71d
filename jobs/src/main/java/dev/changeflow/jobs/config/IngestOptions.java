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

    /** A job name: it names a folder of the job's saved state, so no path or blank. */
    private static final java.util.regex.Pattern JOB_NAME =
            java.util.regex.Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

    private static String checkName(String name) {
        if (!JOB_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("not a job name");
        }
        return name;
    }

    /**
     * The job name a file's name gives when the file sets none ({@code orders.sql} → {@code
     * orders}): the stem with every character a job name may not hold replaced by {@code -}, and
     * {@code pipeline} when nothing is left.
     */
    public static String jobNameOf(String stem) {
        String n = stem.replaceAll("[^A-Za-z0-9._-]", "-").replaceAll("^[^A-Za-z0-9]+", "");
        return n.isEmpty() ? "pipeline" : n;
    }

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

    public static final ConfigOption<Integer> KAFKA_READERS =
            key("kafka-readers")
                    .intType()
                    .defaultValue(1)
                    .withDescription(
                            "Parallelism of the Kafka reader and its chained decoder (one split per"
                                    + " partition, so a partition's records keep their order);"
                                    + " default 1: on 2 cores, 2 readers measured from 15% fewer"
                                    + " to 34% more events/s than 1 (EndToEndBenchmark); raise it"
                                    + " where cores outnumber what the apply needs. A job with saved"
                                    + " state cannot go from 1 to more or back.");

    public static final ConfigOption<Integer> FILE_READERS =
            key("file-readers")
                    .intType()
                    .defaultValue(1)
                    .withDescription(
                            "Parallelism of the file reader and its chained decoder (each file is"
                                    + " one split, read by one reader, so a file's records keep"
                                    + " their order); default 1, the topology of earlier releases"
                                    + " (a job with saved state cannot go from 1 to more or back);"
                                    + " with many files, 2 readers"
                                    + " measured 1.4x the events/s of 1 on 2 cores"
                                    + " (EndToEndBenchmark, R = 50).");

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

    /**
     * The one check of a files-per-checkpoint limit (docs/semantics.md S2), for {@code SET
     * max-files-per-trigger}, the flows file's {@code max-files-per-trigger} and {@code
     * read_files(..., maxFilesPerTrigger => n)} alike: a whole number of files from 1 to
     * 2147483647.
     *
     * @param key names the option or argument in the message
     * @throws IllegalArgumentException {@code "KEY must be a whole number of files from 1 to
     *     2147483647, got 'x'"}
     */
    public static dev.changeflow.operators.options.OptionParser<Integer> maxFilesPerTrigger(
            String key) {
        return OptionParsers.intRange(key, 1, Integer.MAX_VALUE, "files");
    }

    /**
     * CSV files (docs/semantics.md S2, {@code read_files(..., header => false)}): whether the first
     * non-empty line of each file names the columns; false: columns {@code _c0, _c1, ...}.
     */
    public static final ConfigOption<Boolean> CSV_HEADER =
            key("csv-header")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "CSV files: the first non-empty line names the columns (false: every"
                                    + " line is a record, columns _c0, _c1, ...).");

    /** CSV files: the cell separator ({@code read_files(..., sep => ';')}), one character. */
    public static final ConfigOption<String> CSV_SEPARATOR =
            key("csv-sep")
                    .stringType()
                    .defaultValue(",")
                    .withDescription("CSV files: the one character between cells.");

    /** CSV files: the quote character ({@code read_files(..., quote => "'")}). */
    public static final ConfigOption<String> CSV_QUOTE =
            key("csv-quote")
                    .stringType()
                    .defaultValue("\"")
                    .withDescription("CSV files: the one character that quotes a cell.");

    /** CSV files: the escape character inside quoted cells; none by default (RFC 4180). */
    public static final ConfigOption<String> CSV_ESCAPE =
            key("csv-escape")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "CSV files: a character that makes the next one literal inside a quoted"
                                    + " cell; default none (a doubled quote stands for one).");

    /** CSV files: the text of a null cell (besides the empty cell). */
    public static final ConfigOption<String> CSV_NULL_VALUE =
            key("csv-null-value")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "CSV files: a cell with exactly this text is null (an empty cell always"
                                    + " is).");

    /** CSV files: lines starting with this character are skipped. */
    public static final ConfigOption<String> CSV_COMMENT =
            key("csv-comment")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("CSV files: lines starting with this character are skipped.");

    /** The scalar top-level options with their parsers. */
    public static final OptionSet SET =
            OptionSet.builder("flows file")
                    .add(
                            NAME,
                            OptionParsers.parsing(
                                    NAME.key(),
                                    "a job name: letters, digits, '.', '_' and '-', starting with a"
                                            + " letter or digit (it names the job's state folder)",
                                    IngestOptions::checkName))
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
                            KAFKA_READERS,
                            OptionParsers.intRange(
                                    KAFKA_READERS.key(), 1, Short.MAX_VALUE, "subtasks"))
                    .add(
                            FILE_READERS,
                            OptionParsers.intRange(
                                    FILE_READERS.key(), 1, Short.MAX_VALUE, "subtasks"))
                    .add(
                            MAX_RECORD_BYTES,
                            OptionParsers.intRange(
                                    MAX_RECORD_BYTES.key(), 1, Integer.MAX_VALUE, "bytes"))
                    .add(INCLUDE_EXISTING_FILES, OptionParsers.bool(INCLUDE_EXISTING_FILES.key()))
                    .add(MAX_FILES_PER_TRIGGER, maxFilesPerTrigger(MAX_FILES_PER_TRIGGER.key()))
                    .add(CSV_HEADER, OptionParsers.bool(CSV_HEADER.key()))
                    .add(CSV_SEPARATOR, oneCharacter(CSV_SEPARATOR.key()))
                    .add(CSV_QUOTE, oneCharacter(CSV_QUOTE.key()))
                    .add(CSV_ESCAPE, oneCharacter(CSV_ESCAPE.key()))
                    .add(CSV_NULL_VALUE, OptionParsers.text(CSV_NULL_VALUE.key()))
                    .add(CSV_COMMENT, oneCharacter(CSV_COMMENT.key()))
                    .build();

    /** A text of exactly one character that is no line break (the CSV options). */
    private static dev.changeflow.operators.options.OptionParser<String> oneCharacter(String key) {
        return OptionParsers.parsing(
                key,
                "one character (not a line break)",
                text -> {
                    if (text.length() != 1 || text.equals("\n") || text.equals("\r")) {
                        throw new IllegalArgumentException("not one character");
                    }
                    return text;
                });
    }

    private static Duration atLeast(String text, String key, Duration min, String minText) {
        Duration d = OptionParsers.duration(text, key);
        if (d.compareTo(min) < 0) {
            throw new IllegalArgumentException(key + " below " + minText + ": " + text);
        }
        return d;
    }
}
