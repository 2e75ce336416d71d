package dev.changeflow.jobs.sql;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlStatement.Schedule;
import dev.changeflow.operators.Expectation;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTables;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * What {@code DESCRIBE TABLE [EXTENDED] t} and {@code DROP TABLE [IF EXISTS] t} of a pipeline file
 * do, and the record of a table's last refresh that DESCRIBE prints (docs/semantics.md S9).
 *
 * <p><b>The last refresh</b> of a streaming table is kept in the Iceberg table's properties,
 * written in one property commit per table when a refresh of {@code run} ends ({@link
 * RefreshRecord}):
 *
 * <ul>
 *   <li>{@code changeflow.last-refresh.start}, {@code .end}: ISO-8601 instants (UTC, as {@link
 *       Instant#toString()}) of the refresh's start (before a full refresh empties the table) and
 *       end;
 *   <li>{@code .full}: {@code true} for a full refresh, else {@code false};
 *   <li>{@code .records}: the records the refresh's job read, as its {@code Done in ...} summary
 *       line counts them (all tables of the job together; 0 when there was nothing new; for the job
 *       of AUTO CDC FROM SNAPSHOT tables, A6, the snapshots it applied); absent after a failed
 *       refresh;
 *   <li>{@code .versions}: the Iceberg snapshots the refresh committed to this table (the ancestors
 *       of its current snapshot after the one current at the start; a full refresh's delete commit
 *       included);
 *   <li>{@code .status}: {@code SUCCEEDED} or {@code FAILED};
 *   <li>{@code .error}: the failure's message (at most {@value #MAX_ERROR_CHARS} characters);
 *       absent after a success.
 * </ul>
 *
 * The properties commit writes a new table metadata version but no snapshot: readers, the change
 * feed and the next run see the same data.
 */
@PublicEvolving
public final class TableStatements {
    /** Prefix of the last-refresh table properties. */
    public static final String LAST_REFRESH = "changeflow.last-refresh.";

    public static final String START = LAST_REFRESH + "start";
    public static final String END = LAST_REFRESH + "end";
    public static final String FULL = LAST_REFRESH + "full";
    public static final String RECORDS = LAST_REFRESH + "records";
    public static final String VERSIONS = LAST_REFRESH + "versions";
    public static final String STATUS = LAST_REFRESH + "status";
    public static final String ERROR = LAST_REFRESH + "error";

    /** The longest error message recorded. */
    public static final int MAX_ERROR_CHARS = 2000;

    private TableStatements() {}

    /**
     * A refresh being recorded: the tables it writes and their current snapshots at its start.
     * {@link #succeeded} or {@link #failed} writes the last-refresh properties of each of those
     * tables that exists at the end.
     */
    public static final class RefreshRecord {
        private final Instant start;
        private final boolean full;
        private final Map<TableIdentifier, Long> before = new LinkedHashMap<>();

        private RefreshRecord(Instant start, boolean full) {
            this.start = start;
            this.full = full;
        }

        /**
         * Notes the start of a refresh of {@code tables} (now) and their current snapshot ids.
         *
         * @param full whether it is a full refresh
         */
        public static RefreshRecord start(
                Catalog catalog, List<TableIdentifier> tables, boolean full) {
            RefreshRecord r = new RefreshRecord(Instant.now(), full);
            for (TableIdentifier id : tables) {
                Long current = null;
                if (catalog.tableExists(id)) {
                    Snapshot s = catalog.loadTable(id).currentSnapshot();
                    current = s == null ? null : s.snapshotId();
                }
                r.before.put(id, current);
            }
            return r;
        }

        /** A refresh's work: runs it and returns the records its job read. */
        @FunctionalInterface
        public interface Work {
            long run() throws Exception;
        }

        /**
         * Runs {@code work} as a recorded refresh of {@code tables} (S9): notes their current
         * snapshots, runs it, then writes the last-refresh properties of each table that exists —
         * {@code SUCCEEDED} with the records it returned, or {@code FAILED} with the error it threw
         * — except a {@code FLOW_CHANGED_FOR_EXISTING_STATE} or {@code TARGET_SCHEMA_MISMATCH} (A1,
         * e.g. a changed partitioning) refusal that committed no snapshot, which is not recorded (a
         * validation error writes nothing, S1). The catalog is opened for the start and again for
         * the end (a refresh runs for a long time), and closed each time.
         *
         * @param full whether it is a full refresh
         * @return the records {@code work} returned
         * @throws Exception what {@code work} threw, after it is recorded (an error recording it is
         *     added as suppressed)
         */
        public static long record(
                CatalogSettings catalog, List<TableIdentifier> tables, boolean full, Work work)
                throws Exception {
            RefreshRecord r = withCatalog(catalog, c -> start(c, tables, full));
            long records;
            try {
                records = work.run();
            } catch (Exception e) {
                try {
                    withCatalog(
                            catalog,
                            c -> {
                                if (!r.refusedBeforeWriting(c, e)) {
                                    r.failed(c, e);
                                }
                                return null;
                            });
                } catch (Exception recording) {
                    e.addSuppressed(recording);
                }
                throw e;
            }
            withCatalog(
                    catalog,
                    c -> {
                        r.succeeded(c, records);
                        return null;
                    });
            return records;
        }

        private static <T> T withCatalog(
                CatalogSettings settings, java.util.function.Function<Catalog, T> action)
                throws IOException {
            Catalog c = settings.open();
            try {
                return action.apply(c);
            } finally {
                if (c instanceof Closeable closeable) {
                    closeable.close();
                }
            }
        }

        /** Records a refresh that ended normally, its job having read {@code records} records. */
        public void succeeded(Catalog catalog, long records) {
            write(catalog, "SUCCEEDED", records, null);
        }

        /**
         * Whether {@code error} is a refusal of the definition found before the job started ({@code
         * FLOW_CHANGED_FOR_EXISTING_STATE}, K8; {@code TARGET_SCHEMA_MISMATCH}, A1) and no table
         * got a snapshot since the start: such a run is a validation error and writes nothing, not
         * even its record (S1, issue #13).
         */
        boolean refusedBeforeWriting(Catalog catalog, Throwable error) {
            if (!(error instanceof dev.changeflow.operators.AutoCdcException a)
                    || (a.code()
                                    != dev.changeflow.operators.AutoCdcException.Code
                                            .FLOW_CHANGED_FOR_EXISTING_STATE
                            && a.code()
                                    != dev.changeflow.operators.AutoCdcException.Code
                                            .TARGET_SCHEMA_MISMATCH)) {
                return false;
            }
            for (Map.Entry<TableIdentifier, Long> e : before.entrySet()) {
                if (catalog.tableExists(e.getKey())) {
                    Snapshot now = catalog.loadTable(e.getKey()).currentSnapshot();
                    Long id = now == null ? null : now.snapshotId();
                    if (!Objects.equals(id, e.getValue())) {
                        return false;
                    }
                } else if (e.getValue() != null) {
                    return false;
                }
            }
            return true;
        }

        /** Records a refresh that failed with {@code error}. */
        public void failed(Catalog catalog, Throwable error) {
            write(catalog, "FAILED", null, message(error));
        }

        private void write(
                Catalog catalog, String status, @Nullable Long records, @Nullable String error) {
            String end = Instant.now().toString();
            for (Map.Entry<TableIdentifier, Long> e : before.entrySet()) {
                if (!catalog.tableExists(e.getKey())) {
                    continue;
                }
                Table t = catalog.loadTable(e.getKey());
                UpdateProperties u =
                        t.updateProperties()
                                .set(START, start.toString())
                                .set(END, end)
                                .set(FULL, Boolean.toString(full))
                                .set(VERSIONS, Long.toString(versionsSince(t, e.getValue())))
                                .set(STATUS, status);
                if (records != null) {
                    u.set(RECORDS, Long.toString(records));
                } else {
                    u.remove(RECORDS);
                }
                if (error != null) {
                    u.set(ERROR, error);
                } else {
                    u.remove(ERROR);
                }
                u.commit();
            }
        }
    }

    /**
     * The snapshots of {@code table}'s current ancestry after {@code before}: all of them when
     * {@code before} is null or not an ancestor (the table was created, or dropped and created
     * again, since).
     */
    static long versionsSince(Table table, @Nullable Long before) {
        long n = 0;
        Snapshot s = table.currentSnapshot();
        while (s != null) {
            if (before != null && s.snapshotId() == before) {
                return n;
            }
            n++;
            s = s.parentId() == null ? null : table.snapshot(s.parentId());
        }
        return n;
    }

    /** The message recorded for a failure: the CLI's first error line, shortened. */
    static String message(Throwable error) {
        Throwable root = error;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String m = error.getMessage() != null ? error.getMessage() : error.toString();
        if (root != error && root.getMessage() != null && !m.contains(root.getMessage())) {
            m = m + " (cause: " + root + ")";
        }
        return m.length() <= MAX_ERROR_CHARS ? m : m.substring(0, MAX_ERROR_CHARS - 3) + "...";
    }

    /**
     * The last refresh recorded in a table's properties ({@link RefreshRecord}).
     *
     * @param records null when not recorded (a failed refresh)
     * @param error null after a success
     */
    public record LastRefresh(
            String start,
            String end,
            boolean full,
            @Nullable Long records,
            long versions,
            String status,
            @Nullable String error) {

        /** The record in {@code table}'s properties; null when none was written. */
        @Nullable
        public static LastRefresh of(Table table) {
            Map<String, String> p = table.properties();
            if (!p.containsKey(STATUS)) {
                return null;
            }
            return new LastRefresh(
                    p.get(START),
                    p.get(END),
                    Boolean.parseBoolean(p.get(FULL)),
                    p.containsKey(RECORDS) ? Long.parseLong(p.get(RECORDS)) : null,
                    Long.parseLong(p.getOrDefault(VERSIONS, "0")),
                    p.get(STATUS),
                    p.get(ERROR));
        }
    }

    /**
     * The Iceberg table a name of the file means: a qualified name as written; a streaming table of
     * the file its flow's target in {@code targets} (by lower-case name, from the plan); any other
     * name in the file's namespace ({@code SET namespace}, else {@code defaultNamespace}).
     */
    public static TableIdentifier identifier(
            String name, Map<String, TableIdentifier> targets, String defaultNamespace) {
        TableIdentifier planned = targets.get(name.toLowerCase(java.util.Locale.ROOT));
        if (planned != null) {
            return planned;
        }
        int dot = name.lastIndexOf('.');
        if (dot > 0) {
            return TableIdentifier.of(
                    Namespace.of(name.substring(0, dot).split("\\.")), name.substring(dot + 1));
        }
        return TableIdentifier.of(Namespace.of(defaultNamespace.split("\\.")), name);
    }

    /**
     * The lines {@code DESCRIBE [TABLE] [EXTENDED] t} prints: {@code Table <id>} and its columns
     * (Iceberg's: name, type, {@code NOT NULL}, comment; or the declared ones when the table does
     * not exist yet), then with EXTENDED the definition of its flow in the file (statement
     * position, source, AUTO CDC clauses, options), its schedule and its last refresh.
     *
     * @param id the table ({@link #identifier})
     */
    public static List<String> describe(
            SqlPipeline pipeline, SqlStatement.Describe d, Catalog catalog, TableIdentifier id) {
        List<String> out = new ArrayList<>();
        boolean exists = catalog.tableExists(id);
        Table table = exists ? catalog.loadTable(id) : null;
        SqlStatement.CreateStreamingTable decl = pipeline.declaration(d.table());
        if (!exists && decl == null) {
            throw new SqlException(
                    Code.UNKNOWN_TABLE,
                    d.tablePosition(),
                    "DESCRIBE TABLE "
                            + d.table()
                            + ": the catalog has no table "
                            + id
                            + " and the file declares no streaming table of that name");
        }
        out.add("Table " + id + (exists ? "" : " (not created yet: declared columns)"));
        out.add("Columns:");
        if (table != null) {
            for (Types.NestedField f : table.schema().columns()) {
                out.add(
                        "  "
                                + f.name()
                                + " "
                                + f.type()
                                + (f.isRequired() ? " NOT NULL" : "")
                                + (f.doc() != null ? " COMMENT '" + f.doc() + "'" : ""));
            }
        } else if (decl.columns().isEmpty()) {
            out.add("  (from the source's records, when first refreshed)");
        } else {
            for (SqlStatement.Column c : decl.columns()) {
                out.add(
                        "  "
                                + c.name()
                                + " "
                                + c.type()
                                + (c.notNull() ? " NOT NULL" : "")
                                + (c.comment() != null ? " COMMENT '" + c.comment() + "'" : ""));
            }
        }
        if (!d.extended()) {
            return out;
        }
        int i = pipeline.flowIndexOfTable(d.table());
        SqlPipeline.ReplaceWhereTable replace = pipeline.replaceWhere(d.table());
        if (decl != null && replace != null) {
            // S4: a REPLACE WHERE table is a refresh definition, not a flow of the ingest job
            out.add("Definition: " + decl.position());
            out.add("  kind: REPLACE WHERE (a slice recomputed by each refresh)");
            out.add("  predicate: " + replace.definition().predicate().replaceAll("\\s+", " "));
            out.add("  query: " + replace.definition().query().replaceAll("\\s+", " "));
            if (!decl.partitionedBy().isEmpty()) {
                out.add("  PARTITIONED BY: " + String.join(", ", decl.partitionedBy()));
            }
            if (decl.comment() != null) {
                out.add("  COMMENT: " + decl.comment());
            }
        } else if (decl != null && pipeline.snapshotTable(d.table()) != null) {
            // A6: a snapshot flow, run by the file's snapshot job
            SqlPipeline.SnapshotTable st = pipeline.snapshotTable(d.table());
            FlowConfig f = st.flow();
            out.add("Definition: " + decl.position());
            out.add("  flow: " + f.flowName());
            out.add("  kind: AUTO CDC FROM SNAPSHOT");
            out.add("  source: " + st.source());
            out.add("  KEYS: " + String.join(", ", f.keys));
            out.add("  SCD type: " + (f.scdType == ScdType.TYPE_2 ? "2" : "1"));
            out.add("  COLUMNS: " + f.columns);
            if (f.trackHistoryOn != null) {
                out.add("  TRACK HISTORY ON: " + f.trackHistoryOn);
            }
            if (!f.partitionedBy.isEmpty()) {
                out.add("  PARTITIONED BY: " + String.join(", ", f.partitionedBy));
            }
            if (decl.comment() != null) {
                out.add("  COMMENT: " + decl.comment());
            }
            decl.properties().forEach((k, v) -> out.add("  TBLPROPERTIES " + k + " = " + v));
        } else if (decl == null || i < 0) {
            out.add("Definition: none in this file (not a streaming table of it)");
        } else {
            FlowConfig f = pipeline.config().flows.get(i);
            out.add("Definition: " + decl.position());
            out.add("  flow: " + f.flowName());
            out.add("  source: " + pipeline.sourceOfFlow(i));
            if (f.appendOnly) {
                out.add(
                        f.hasQuery()
                                ? "  kind: append-only (AS SELECT list FROM STREAM ... [WHERE ...])"
                                : "  kind: append-only (AS SELECT * FROM STREAM ...)");
                if (f.hasQuery()) {
                    // S1
                    out.add(
                            "  SELECT: "
                                    + (f.select == null ? "*" : f.select.replaceAll("\\s+", " ")));
                    if (f.selectWhere != null) {
                        out.add("  WHERE: " + f.selectWhere.replaceAll("\\s+", " "));
                    }
                }
            } else if (f.isReplaceUsing()) {
                // S5
                out.add("  kind: REPLACE USING");
                out.add("  REPLACE USING: " + String.join(", ", f.replaceUsing));
                out.add("  SEQUENCE BY: " + String.join(", ", f.sequenceBy));
            } else {
                out.add("  kind: AUTO CDC");
                out.add("  KEYS: " + String.join(", ", f.keys));
                out.add(
                        "  SEQUENCE BY: "
                                + (f.sequenceBy.isEmpty()
                                        ? "source.lsn (Debezium default)"
                                        : String.join(", ", f.sequenceBy)));
                out.add("  SCD type: " + (f.scdType == ScdType.TYPE_2 ? "2" : "1"));
                out.add("  COLUMNS: " + f.columns);
                if (f.ignoreNullUpdates != null) {
                    out.add("  IGNORE NULL UPDATES: " + f.ignoreNullUpdates);
                }
                if (f.trackHistoryOn != null) {
                    out.add("  TRACK HISTORY ON: " + f.trackHistoryOn);
                }
                if (f.applyAsDeleteWhen != null) {
                    out.add("  APPLY AS DELETE WHEN: " + f.applyAsDeleteWhen);
                }
                if (f.applyAsTruncateWhen != null) {
                    out.add("  APPLY AS TRUNCATE WHEN: " + f.applyAsTruncateWhen);
                }
                for (Expectation e : f.expectations) {
                    out.add("  expectation: " + e);
                }
            }
            if (!f.partitionedBy.isEmpty()) {
                out.add("  PARTITIONED BY: " + String.join(", ", f.partitionedBy));
            }
            if (decl.comment() != null) {
                out.add("  COMMENT: " + decl.comment());
            }
            decl.properties().forEach((k, v) -> out.add("  TBLPROPERTIES " + k + " = " + v));
            out.add("  on-schema-change: " + f.onSchemaChange);
            out.add("  on-invalid-record: " + f.onInvalidRecord);
        }
        Schedule s = decl == null ? null : pipeline.schedules().get(decl.name());
        out.add("Schedule: " + schedule(s));
        LastRefresh last = table == null ? null : LastRefresh.of(table);
        if (last == null) {
            out.add("Last refresh: none recorded");
        } else {
            out.add("Last refresh:");
            out.add("  start: " + last.start());
            out.add("  end: " + last.end());
            out.add("  full: " + last.full());
            out.add("  records: " + (last.records() == null ? "-" : last.records()));
            out.add("  versions written: " + last.versions());
            out.add("  status: " + last.status());
            out.add("  error: " + (last.error() == null ? "-" : last.error()));
        }
        lastJobCommit(table, last).ifPresent(out::add);
        return out;
    }

    /** The snapshot-summary key of the Flink job whose sink made a commit (Iceberg's sink). */
    static final String FLINK_JOB_ID = "flink.job-id";

    /** The snapshot-summary key of the checkpoint a Flink sink's commit completed. */
    static final String FLINK_CHECKPOINT_ID = "flink.max-committed-checkpoint-id";

    /**
     * The line DESCRIBE EXTENDED adds when {@code table}'s current snapshot was committed by a
     * Flink job (its summary names the job) after the last recorded refresh ended, or when none is
     * recorded: a continuous job ({@code ingest --cluster}, the FlinkDeployment of {@code deploy
     * --flows}) commits once per checkpoint and never ends, so it records no refresh (S9). The line
     * names the version (the snapshot's sequence number), its commit time (UTC), the job and the
     * checkpoint: {@code Last commit by a Flink job: version 7 at 2026-12-04T17:00:00Z (job
     * 3f2a..., checkpoint 12); a continuous job (ingest --cluster, deploy --flows) records no
     * refresh}. Empty when the table does not exist, has no snapshot, or its current one is no
     * Flink job's or is not newer than the recorded refresh's end.
     */
    static Optional<String> lastJobCommit(@Nullable Table table, @Nullable LastRefresh last) {
        Snapshot s = table == null ? null : table.currentSnapshot();
        if (s == null || s.summary() == null || s.summary().get(FLINK_JOB_ID) == null) {
            return Optional.empty();
        }
        Instant at = Instant.ofEpochMilli(s.timestampMillis());
        if (last != null && last.end() != null) {
            try {
                if (!at.isAfter(Instant.parse(last.end()))) {
                    return Optional.empty();
                }
            } catch (java.time.format.DateTimeParseException e) {
                // an unreadable end: say what the table's history says
            }
        }
        String checkpoint = s.summary().get(FLINK_CHECKPOINT_ID);
        return Optional.of(
                "Last commit by a Flink job: version "
                        + s.sequenceNumber()
                        + " at "
                        + at
                        + " (job "
                        + s.summary().get(FLINK_JOB_ID)
                        + (checkpoint == null ? "" : ", checkpoint " + checkpoint)
                        + "); a continuous job (ingest --cluster, deploy --flows) records no"
                        + " refresh");
    }

    /** A schedule as DESCRIBE prints it. */
    static String schedule(@Nullable Schedule s) {
        if (s == null) {
            return "none (refreshed when the file is run)";
        }
        String tz = s.timeZone() == null ? "" : " AT TIME ZONE '" + s.timeZone() + "'";
        if (s instanceof Schedule.Every e) {
            String unit = e.unit().name();
            return "EVERY "
                    + e.count()
                    + " "
                    + (e.count() == 1 ? unit.substring(0, unit.length() - 1) : unit)
                    + tz;
        }
        return "CRON '" + ((Schedule.Cron) s).quartz() + "'" + tz;
    }

    /**
     * What one {@code DROP TABLE} will do, checked before anything is dropped.
     *
     * @param table the Iceberg table; null when it does not exist (IF EXISTS)
     * @param stateFolders the checkpoint folders of the file's jobs to delete with it
     */
    public record DropPlan(
            SqlStatement.Drop statement,
            @Nullable TableIdentifier table,
            List<Path> stateFolders) {}

    /**
     * Checks the file's DROP TABLE statements against the catalog and the saved state under {@code
     * checkpointBase} (the folder holding one folder per job), dropping nothing.
     *
     * <p>A table the catalog does not have is {@code TABLE_NOT_FOUND} at its name unless IF EXISTS
     * is given. The saved state of each job of the file that writes the table ({@link
     * SqlPipeline#jobsWriting}) is deleted with it, so a re-created table starts fresh; a job whose
     * state also holds a table that exists and is not dropped by the file is {@code
     * DROP_SHARES_STATE} (its state cannot be split). The same holds for the saved state of every
     * other local job under {@code checkpointBase} whose runs recorded that they write the table
     * ({@link LocalIngest#tablesOfState}): a DROP run from a file of DROP statements alone, or from
     * another pipeline file, deletes the state of the job that owns the table, or is {@code
     * DROP_SHARES_STATE} naming that job when its state also holds a table that exists and is not
     * dropped by the file. Otherwise the job's next run would resume from the state (its files
     * read, its AUTO CDC keys) and leave the re-created table empty.
     *
     * @param targets and {@code defaultNamespace}: how names map to tables ({@link #identifier})
     */
    public static List<DropPlan> planDrops(
            SqlPipeline pipeline,
            Map<String, TableIdentifier> targets,
            String defaultNamespace,
            Catalog catalog,
            Path checkpointBase)
            throws IOException {
        List<String> jobs = new ArrayList<>();
        if (Files.isDirectory(checkpointBase)) {
            try (Stream<Path> list = Files.list(checkpointBase)) {
                list.filter(Files::isDirectory).forEach(p -> jobs.add(p.getFileName().toString()));
            }
        }
        java.util.Collections.sort(jobs);
        List<String> dropped = new ArrayList<>();
        pipeline.drops().forEach(d -> dropped.add(d.table().toLowerCase(java.util.Locale.ROOT)));
        java.util.Set<TableIdentifier> droppedIds = new java.util.HashSet<>();
        pipeline.drops()
                .forEach(d -> droppedIds.add(identifier(d.table(), targets, defaultNamespace)));
        List<DropPlan> plans = new ArrayList<>();
        for (int i = 0; i < pipeline.drops().size(); i++) {
            SqlStatement.Drop d = pipeline.drops().get(i);
            TableIdentifier id = identifier(d.table(), targets, defaultNamespace);
            boolean exists = catalog.tableExists(id);
            if (!exists && !d.ifExists()) {
                throw new SqlException(
                        Code.TABLE_NOT_FOUND,
                        d.tablePosition(),
                        "DROP TABLE "
                                + d.table()
                                + ": the catalog has no table "
                                + id
                                + " (DROP TABLE IF EXISTS "
                                + d.table()
                                + " drops it only when it exists)");
            }
            List<Path> folders = new ArrayList<>();
            for (Map.Entry<String, List<String>> job :
                    pipeline.jobsWriting(d.table(), jobs).entrySet()) {
                Path folder = checkpointBase.resolve(job.getKey());
                if (!Files.isDirectory(folder)) {
                    continue;
                }
                for (String other : job.getValue()) {
                    if (dropped.contains(other.toLowerCase(java.util.Locale.ROOT))) {
                        continue;
                    }
                    int f = pipeline.flowIndexOfTable(other);
                    TableIdentifier otherId = identifier(other, targets, defaultNamespace);
                    if (f >= 0 && catalog.tableExists(otherId)) {
                        throw new SqlException(
                                Code.DROP_SHARES_STATE,
                                d.position(),
                                "DROP TABLE "
                                        + d.table()
                                        + ": its flow's saved state (job '"
                                        + job.getKey()
                                        + "', "
                                        + folder
                                        + ") also holds the flows of "
                                        + String.join(", ", job.getValue())
                                        + ", and table "
                                        + otherId
                                        + " stays; drop those tables too in the same file"
                                        + " (DROP TABLE "
                                        + other
                                        + ";), or empty "
                                        + d.table()
                                        + " with REFRESH STREAMING TABLE "
                                        + d.table()
                                        + " FULL instead");
                    }
                }
                folders.add(folder);
            }
            // the saved state of any other job that writes the table, whatever file or flows
            // file it was run from: found through the tables its runs record beside it
            for (String job : jobs) {
                Path folder = checkpointBase.resolve(job);
                if (job.endsWith(".state") || folders.contains(folder)) {
                    continue;
                }
                Optional<List<String>> held = LocalIngest.tablesOfState(folder);
                if (held.isEmpty()) {
                    continue;
                }
                List<TableIdentifier> ids = new ArrayList<>();
                held.get().forEach(t -> ids.add(TableIdentifier.parse(t)));
                if (!ids.contains(id)) {
                    continue;
                }
                for (TableIdentifier other : ids) {
                    if (other.equals(id)
                            || droppedIds.contains(other)
                            || !catalog.tableExists(other)) {
                        continue;
                    }
                    throw new SqlException(
                            Code.DROP_SHARES_STATE,
                            d.position(),
                            "DROP TABLE "
                                    + d.table()
                                    + ": the saved state of job '"
                                    + job
                                    + "' ("
                                    + folder
                                    + "), which its next run resumes from, holds the flows of "
                                    + held.get().stream()
                                            .collect(java.util.stream.Collectors.joining(", "))
                                    + ", and table "
                                    + other
                                    + " stays; drop those tables together (add DROP TABLE "
                                    + other
                                    + "; to this file), or rebuild "
                                    + id
                                    + " in job '"
                                    + job
                                    + "' itself (run its file with --full-refresh naming"
                                    + " every table of the job, or ingest --from-scratch)");
                }
                folders.add(folder);
            }
            plans.add(new DropPlan(d, exists ? id : null, folders));
        }
        return plans;
    }

    /**
     * Drops what {@link #planDrops} checked: each table (its files purged) and its jobs' saved
     * state.
     *
     * @return one line per statement saying what was dropped
     */
    public static List<String> drop(List<DropPlan> plans, Catalog catalog) throws IOException {
        List<String> out = new ArrayList<>();
        for (DropPlan p : plans) {
            StringBuilder line = new StringBuilder("DROP TABLE ").append(p.statement().table());
            if (p.table() == null) {
                line.append(": no such table, nothing dropped (IF EXISTS)");
            } else {
                StreamingTables.dropIfExists(catalog, p.table());
                line.append(": dropped ").append(p.table());
            }
            for (Path folder : p.stateFolders()) {
                if (Files.exists(folder)) {
                    org.apache.flink.util.FileUtils.deleteDirectory(folder.toFile());
                    line.append("; deleted the saved state of job ").append(folder.getFileName());
                }
            }
            out.add(line.toString());
        }
        return out;
    }
}
