package dev.changeflow.jobs.cli;

import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.sinks.iceberg.CatalogOptions;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;

import org.apache.iceberg.Table;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import javax.annotation.Nullable;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * The picocli options several commands repeat, declared once as {@link Mixin}s: the same names,
 * defaults and help text in every command that mixes them in.
 */
public final class CliOptions {
    private CliOptions() {}

    /**
     * {@code --warehouse DIR} (default {@code warehouse}) of the commands that read or write tables
     * only: {@code demo}, {@code expire}, {@code show}, {@code sql}.
     */
    public static final class Warehouse {
        /** The local warehouse folder (Hadoop catalog), as given (relative to the working dir). */
        @Option(
                names = "--warehouse",
                paramLabel = "DIR",
                defaultValue = "warehouse",
                description = "Local warehouse folder. Default: ${DEFAULT-VALUE}.")
        public Path warehouse;
    }

    /**
     * {@code --warehouse DIR} (default {@code warehouse}; also the root of the saved state) and
     * {@code --from-scratch} of the commands that run a local ingest job: {@code ingest}, {@code
     * run}.
     */
    public static final class LocalRun {
        /** The local warehouse folder and checkpoint root, as given. */
        @Option(
                names = "--warehouse",
                paramLabel = "DIR",
                defaultValue = "warehouse",
                description =
                        "Local Iceberg warehouse folder (Hadoop catalog) and checkpoint root. Default: ${DEFAULT-VALUE}.")
        public Path warehouse;

        /** Drop the target tables and the saved state before the run. */
        @Option(
                names = "--from-scratch",
                description = "Drop the target tables and the saved state first.")
        public boolean fromScratch;
    }

    /**
     * The catalog a command opens: the local Hadoop catalog in {@code warehouse}, or, when {@code
     * --catalog KEY=VALUE} properties are given, the catalog they describe (checked by {@link
     * CatalogOptions}).
     *
     * @param name the catalog's name in the job
     * @throws IllegalArgumentException naming the {@code --catalog} property that is wrong
     */
    static CatalogSettings catalogSettings(
            Path warehouse, @Nullable Map<String, String> catalog, String name) {
        return catalog == null || catalog.isEmpty()
                ? CatalogSettings.localHadoop(warehouse.toAbsolutePath())
                : CatalogSettings.of(name, CatalogOptions.fromFlags("--catalog", catalog));
    }

    /**
     * The snapshot-expiry options of {@code expire} and {@code maintain --expire}: {@code
     * --older-than}, {@code --retain-last}, {@code --consumer-expiry} (F7).
     */
    public static final class Expiry {
        @Option(
                names = "--older-than",
                paramLabel = "AGE|TIME",
                description =
                        "Expire snapshots committed before now minus AGE (e.g. 5d, 12h, 30m, PT90M) or before TIME "
                                + "(yyyy-MM-dd[ HH:mm:ss], UTC, or an ISO instant). Default: the table's history.expire.max-snapshot-age-ms (5 days).")
        String olderThan;

        @Option(
                names = "--retain-last",
                paramLabel = "N",
                description =
                        "Always keep the last N snapshots. Default: the table's history.expire.min-snapshots-to-keep (1).")
        Integer retainLast;

        @Option(
                names = "--consumer-expiry",
                paramLabel = "AGE",
                defaultValue = DEFAULT_CONSUMER_EXPIRY,
                description =
                        "Consumers not updated for AGE are reported and ignored. Default: ${DEFAULT-VALUE}.")
        String consumerExpiry;

        /** The default of {@code --consumer-expiry}. */
        static final String DEFAULT_CONSUMER_EXPIRY = "7d";

        /** {@code --consumer-expiry} as a duration. */
        Duration consumerExpiryDuration() {
            return OptionParsers.duration(consumerExpiry, "--consumer-expiry");
        }

        /**
         * Parses {@code --consumer-expiry} and {@code --older-than}, so that a command can refuse a
         * malformed value before it changes anything (as {@code maintain} does before its
         * compaction).
         *
         * @throws IllegalArgumentException naming the option whose value does not parse
         */
        void check(Instant now) {
            consumerExpiryDuration();
            if (olderThan != null) {
                ExpireCommand.instant(olderThan, now);
            }
        }

        /**
         * The expiry of {@code table} these options describe.
         *
         * @throws IllegalArgumentException naming the option whose value does not parse
         */
        ChangeFeedExpiry.Builder expiry(Table table, Instant now) {
            ChangeFeedExpiry.Builder expiry =
                    ChangeFeedExpiry.forTable(table).consumerExpiry(consumerExpiryDuration());
            if (olderThan != null) {
                expiry.olderThan(ExpireCommand.instant(olderThan, now));
            }
            if (retainLast != null) {
                expiry.retainLast(retainLast);
            }
            return expiry;
        }
    }
}
