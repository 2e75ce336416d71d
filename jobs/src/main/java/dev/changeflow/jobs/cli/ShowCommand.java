package dev.changeflow.jobs.cli;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.util.SnapshotUtil;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code changeflow show}: prints a table's rows (CSV with a header, NULL as an empty field) or its
 * row count, at the current version or as of an earlier one ({@code --as-of-version} = an Iceberg
 * snapshot sequence number of the main branch, the change feed's {@code _commit_version}).
 */
@Command(
        name = "show",
        mixinStandardHelpOptions = true,
        description = "Print a table's rows or row count, optionally as of a version.")
public final class ShowCommand implements Callable<Integer> {
    @Parameters(
            index = "0",
            paramLabel = "TABLE",
            description = "namespace.table, e.g. public.pgbench_accounts")
    String table;

    @Mixin CliOptions.Warehouse local;

    @Option(
            names = "--catalog",
            paramLabel = "KEY=VALUE",
            description = "Iceberg catalog property; replaces the local Hadoop catalog.")
    Map<String, String> catalog;

    @Option(names = "--count", description = "Print only the number of rows.")
    boolean count;

    @Option(
            names = "--limit",
            paramLabel = "N",
            defaultValue = "20",
            description = "Rows to print (0 = all). Default: ${DEFAULT-VALUE}.")
    int limit;

    @Option(
            names = "--as-of-version",
            paramLabel = "V",
            description = "Read the table as of this version (snapshot sequence number).")
    Long asOfVersion;

    @Option(
            names = "--history",
            description =
                    "List the table's versions (sequence number, snapshot id, time, operation, summary).")
    boolean history;

    /**
     * Whether the catalog has table {@code id}; a namespace that does not exist (or a warehouse
     * folder that does not exist) means no, not an error.
     */
    private static boolean exists(Catalog cat, TableIdentifier id) {
        try {
            return cat.tableExists(id);
        } catch (NoSuchNamespaceException e) {
            return false;
        }
    }

    @Override
    public Integer call() throws Exception {
        CatalogSettings settings =
                catalog == null || catalog.isEmpty()
                        ? CatalogSettings.localHadoop(local.warehouse.toAbsolutePath())
                        : CatalogSettings.of("changeflow", catalog);
        Catalog cat = settings.open();
        TableIdentifier id = TableIdentifier.parse(table);
        if (!exists(cat, id)) {
            List<String> known = new ArrayList<>();
            if (cat instanceof SupportsNamespaces) {
                try {
                    for (Namespace ns : ((SupportsNamespaces) cat).listNamespaces()) {
                        cat.listTables(ns).forEach(t -> known.add(t.toString()));
                    }
                } catch (NoSuchNamespaceException e) {
                    // a warehouse folder that does not exist (yet) has no namespace: no tables
                }
            }
            throw CliErrors.tableNotFound(
                    id,
                    settings.name(),
                    (known.isEmpty()
                            ? " (it has no tables; check --warehouse)"
                            : "; tables: " + String.join(", ", known)));
        }
        if (limit < 0) {
            throw new IllegalArgumentException("--limit must be 0 (all) or more, got " + limit);
        }
        Table t = cat.loadTable(id);
        if (count && history) {
            throw new IllegalArgumentException("--count and --history do not go together");
        }
        if (history) {
            if (t.currentSnapshot() == null) {
                System.out.println("(" + id + " has no versions yet)");
                return 0;
            }
            System.out.println(
                    "version,snapshot_id,committed_at,operation,added_records,deleted_records,checkpoint");
            for (Snapshot s : SnapshotUtil.currentAncestors(t)) {
                Map<String, String> m = s.summary();
                System.out.printf(
                        "%d,%d,%s,%s,%s,%s,%s%n",
                        s.sequenceNumber(),
                        s.snapshotId(),
                        Instant.ofEpochMilli(s.timestampMillis()),
                        s.operation(),
                        m.getOrDefault("added-records", "0"),
                        m.getOrDefault("deleted-records", "0"),
                        m.getOrDefault("flink.max-committed-checkpoint-id", ""));
            }
            return 0;
        }
        List<Record> rows =
                asOfVersion == null
                        ? TableRows.read(t)
                        : TableRows.readSnapshot(t, snapshotAtVersion(t, asOfVersion));
        if (count) {
            System.out.println(rows.size());
            return 0;
        }
        TableRows.sortByIdentifierFields(t.schema(), rows);
        System.out.println(TableRows.header(t.schema()));
        int n = 0;
        for (Record r : rows) {
            if (limit > 0 && n++ >= limit) {
                System.out.printf(
                        "... %,d more rows (use --limit 0 for all)%n", rows.size() - limit);
                break;
            }
            System.out.println(line(r));
        }
        return 0;
    }

    /**
     * One row as a CSV line like {@link TableRows#toCsvLine}, except that binary values holding
     * UTF-8 text (a quarantined record's {@code raw} bytes) are printed as that text.
     */
    static String line(Record r) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < r.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            Object v = r.get(i);
            String text = v instanceof ByteBuffer ? utf8((ByteBuffer) v) : null;
            b.append(text != null ? TableRows.formatValue(text) : TableRows.formatValue(v));
        }
        return b.toString();
    }

    private static String utf8(ByteBuffer buf) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(buf.duplicate())
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /**
     * The snapshot of the main branch whose sequence number is {@code version}.
     *
     * @throws IllegalArgumentException naming the available versions when none matches
     */
    static long snapshotAtVersion(Table t, long version) {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (Snapshot s : SnapshotUtil.currentAncestors(t)) {
            if (s.sequenceNumber() == version) {
                return s.snapshotId();
            }
            min = Math.min(min, s.sequenceNumber());
            max = Math.max(max, s.sequenceNumber());
        }
        throw new IllegalArgumentException(
                "table "
                        + t.name()
                        + " has no version "
                        + version
                        + (min == Long.MAX_VALUE
                                ? " (it has no snapshot yet)"
                                : "; available versions: " + min + ".." + max));
    }
}
