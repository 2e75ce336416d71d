package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.operators.AutoCdcException;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ReplaceUsingSpec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * What a local ingest job keeps beside its checkpoints in {@code
 * <warehouse>/.changeflow/checkpoints/<name>} besides Flink's own state:
 *
 * <ul>
 *   <li>{@code .lock}: held while a run uses the folder, so two runs of one job cannot write the
 *       same tables with diverging state;
 *   <li>{@code flows.json}: per flow with keyed state the parts of its definition the saved state
 *       depends on, checked before a restore ({@link #checkDefinitions}): for AUTO CDC KEYS,
 *       SEQUENCE BY and its type, SCD type; for REPLACE USING (semantics.md S5) the REPLACE USING
 *       columns, SEQUENCE BY and its type; for AUTO CDC FROM SNAPSHOT (A6) KEYS, SCD type and where
 *       the snapshot versions come from. Each entry names its {@code kind} ({@code auto-cdc} when
 *       absent, as written before the other kinds were recorded);
 *   <li>{@code tables.json}: the Iceberg tables (identifiers as {@code ns.name}) whose flows the
 *       job's state holds, written by every run before its job starts, so a {@code DROP TABLE} run
 *       from any file finds the state to delete with the table (docs/semantics.md S9, {@code
 *       DROP_SHARES_STATE});
 *   <li>{@code files-seen.json}: size and modification time (ms) of each input file when it was
 *       read, so a file that changed afterwards is reported (files are read once, by path);
 *   <li>{@code committed-savepoint}: the savepoint of the last run that stopped cleanly — its job
 *       finished after the savepoint, so every Iceberg commit of it happened. Any other state to
 *       resume from (a retained checkpoint, or a savepoint whose run was killed before its job
 *       finished) may hold data files its committers have not committed yet.
 * </ul>
 *
 * <p>The records folder is local or on an object store ({@code run --state-dir s3://...}; read and
 * written through Flink's file systems, {@link StateFiles}). An object store has no lock file:
 * there, a single writer per job is what runs the job guarantees — the CronJob of a scheduled table
 * has {@code concurrencyPolicy: Forbid}, so its next refresh starts only after the previous one
 * ended; two runs started by hand against the same state location at once would write the same
 * tables with diverging state.
 */
final class LocalJobState implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final org.apache.flink.core.fs.Path root;
    @Nullable private final FileChannel channel;
    @Nullable private final FileLock lock;

    private LocalJobState(
            org.apache.flink.core.fs.Path root,
            @Nullable FileChannel channel,
            @Nullable FileLock lock) {
        this.root = root;
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Locks a job's state folder.
     *
     * @throws IllegalStateException when another run (this or another process) holds it
     */
    static LocalJobState lock(Path root, String job) throws IOException {
        return lock(root, job, "or give this run another --name");
    }

    /**
     * As {@link #lock(Path, String)}; the error ends with {@code otherName}, how the command that
     * runs the job gives a run another job name.
     */
    static LocalJobState lock(Path root, String job, String otherName) throws IOException {
        return lock(StateFiles.of(root), job, otherName);
    }

    /**
     * As {@link #lock(Path, String, String)}, for a records folder on any Flink file system. A
     * local folder is locked ({@code .lock}); a folder on an object store is not (see the class
     * comment: the CronJob's {@code concurrencyPolicy: Forbid} keeps one writer).
     *
     * @throws IllegalStateException when another run holds a local folder
     * @throws IOException when the folder cannot be created or reached
     */
    static LocalJobState lock(org.apache.flink.core.fs.Path stateRoot, String job, String otherName)
            throws IOException {
        if (!StateFiles.isLocal(stateRoot)) {
            return new LocalJobState(stateRoot, null, null);
        }
        Path root = StateFiles.local(stateRoot);
        Files.createDirectories(root);
        FileChannel ch =
                FileChannel.open(
                        root.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock l;
        try {
            l = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            l = null;
        }
        if (l == null) {
            ch.close();
            throw new IllegalStateException(
                    "another run of job '"
                            + job
                            + "' is using "
                            + root
                            + "; wait for it to finish (two runs of one"
                            + " job would write the same tables with diverging state), "
                            + otherName);
        }
        return new LocalJobState(stateRoot, ch, l);
    }

    @Override
    public void close() throws IOException {
        if (lock != null) {
            lock.release();
            channel.close();
        }
    }

    private org.apache.flink.core.fs.Path file(String name) {
        return StateFiles.child(root, name);
    }

    /** Forgets the saved definitions and file fingerprints (with --from-scratch). */
    void clear() throws IOException {
        StateFiles.deleteIfExists(file("flows.json"));
        StateFiles.deleteIfExists(file("files-seen.json"));
        StateFiles.deleteIfExists(file(FILES_SKIPPED));
        StateFiles.deleteIfExists(file(COMMITTED_SAVEPOINT));
    }

    // ---- clean stops -------------------------------------------------------------------------

    private static final String COMMITTED_SAVEPOINT = "committed-savepoint";

    /**
     * Records that the job stopped cleanly with {@code savepoint}: its Iceberg commits all
     * happened.
     */
    void markCommitted(Path savepoint) throws IOException {
        markCommitted(StateFiles.of(savepoint));
    }

    /** As {@link #markCommitted(Path)}, for a savepoint on any Flink file system. */
    void markCommitted(org.apache.flink.core.fs.Path savepoint) throws IOException {
        StateFiles.writeString(file(COMMITTED_SAVEPOINT), name(savepoint));
    }

    /** A state folder as recorded: a local one by its absolute path, another by its URI. */
    private static String name(org.apache.flink.core.fs.Path stateDir) {
        return StateFiles.isLocal(stateDir)
                ? StateFiles.local(stateDir).normalize().toString()
                : stateDir.toString();
    }

    /**
     * Whether {@code stateDir} is the savepoint of a clean stop ({@link #markCommitted}); false for
     * every retained checkpoint and for a savepoint whose run was killed before its job finished —
     * restoring those lets the committers commit what they hold.
     */
    boolean committed(Path stateDir) throws IOException {
        return committed(StateFiles.of(stateDir));
    }

    /** As {@link #committed(Path)}, for a state folder on any Flink file system. */
    boolean committed(org.apache.flink.core.fs.Path stateDir) throws IOException {
        org.apache.flink.core.fs.Path f = file(COMMITTED_SAVEPOINT);
        return StateFiles.exists(f) && StateFiles.readString(f).equals(name(stateDir));
    }

    // ---- tables written -----------------------------------------------------------------------

    private static final String TABLES = "tables.json";

    /** Records the tables the job's flows write ({@code tables.json}), in the given order. */
    void saveTables(Collection<String> tables) throws IOException {
        write(file(TABLES), JSON.valueToTree(new ArrayList<>(tables)));
    }

    /**
     * The tables recorded by {@link #saveTables} in a job's records folder {@code stateRoot}
     * ({@code <checkpoint folder>.state}); empty when none were recorded (no run since this record
     * was introduced, or no such folder).
     */
    static Optional<List<String>> readTables(Path stateRoot) throws IOException {
        return readTables(StateFiles.of(stateRoot));
    }

    /** As {@link #readTables(Path)}, for a records folder on any Flink file system. */
    static Optional<List<String>> readTables(org.apache.flink.core.fs.Path stateRoot)
            throws IOException {
        org.apache.flink.core.fs.Path f = StateFiles.child(stateRoot, TABLES);
        if (!StateFiles.isFile(f)) {
            return Optional.empty();
        }
        List<String> out = new ArrayList<>();
        JSON.readTree(StateFiles.readBytes(f)).forEach(n -> out.add(n.asText()));
        return Optional.of(out);
    }

    // ---- flow definitions --------------------------------------------------------------------

    /** {@code kind} of an AUTO CDC flow's entry (also an entry without {@code kind}). */
    static final String AUTO_CDC = "auto-cdc";

    /** {@code kind} of a REPLACE USING flow's entry (semantics.md S5). */
    static final String REPLACE_USING = "replace-using";

    /** {@code kind} of an AUTO CDC FROM SNAPSHOT flow's entry (semantics.md A6). */
    static final String FROM_SNAPSHOT = "from-snapshot";

    /** The parts of an entry compared before a restore, per kind, in the order they are checked. */
    private static final Map<String, List<String>> COMPARED =
            Map.of(
                    AUTO_CDC,
                    List.of("keys", "sequence-by", "sequence-type", "scd-type"),
                    REPLACE_USING,
                    List.of("replace-using", "sequence-by", "sequence-type"),
                    FROM_SNAPSHOT,
                    List.of("version-source", "keys", "scd-type"));

    /** What the saved state of each kind holds, for the error message. */
    private static final Map<String, String> STATE_OF =
            Map.of(
                    AUTO_CDC,
                    "its sequences, tombstones and history would be compared with the new one and"
                            + " records silently dropped as late",
                    REPLACE_USING,
                    "each key's applied sequence and rows would be compared with the new ones and"
                            + " rows silently dropped as late or left in the table",
                    FROM_SNAPSHOT,
                    "each key's last values and the applied snapshot version would be compared"
                            + " with the new snapshots and rows silently kept, changed or"
                            + " deleted");

    static ObjectNode definition(AutoCdcSpec spec) {
        ObjectNode n = JSON.createObjectNode();
        n.putPOJO("keys", spec.keys());
        n.putPOJO("sequence-by", spec.sequenceBy());
        n.put("sequence-type", spec.sequenceType().asSerializableString());
        n.put("scd-type", spec.scdType().name());
        n.put("target", spec.targetType().asSerializableString());
        return n;
    }

    /**
     * The entry of a REPLACE USING flow: {@code kind}, {@code replace-using} (its columns), {@code
     * sequence-by}, {@code sequence-type}, {@code target} (the row type, not compared).
     */
    static ObjectNode definition(ReplaceUsingSpec spec) {
        ObjectNode n = JSON.createObjectNode();
        n.put("kind", REPLACE_USING);
        n.putPOJO("replace-using", spec.keys());
        n.putPOJO("sequence-by", spec.sequenceBy());
        n.put("sequence-type", spec.sequenceType().asSerializableString());
        n.put("target", spec.rowType().asSerializableString());
        return n;
    }

    /**
     * The entry of an AUTO CDC FROM SNAPSHOT flow: the AUTO CDC parts of {@code spec} (SEQUENCE BY
     * is the snapshot version), {@code kind}, and {@code version-source}: {@code "snapshot file
     * names"} for a folder of snapshot files, {@code "table versions"} for an Iceberg table's
     * versions.
     */
    static ObjectNode snapshotDefinition(FlowConfig flow, AutoCdcSpec spec) {
        ObjectNode n = definition(spec);
        n.put("kind", FROM_SNAPSHOT);
        n.put(
                "version-source",
                flow.fromSnapshotTable != null ? "table versions" : "snapshot file names");
        return n;
    }

    /** The entries of a plan's flows with keyed state (AUTO CDC and REPLACE USING), by flow. */
    private static Map<String, ObjectNode> definitions(IngestPlan plan) {
        Map<String, ObjectNode> out = new TreeMap<>();
        for (IngestPlan.Flow flow : plan.flows) {
            if (flow.spec != null) {
                out.put(flow.name(), definition(flow.spec));
            } else if (flow.replaceUsing != null) {
                out.put(flow.name(), definition(flow.replaceUsing));
            }
        }
        return out;
    }

    /**
     * Compares the plan with the definitions the saved state was built with.
     *
     * @return names of flows that have state but are no longer defined (their state is dropped)
     * @throws AutoCdcException FLOW_CHANGED_FOR_EXISTING_STATE when KEYS, SEQUENCE BY or the SCD
     *     type of an AUTO CDC flow, or the REPLACE USING columns or SEQUENCE BY of a REPLACE USING
     *     flow, changed, or a flow changed its kind; the message ends with the way out, rebuilding
     *     the table with {@code --from-scratch}
     */
    List<String> checkDefinitions(IngestPlan plan) throws IOException {
        return checkDefinitions(plan, LocalIngest.Options.FROM_SCRATCH_FIX);
    }

    /**
     * As {@link #checkDefinitions(IngestPlan)}; the message of FLOW_CHANGED_FOR_EXISTING_STATE ends
     * with {@code "Restore the old definition, or " + rebuild.apply(flowName) + "."}.
     */
    List<String> checkDefinitions(IngestPlan plan, Function<String, String> rebuild)
            throws IOException {
        return check(definitions(plan), plan.config.name, rebuild);
    }

    /**
     * For the AUTO CDC FROM SNAPSHOT flows of a run (docs/semantics.md A6, K8): when the run
     * restores saved state, compares each flow's definition with the one the state was built with
     * (KEYS, SCD type, where the versions come from; {@link #snapshotDefinition}); then records the
     * flows' definitions for the next run.
     *
     * @param job the job's name, for the message
     * @param restoring whether the run restores saved state (else nothing is compared)
     * @param rebuild the way to rebuild a flow's table, as in {@link #checkDefinitions(IngestPlan,
     *     Function)}
     * @return names of flows that have state but are no longer defined
     * @throws AutoCdcException FLOW_CHANGED_FOR_EXISTING_STATE, before anything is recorded
     */
    List<String> checkSnapshotDefinitions(
            String job,
            List<SnapshotJob.Plan> plans,
            boolean restoring,
            Function<String, String> rebuild)
            throws IOException {
        Map<String, ObjectNode> now = new TreeMap<>();
        for (SnapshotJob.Plan p : plans) {
            now.put(p.spec.name(), snapshotDefinition(p.config, p.spec));
        }
        List<String> removed = restoring ? check(now, job, rebuild) : List.of();
        save(now);
        return removed;
    }

    private List<String> check(
            Map<String, ObjectNode> now, String job, Function<String, String> rebuild)
            throws IOException {
        org.apache.flink.core.fs.Path f = file("flows.json");
        List<String> removed = new ArrayList<>();
        if (!StateFiles.exists(f)) {
            return removed;
        }
        JsonNode saved = JSON.readTree(StateFiles.readBytes(f));
        for (Iterator<String> it = saved.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            ObjectNode cur = now.get(name);
            if (cur == null) {
                removed.add(name);
                continue;
            }
            JsonNode old = saved.get(name);
            String oldKind = old.has("kind") ? old.get("kind").asText() : AUTO_CDC;
            String kind = cur.has("kind") ? cur.get("kind").asText() : AUTO_CDC;
            if (!oldKind.equals(kind)) {
                throw changed(
                        name,
                        "the flow changed from " + oldKind + " to " + kind,
                        job,
                        kind,
                        rebuild);
            }
            for (String part : COMPARED.get(kind)) {
                if (!JSON.valueToTree(cur.get(part)).equals(old.get(part))) {
                    throw changed(
                            name,
                            part + " changed from " + old.get(part) + " to " + cur.get(part),
                            job,
                            kind,
                            rebuild);
                }
            }
        }
        return removed;
    }

    private static AutoCdcException changed(
            String flow, String what, String job, String kind, Function<String, String> rebuild) {
        return new AutoCdcException(
                AutoCdcException.Code.FLOW_CHANGED_FOR_EXISTING_STATE,
                "flow '"
                        + flow
                        + "': "
                        + what
                        + " but the saved state of job '"
                        + job
                        + "' was built with the old definition ("
                        + STATE_OF.get(kind)
                        + "). Restore the old definition, or "
                        + rebuild.apply(flow)
                        + ".");
    }

    /** Records the definitions of the plan's flows with keyed state ({@code flows.json}). */
    void saveDefinitions(IngestPlan plan) throws IOException {
        save(definitions(plan));
    }

    private void save(Map<String, ObjectNode> definitions) throws IOException {
        ObjectNode all = JSON.createObjectNode();
        definitions.forEach(all::set);
        write(file("flows.json"), all);
    }

    // ---- input files -------------------------------------------------------------------------

    /**
     * Size and modification time of files now, as {@code "<size> <mtime-ms>"}; the files as {@link
     * dev.changeflow.sources.files.FileGlob#key} names them (a local absolute path or a URI such as
     * {@code s3://bucket/key}), read through Flink's file systems.
     */
    static Map<String, String> fingerprints(Collection<String> files) throws IOException {
        Map<String, String> out = new TreeMap<>();
        for (String f : files) {
            org.apache.flink.core.fs.Path p =
                    f.contains("://")
                            ? new org.apache.flink.core.fs.Path(f)
                            : new org.apache.flink.core.fs.Path(Path.of(f).toUri());
            org.apache.flink.core.fs.FileSystem fs =
                    dev.changeflow.sources.files.InputFileSystems.of(p);
            if (fs.exists(p)) {
                org.apache.flink.core.fs.FileStatus st = fs.getFileStatus(p);
                out.put(f, st.getLen() + " " + st.getModificationTime());
            }
        }
        return out;
    }

    Map<String, String> seenFiles() throws IOException {
        org.apache.flink.core.fs.Path f = file("files-seen.json");
        Map<String, String> out = new TreeMap<>();
        if (StateFiles.exists(f)) {
            JsonNode n = JSON.readTree(StateFiles.readBytes(f));
            n.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        }
        return out;
    }

    void saveSeenFiles(Map<String, String> seen) throws IOException {
        write(file("files-seen.json"), JSON.valueToTree(seen));
    }

    private static final String FILES_SKIPPED = "files-skipped.json";

    /**
     * The files that were under the inputs when the job first started with {@code
     * include-existing-files} false (docs/semantics.md S2): taken as read, never read; empty
     * otherwise.
     */
    List<String> skippedFiles() throws IOException {
        org.apache.flink.core.fs.Path f = file(FILES_SKIPPED);
        List<String> out = new ArrayList<>();
        if (StateFiles.exists(f)) {
            JSON.readTree(StateFiles.readBytes(f)).forEach(n -> out.add(n.asText()));
        }
        return out;
    }

    /** Records {@link #skippedFiles()}; an empty list removes the record. */
    void saveSkippedFiles(List<String> skipped) throws IOException {
        if (skipped.isEmpty()) {
            StateFiles.deleteIfExists(file(FILES_SKIPPED));
        } else {
            write(file(FILES_SKIPPED), JSON.valueToTree(skipped));
        }
    }

    /** Prints one warning per file that was read earlier and has changed since. */
    static void warnChanged(Map<String, String> seen, Map<String, String> now, PrintStream out) {
        for (Map.Entry<String, String> e : seen.entrySet()) {
            String cur = now.get(e.getKey());
            if (cur != null && !cur.equals(e.getValue())) {
                out.println(
                        "WARNING: "
                                + e.getKey()
                                + " changed since it was read (size and time were "
                                + e.getValue()
                                + ", now "
                                + cur
                                + "); changeflow reads each file once, by path: put new change records in new"
                                + " files (or re-ingest with --from-scratch).");
            }
        }
    }

    private static void write(org.apache.flink.core.fs.Path file, JsonNode node)
            throws IOException {
        StateFiles.write(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(node));
    }
}
