package dev.changeflow.sources.cdf;

import dev.changeflow.operators.options.InvalidOptionValueException;
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionParser;
import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.operators.options.OptionSet;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.operators.options.ResolvedOptions;
import dev.changeflow.operators.options.UnknownOptionsException;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.util.TimeUtils;
import org.apache.flink.util.function.SerializableFunction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Every option of the change data feed — batch (F3, F4), streaming (F6, F7) and SQL — as one {@link
 * ConfigOption} constant each (kebab-case key, type, default, description), collected with their
 * parsers in the {@link OptionSet} {@link #SET}, and the one function that reads them from a string
 * map: {@link #resolve(String, Map)}, through the project's one {@link OptionsResolver}. The Java
 * builders ({@code TableChanges.Builder#options}, {@code ChangeFeedSource.Builder#options}), the
 * SQL table factory ({@code t$changes} hints) and the jobs read options only through it.
 *
 * <p>To add an option: declare it here with {@link #declare} (its parser and the values it
 * accepts), document it in README's change-feed tables ({@code ChangeFeedOptionsReadmeTest} checks
 * them), then use it where the feed reads it ({@link ChangeFeedSettings#get}).
 */
@PublicEvolving
public final class ChangeFeedOptions {

    /** The options with their parsers, collected in declaration order by {@link #declare}. */
    private static final OptionSet.Builder DECLARING = OptionSet.builder("change feed");

    private static final List<ConfigOption<?>> DECLARED = new ArrayList<>();

    /** The {@code starting-version} value that starts after the latest commit (F6, streams). */
    public static final String LATEST = "latest";

    public static final ConfigOption<Long> STARTING_VERSION =
            declare(
                    ConfigOptions.key("starting-version")
                            .longType()
                            .noDefaultValue()
                            .withDescription(
                                    "First version (Iceberg snapshot sequence number on main) to read, inclusive. "
                                            + "A version between two commits starts at the next commit. A stream "
                                            + "also accepts 'latest': only versions committed after it is built."),
                    ChangeFeedOptions::parseStartingVersion,
                    "a version or 'latest'. Versions are integers >= 0; 'latest' (streaming reads) starts "
                            + "after the latest commit");

    public static final ConfigOption<String> STARTING_TIMESTAMP =
            declare(
                    ConfigOptions.key("starting-timestamp")
                            .stringType()
                            .noDefaultValue()
                            .withDescription(
                                    "Read from the first commit at or after this time: "
                                            + "yyyy-MM-dd[ HH:mm:ss[.SSS]] with an optional offset; no offset means UTC."),
                    value -> value,
                    "a timestamp");

    public static final ConfigOption<Long> ENDING_VERSION =
            declare(
                    ConfigOptions.key("ending-version")
                            .longType()
                            .noDefaultValue()
                            .withDescription(
                                    "Last version to read, inclusive. Default: the latest version."),
                    ChangeFeedOptions::parseLong,
                    "a version. Versions are integers >= 0");

    public static final ConfigOption<String> ENDING_TIMESTAMP =
            declare(
                    ConfigOptions.key("ending-timestamp")
                            .stringType()
                            .noDefaultValue()
                            .withDescription(
                                    "Read up to the last commit at or before this time (same format)."),
                    value -> value,
                    "a timestamp");

    public static final ConfigOption<Boolean> TIMESTAMP_OUT_OF_RANGE_ENABLED =
            declare(
                    ConfigOptions.key("timestamp-out-of-range.enabled")
                            .booleanType()
                            .defaultValue(false)
                            .withDescription(
                                    "When true, a start after the latest commit gives an empty result and an end "
                                            + "after the latest commit reads to the latest version, instead of failing."),
                    ChangeFeedOptions::parseBoolean,
                    "a boolean. Use 'true' or 'false'");

    public static final ConfigOption<Duration> MONITOR_INTERVAL =
            declare(
                    ConfigOptions.key("monitor-interval")
                            .durationType()
                            .defaultValue(Duration.ofSeconds(10))
                            .withDescription(
                                    "How often the stream looks for new versions of the table's main branch."),
                    TimeUtils::parseDuration,
                    "a duration (for example '10 s' or '500 ms')");

    public static final ConfigOption<Integer> MAX_FILES_PER_CYCLE =
            declare(
                    ConfigOptions.key("max-files-per-cycle")
                            .intType()
                            .defaultValue(Integer.MAX_VALUE)
                            .withDescription(
                                    "Most data and delete files (added or removed) admitted per planning cycle. Whole "
                                            + "versions are admitted: a larger version is admitted alone, a deferred "
                                            + "version blocks later ones. The initial snapshot may be split."),
                    value -> Integer.valueOf(value.trim()),
                    "a number of files (an integer from 1 to " + Integer.MAX_VALUE + ")");

    public static final ConfigOption<Long> MAX_BYTES_PER_CYCLE =
            declare(
                    ConfigOptions.key("max-bytes-per-cycle")
                            .longType()
                            .defaultValue(Long.MAX_VALUE)
                            .withDescription(
                                    "Most bytes of data and delete files admitted per planning cycle, whole versions "
                                            + "as for max-files-per-cycle."),
                    ChangeFeedOptions::parseLong,
                    "a number of bytes (an integer >= 1)");

    public static final ConfigOption<MemorySize> DELETE_FILE_CACHE_SIZE =
            declare(
                    ConfigOptions.key("delete-file-cache-size")
                            .memoryType()
                            .defaultValue(MemorySize.ofMebiBytes(64))
                            .withDescription(
                                    "Heap a reader may keep loaded delete files in (estimated bytes, least "
                                            + "recently used evicted first), so later versions do not parse them "
                                            + "again; a file estimated over half of it is read uncached. '0' turns "
                                            + "the cache off. One cache per batch read, per streaming reader subtask."),
                    MemorySize::parse,
                    "a size (for example '64 mb', '256 kb', or '0' for no cache)");

    public static final ConfigOption<StartMode> START_MODE =
            declare(
                    ConfigOptions.key("start-mode")
                            .enumType(StartMode.class)
                            .noDefaultValue()
                            .withDescription(
                                    "Whether the table's rows as of the version before the first one read come "
                                            + "first, as inserts: 'snapshot-then-changes' (the default of changelog "
                                            + "reads, G1) or 'changes-only'. Without it a change-feed stream starts "
                                            + "as F6 says: the current snapshot first only without a starting "
                                            + "position."),
                    StartMode::parse,
                    "one of " + StartMode.allowed());

    public static final ConfigOption<Boolean> BOUNDED =
            declare(
                    ConfigOptions.key("bounded")
                            .booleanType()
                            .defaultValue(false)
                            .withDescription(
                                    "Available-now: read up to the version that is latest when the stream is built, "
                                            + "then finish."),
                    ChangeFeedOptions::parseBoolean,
                    "a boolean. Use 'true' or 'false'");

    public static final ConfigOption<String> CONSUMER_ID =
            declare(
                    ConfigOptions.key("consumer-id")
                            .stringType()
                            .noDefaultValue()
                            .withDescription(
                                    "Registers the stream as a consumer of the table (F7), so that changeflow's "
                                            + "snapshot expiry keeps the versions it still needs."),
                    value -> value,
                    "a consumer id");

    public static final ConfigOption<Boolean> READ_CHANGE_FEED =
            declare(
                    ConfigOptions.key("read-change-feed")
                            .booleanType()
                            .defaultValue(false)
                            .withDescription(
                                    "Read the table's change data feed. Implied by the table name t$changes; on "
                                            + "the table t itself it is rejected (Flink fixes a table's columns before "
                                            + "hints apply), read t$changes instead."),
                    ChangeFeedOptions::parseBoolean,
                    "a boolean. Use 'true' or 'false'");

    /** Every option of the change feed, in declaration order. */
    public static final List<ConfigOption<?>> ALL = List.copyOf(DECLARED);

    /**
     * Every option of the change feed with its parser, for {@link OptionsResolver}. The resolved
     * value of {@link #STARTING_VERSION} is a {@link Long} or the text {@link #LATEST}: read it
     * through {@link ChangeFeedSettings}.
     */
    public static final OptionSet SET = DECLARING.build();

    /** Table property of changeflow's own tables: equality-delete files hold complete rows. */
    public static final String EQ_DELETES_CARRY_ROWS = "changeflow.eq-deletes-carry-rows";

    /**
     * Snapshot summary property of changeflow's changelog sink (its uid suffix): the rows carried
     * by equality-delete files are trusted only in snapshots whose retained ancestry was written by
     * that one writer alone (F2). The same key as the sinks' {@code
     * StreamingTables.CHANGELOG_WRITER}.
     */
    public static final String CHANGELOG_WRITER = "changeflow.changelog-writer";

    /**
     * Table property set by {@code ChangeFeedExpiry} when it expires snapshots whose ancestry holds
     * another writer's commits: the carried rows of later versions stay untrusted although those
     * commits are no longer in the metadata (F2).
     */
    public static final String OTHER_WRITER_COMMITS_EXPIRED =
            "changeflow.other-writer-commits-expired";

    /**
     * Table property set by {@code ChangeFeedExpiry} before it expires snapshots whose ancestry one
     * changelog writer alone committed: that writer's {@link #CHANGELOG_WRITER} value (empty when
     * no expired commit changed rows). Where expiry cut a snapshot's ancestry, the expired part
     * counts as this writer's; without the property (expiry by another tool, or by a changeflow
     * release before it existed) it counts as another writer's, so carried rows are not trusted
     * (F2).
     */
    public static final String EXPIRED_HISTORY_WRITER = "changeflow.expired-history-writer";

    /**
     * The values of {@link #START_MODE} (G1): where a stream starts relative to its first version
     * N.
     */
    @PublicEvolving
    public enum StartMode {
        /** The table as of version N − 1 as inserts ({@code +I}), then the changes from N. */
        SNAPSHOT_THEN_CHANGES("snapshot-then-changes"),
        /** Only the changes from N. */
        CHANGES_ONLY("changes-only");

        private final String value;

        StartMode(String value) {
            this.value = value;
        }

        /** The option value, as written in options and hints. */
        public String value() {
            return value;
        }

        @Override
        public String toString() {
            return value;
        }

        /**
         * The mode written as {@code value} (case-insensitive).
         *
         * @throws IllegalArgumentException for any other text
         */
        static StartMode parse(String value) {
            for (StartMode mode : values()) {
                if (mode.value.equalsIgnoreCase(value.trim())) {
                    return mode;
                }
            }
            throw new IllegalArgumentException(value);
        }

        /** The accepted values, quoted: {@code 'snapshot-then-changes', 'changes-only'}. */
        static String allowed() {
            StringBuilder out = new StringBuilder();
            for (StartMode mode : values()) {
                out.append(out.length() == 0 ? "" : ", ")
                        .append('\'')
                        .append(mode.value)
                        .append('\'');
            }
            return out.toString();
        }
    }

    private ChangeFeedOptions() {}

    /**
     * Reads {@code options} (every key one of {@link #ALL}) into typed settings.
     *
     * @param table the table's name, for messages
     * @throws CdfException {@code INVALID_CDC_OPTIONS} for an unknown key, or a value its option
     *     does not accept (the message names the option, the value and what is allowed)
     */
    public static ChangeFeedSettings resolve(String table, Map<String, String> options) {
        return resolve(table, options, ALL, Set.of());
    }

    /**
     * Reads the options among {@code options} that are in {@code accepted} into typed settings;
     * keys in {@code ignored} (for SQL: the table's own properties and Iceberg's connector keys)
     * are left out, any other key is an error.
     *
     * @param table the table's name, for messages
     * @throws CdfException {@code INVALID_CDC_OPTIONS} for a key neither accepted nor ignored
     *     (naming the accepted keys), or a value its option does not accept (naming the option, the
     *     value and what is allowed)
     */
    public static ChangeFeedSettings resolve(
            String table,
            Map<String, String> options,
            Collection<ConfigOption<?>> accepted,
            Set<String> ignored) {
        OptionSet set = accepted.equals(ALL) ? SET : SET.select(accepted);
        Map<String, Object> given = new LinkedHashMap<>();
        Map<String, String> raw = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (set.keys().contains(e.getKey())) {
                raw.put(e.getKey(), e.getValue());
                given.put(e.getKey(), e.getValue());
            } else if (!ignored.contains(e.getKey())) {
                given.put(e.getKey(), e.getValue());
            }
        }
        ResolvedOptions resolved;
        try {
            resolved =
                    OptionsResolver.resolve(
                            set, List.of(OptionLayer.of(OptionSource.DEFINITION, table, given)));
        } catch (UnknownOptionsException unknown) {
            throw new CdfException(
                    CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                    String.format(
                            "Unknown option%s %s for the change feed of table %s. Accepted options: %s.",
                            unknown.unknownKeys().size() > 1 ? "s" : "",
                            UnknownOptionsException.quoted(unknown.unknownKeys()),
                            table,
                            UnknownOptionsException.quoted(unknown.knownKeys())));
        } catch (IllegalArgumentException bad) {
            if (bad.getCause() instanceof InvalidOptionValueException) {
                InvalidOptionValueException v = (InvalidOptionValueException) bad.getCause();
                throw new CdfException(
                        CdfException.ErrorCode.INVALID_CDC_OPTIONS,
                        String.format(
                                "'%s' = '%s' for the change feed of table %s is not %s.",
                                v.key(), v.value(), table, v.allowed()));
            }
            throw new CdfException(CdfException.ErrorCode.INVALID_CDC_OPTIONS, bad.getMessage());
        }
        Map<String, Object> values = new LinkedHashMap<>();
        for (ConfigOption<?> option : set.options().values()) {
            if (resolved.isSet(option)) {
                values.put(option.key(), resolved.get(option));
            }
        }
        return new ChangeFeedSettings(table, raw, values);
    }

    /**
     * Declares {@code option} with how its value is read ({@code parse} throws on a value it does
     * not accept) and what it accepts ({@code allowed}, completing "is not ..." in the error
     * message). {@code parse} may return another type than the option's only for {@link
     * #STARTING_VERSION} ({@link #LATEST}).
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static <T> ConfigOption<T> declare(
            ConfigOption<T> option, SerializableFunction<String, ?> parse, String allowed) {
        OptionParser parser = OptionParsers.parsing(option.key(), allowed, parse);
        DECLARING.add(option, (OptionParser<T>) parser);
        DECLARED.add(option);
        return option;
    }

    private static Object parseStartingVersion(String value) {
        return LATEST.equalsIgnoreCase(value.trim()) ? LATEST : parseLong(value);
    }

    private static Long parseLong(String value) {
        return Long.parseLong(value.trim());
    }

    private static Boolean parseBoolean(String value) {
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new IllegalArgumentException(value);
        }
    }
}
