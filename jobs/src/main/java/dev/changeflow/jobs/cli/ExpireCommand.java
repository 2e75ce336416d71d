package dev.changeflow.jobs.cli;

import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.cdf.retention.ChangeFeedExpiry;
import dev.changeflow.sources.cdf.retention.ExpiryReport;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;

/**
 * {@code changeflow expire --table db.t}: changeflow's snapshot expiry ({@link ChangeFeedExpiry},
 * F7): Iceberg's expire-snapshots, except that snapshots live change-feed consumers still need are
 * kept; prints the {@link ExpiryReport} (expired versions as ranges, oldest retained version, live
 * and stale consumers, deleted files).
 */
@Command(
        name = "expire",
        mixinStandardHelpOptions = true,
        description =
                "Expire old snapshots of a table, keeping those its change-feed consumers still need.")
public final class ExpireCommand implements Callable<Integer> {
    private static final Pattern AGE = Pattern.compile("(\\d+\\s*[a-z]*|p.*)");

    @Option(
            names = "--table",
            paramLabel = "TABLE",
            required = true,
            description = "namespace.table, e.g. public.pgbench_accounts")
    String table;

    @Mixin CliOptions.Expiry options;

    @Mixin CliOptions.Warehouse local;

    @Option(
            names = "--catalog",
            paramLabel = "KEY=VALUE",
            description = "Iceberg catalog property; replaces the local Hadoop catalog.")
    Map<String, String> catalog;

    @Override
    public Integer call() {
        CatalogSettings settings =
                CliOptions.catalogSettings(local.warehouse, catalog, "changeflow");
        Catalog cat = settings.open();
        TableIdentifier id = TableIdentifier.parse(table);
        if (!cat.tableExists(id)) {
            throw CliErrors.tableNotFound(id, settings.name(), " (check --warehouse)");
        }
        Table t = cat.loadTable(id);
        System.out.println(options.expiry(t, Instant.now()).execute().describe());
        return 0;
    }

    /** An age before {@code now} or a point in time (UTC when no offset is given). */
    static Instant instant(String text, Instant now) {
        String s = text.trim();
        if (AGE.matcher(s.toLowerCase(Locale.ROOT)).matches()) {
            return now.minus(OptionParsers.duration(s, "--older-than"));
        }
        try {
            if (s.length() == 10) {
                return LocalDate.parse(s).atStartOfDay().toInstant(ZoneOffset.UTC);
            }
            if (s.contains("T") && (s.endsWith("Z") || s.matches(".*[+-]\\d\\d:\\d\\d$"))) {
                return OffsetDateTime.parse(s).toInstant();
            }
            return LocalDateTime.parse(s.replace(' ', 'T')).toInstant(ZoneOffset.UTC);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "--older-than takes an age (7d, 12h, PT90M) or a time (yyyy-MM-dd[ HH:mm:ss] UTC, or an ISO instant), got '"
                            + text
                            + "'");
        }
    }
}
