package dev.changeflow.e2e;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.jobs.sql.TableStatements;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code changeflow run FILE.sql --refresh t} and {@code --full-refresh t} on the local MiniCluster
 * (docs/semantics.md S1, S3): a refresh reads the files that are new since the last one, each once;
 * a full refresh after a definition change the saved state cannot absorb empties the table in one
 * commit (earlier snapshots kept), starts a new state generation and rereads every file under the
 * new definition; {@code 'pipelines.reset.allowed' = 'false'} refuses it. The file's own {@code
 * REFRESH STREAMING TABLE t [FULL]} statements run the same jobs as the flags, and a changed
 * definition's error names the full refresh of the table as the fix.
 */
class SqlRefreshITCase {
    @TempDir Path tmp;

    private static final String PIPELINE =
            "USE SCHEMA shop;\n"
                    + "CREATE OR REFRESH STREAMING TABLE events (id INT, note STRING)\n"
                    + "  SCHEDULE EVERY 1 HOUR\n"
                    + "  AS SELECT * FROM STREAM read_files('events', format => 'json');\n"
                    + "CREATE OR REFRESH STREAMING TABLE orders (id INT, status STRING, seq BIGINT,"
                    + " seq2 BIGINT) PROPS\n"
                    + "  FLOW AUTO CDC FROM STREAM read_files('orders', format => 'json')\n"
                    + "  KEYS (id) SEQUENCE BY seq;\n";

    private Path pipeline(String sequence, String props) throws Exception {
        return pipeline(sequence, props, "");
    }

    /** The pipeline with {@code statements} (e.g. a REFRESH) after it. */
    private Path pipeline(String sequence, String props, String statements) throws Exception {
        Path f = tmp.resolve("shop.sql");
        Files.writeString(
                f,
                PIPELINE.replace("SEQUENCE BY seq;", "SEQUENCE BY " + sequence + ";")
                                .replace(" PROPS", props)
                        + statements);
        return f;
    }

    private Table table(Path warehouse, String name) {
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        return cat.loadTable(TableIdentifier.of("shop", name));
    }

    @Test
    void refreshTwiceWithNewFilesInBetweenReadsEachFileOnce() throws Exception {
        Path events = Files.createDirectories(tmp.resolve("events"));
        Files.createDirectories(tmp.resolve("orders"));
        Files.write(
                events.resolve("1.jsonl"),
                List.of("{\"id\":1,\"note\":\"a\"}", "{\"id\":2,\"note\":\"b\"}"));
        Path f = pipeline("seq", "");
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();

        assertThat(run("run", "--warehouse", w, "--refresh", "events", f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "events"))).containsExactly("1,a", "2,b");

        Files.write(events.resolve("2.jsonl"), List.of("{\"id\":3,\"note\":\"c\"}"));
        assertThat(run("run", "--warehouse", w, "--refresh", "events", f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "events")))
                .containsExactly("1,a", "2,b", "3,c");

        // nothing new: nothing read again
        assertThat(run("run", "--warehouse", w, "--refresh", "events", f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "events")))
                .containsExactly("1,a", "2,b", "3,c");
    }

    @Test
    void fullRefreshAfterADefinitionChangeRereadsUnderTheNewDefinition() throws Exception {
        Files.createDirectories(tmp.resolve("events"));
        Path orders = Files.createDirectories(tmp.resolve("orders"));
        // by seq the last version of id 1 is 'b', by seq2 it is 'a'
        Files.write(
                orders.resolve("1.jsonl"),
                List.of(
                        "{\"id\":1,\"status\":\"a\",\"seq\":1,\"seq2\":2}",
                        "{\"id\":1,\"status\":\"b\",\"seq\":2,\"seq2\":1}",
                        "{\"id\":2,\"status\":\"x\",\"seq\":3,\"seq2\":3}"));
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        Path f = pipeline("seq", "");
        assertThat(run("run", "--warehouse", w, "--refresh", "orders", f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "orders")))
                .containsExactly("1,b,2,1", "2,x,3,3");
        List<Long> before = snapshotIds(table(warehouse, "orders"));

        // SEQUENCE BY changed: the saved state cannot absorb it (K8), the table is left alone,
        // and the error names the full refresh of the table as the way out
        pipeline("seq2", "");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(
                        CapturedOutput.stderr(
                                err,
                                () ->
                                        run(
                                                "run",
                                                "--warehouse",
                                                w,
                                                "--refresh",
                                                "orders",
                                                f.toString())))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(
                        f
                                + ":7:25: FLOW_CHANGED_FOR_EXISTING_STATE: flow 'orders':"
                                + " sequence-by changed from [\"seq\"] to [\"seq2\"]")
                .contains(
                        "Restore the old definition, or rebuild table orders under the new"
                                + " definition with a full refresh: run "
                                + f
                                + " --full-refresh orders, or REFRESH STREAMING TABLE orders FULL in"
                                + " the file");
        assertThat(TableRows.toCsvLines(table(warehouse, "orders")))
                .containsExactly("1,b,2,1", "2,x,3,3");

        // refused while the table forbids resets; nothing changes
        pipeline("seq2", " TBLPROPERTIES ('pipelines.reset.allowed' = 'false')");
        assertThat(run("run", "--warehouse", w, "--full-refresh", "orders", f.toString()))
                .isEqualTo(2);
        assertThat(snapshotIds(table(warehouse, "orders"))).isEqualTo(before);

        // the REFRESH ... FULL statement in the file does what --full-refresh orders does
        pipeline(
                "seq2",
                " TBLPROPERTIES ('pipelines.reset.allowed' = 'true')",
                "REFRESH STREAMING TABLE orders FULL;\n");
        assertThat(run("run", "--warehouse", w, f.toString())).isZero();
        Table t = table(warehouse, "orders");
        assertThat(TableRows.toCsvLines(t)).containsExactly("1,a,1,2", "2,x,3,3");
        // history kept: the earlier snapshots are still there, then one delete commit
        List<Long> after = snapshotIds(t);
        assertThat(after.subList(0, before.size())).isEqualTo(before);
        Snapshot truncate = t.snapshot(after.get(before.size()));
        assertThat(truncate.operation()).isEqualTo("delete");
        assertThat(TableRows.readSnapshot(t, truncate.snapshotId())).isEmpty();
        assertThat(TableRows.readSnapshot(t, before.get(before.size() - 1))).hasSize(2);

        // and the next refresh (REFRESH STREAMING TABLE orders, the job of --refresh orders)
        // continues from the new state: nothing is read twice
        Files.write(
                orders.resolve("2.jsonl"),
                List.of("{\"id\":3,\"status\":\"y\",\"seq\":4,\"seq2\":4}"));
        pipeline("seq2", "", "REFRESH STREAMING TABLE orders;\n");
        assertThat(run("run", "--warehouse", w, f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "orders")))
                .containsExactly("1,a,1,2", "2,x,3,3", "3,y,4,4");
    }

    private static final String USERS =
            "USE SCHEMA shop;\n"
                    + "CREATE OR REFRESH STREAMING TABLE users (id INT, name STRING, seq __SEQTYPE__)\n"
                    + "  FLOW AUTO CDC FROM STREAM read_files('users', format => 'json')\n"
                    + "  KEYS (__KEY__) SEQUENCE BY seq;\n";

    /** Every file under {@code dir} with its size and modification time. */
    private static List<String> files(Path dir) throws Exception {
        List<String> out = new ArrayList<>();
        try (var walk = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) walk.sorted()::iterator) {
                if (Files.isRegularFile(p)) {
                    out.add(p + " " + Files.size(p) + " " + Files.getLastModifiedTime(p));
                }
            }
        }
        return out;
    }

    /**
     * S1, issue #13: a full refresh after a KEYS change applies the new definition's schema
     * (identifier fields, NOT NULL of the key columns) in the commit that empties the table, then
     * rebuilds it; history and change feed are kept. A change it cannot apply in place (a narrowed
     * type) is refused before anything is emptied, and by --dry-run.
     */
    @Test
    void fullRefreshAfterAKeysChangeAppliesTheNewSchema() throws Exception {
        Path users = Files.createDirectories(tmp.resolve("users"));
        Files.write(users.resolve("1.json"), List.of("{\"id\":1,\"name\":\"ann\",\"seq\":1}"));
        Files.write(users.resolve("2.json"), List.of("{\"id\":2,\"name\":\"bob\",\"seq\":2}"));
        Path f = tmp.resolve("users.sql");
        Files.writeString(f, USERS.replace("__KEY__", "id").replace("__SEQTYPE__", "BIGINT"));
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        assertThat(run("run", "--warehouse", w, f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "users")))
                .containsExactly("1,ann,1", "2,bob,2");
        List<Long> before = snapshotIds(table(warehouse, "users"));

        Files.writeString(f, USERS.replace("__KEY__", "name").replace("__SEQTYPE__", "BIGINT"));
        // the refusal is a validation error: it writes nothing to the table, not even a record
        List<String> tableFiles = files(warehouse.resolve("shop").resolve("users"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(CapturedOutput.stderr(err, () -> run("run", "--warehouse", w, f.toString())))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(
                        f
                                + ":4:9: FLOW_CHANGED_FOR_EXISTING_STATE: flow 'users': keys"
                                + " changed from [\"id\"] to [\"name\"]");
        assertThat(files(warehouse.resolve("shop").resolve("users"))).isEqualTo(tableFiles);
        assertThat(table(warehouse, "users").properties())
                .containsEntry(TableStatements.STATUS, "SUCCEEDED");

        // --dry-run names the schema change the full refresh applies, and writes nothing
        List<String> filesBefore = files(warehouse);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(
                        run(
                                out,
                                "run",
                                "--warehouse",
                                w,
                                "--full-refresh",
                                "users",
                                "--dry-run",
                                f.toString()))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "Full refresh of shop.users would apply the definition's schema:"
                                + " identifier fields [id] -> [name];"
                                + " column 'id' NOT NULL -> nullable;"
                                + " column 'name' nullable -> NOT NULL\n");
        assertThat(files(warehouse)).isEqualTo(filesBefore);

        out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, "--full-refresh", "users", f.toString()))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "Full refresh: emptied shop.users and applied the definition's schema"
                                + " (identifier fields [id] -> [name];"
                                + " column 'id' NOT NULL -> nullable;"
                                + " column 'name' nullable -> NOT NULL) (one commit)\n");
        Table t = table(warehouse, "users");
        assertThat(TableRows.toCsvLines(t)).containsExactly("1,ann,1", "2,bob,2");
        assertThat(t.schema().identifierFieldNames()).containsExactly("name");
        assertThat(t.schema().findField("id").isOptional()).isTrue();
        assertThat(t.schema().findField("name").isRequired()).isTrue();
        // history kept: the earlier snapshots, then the one delete commit, then the rebuild
        List<Long> after = snapshotIds(t);
        assertThat(after.subList(0, before.size())).isEqualTo(before);
        Snapshot truncate = t.snapshot(after.get(before.size()));
        assertThat(truncate.operation()).isEqualTo("delete");
        assertThat(TableRows.readSnapshot(t, truncate.snapshotId())).isEmpty();
        assertThat(TableRows.readSnapshot(t, before.get(before.size() - 1))).hasSize(2);
        // the change feed reads across the full refresh
        out = new ByteArrayOutputStream();
        assertThat(
                        run(
                                out,
                                "sql",
                                "--warehouse",
                                w,
                                "-e",
                                "SELECT id, name, _change_type, _commit_version FROM"
                                        + " table_changes('shop.users', 1) ORDER BY"
                                        + " _commit_version, _change_type, id"))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "id,name,_change_type,_commit_version\n"
                                + "1,ann,insert,1\n"
                                + "2,bob,insert,1\n"
                                + "1,ann,delete,2\n"
                                + "2,bob,delete,2\n"
                                + "1,ann,insert,3\n"
                                + "2,bob,insert,3\n");

        // a change the full refresh cannot apply in place: refused before anything is written,
        // and by --dry-run
        Files.writeString(f, USERS.replace("__KEY__", "name").replace("__SEQTYPE__", "INT"));
        filesBefore = files(warehouse);
        String refused =
                "TARGET_SCHEMA_MISMATCH: a full refresh cannot rebuild table shop.users under the"
                        + " flow's definition: column 'seq' has type BIGINT (Iceberg long) in the"
                        + " table but INT (Iceberg int) in the definition, a change Iceberg cannot"
                        + " make in place. Nothing was emptied or written. Fix: change the"
                        + " definition back, or drop the table and rebuild it (DROP TABLE"
                        + " shop.users; in the file before its definition, or run with"
                        + " --from-scratch: its history and change feed are lost)";
        for (List<String> args :
                List.of(
                        List.of("run", "--warehouse", w, "--full-refresh", "users", "--dry-run"),
                        List.of("run", "--warehouse", w, "--full-refresh", "users"))) {
            List<String> line = new ArrayList<>(args);
            line.add(f.toString());
            err = new ByteArrayOutputStream();
            assertThat(CapturedOutput.stderr(err, () -> run(line.toArray(new String[0]))))
                    .isEqualTo(2);
            // at the table's CREATE statement
            assertThat(err.toString(StandardCharsets.UTF_8)).contains(f + ":2:1: " + refused);
            assertThat(files(warehouse)).isEqualTo(filesBefore);
        }
        assertThat(TableRows.toCsvLines(table(warehouse, "users")))
                .containsExactly("1,ann,1", "2,bob,2");
    }

    /**
     * S1: a changed PARTITIONED BY of a table that holds rows is refused naming both partitionings
     * and the full refresh as the fix (an equality delete applies only to data files of its own
     * partition spec), writing nothing; the full refresh replaces the partition spec in the commit
     * that empties the table, and later updates and deletes apply under the new spec. A change to
     * STORED AS SCD TYPE 2 is refused over the saved state and rebuilt by a full refresh with the
     * SCD2 schema (__START_AT, __END_AT, identifier fields KEYS + __START_AT).
     */
    @Test
    void fullRefreshAfterAPartitioningOrScdTypeChangeRebuildsTheTable() throws Exception {
        Path users = Files.createDirectories(tmp.resolve("users"));
        Files.write(users.resolve("1.json"), List.of("{\"id\":1,\"name\":\"ann\",\"seq\":1}"));
        Files.write(users.resolve("2.json"), List.of("{\"id\":2,\"name\":\"bob\",\"seq\":2}"));
        String unpartitioned = USERS.replace("__KEY__", "id").replace("__SEQTYPE__", "BIGINT");
        String partitioned =
                unpartitioned.replace(
                        "  FLOW AUTO CDC", "  PARTITIONED BY (bucket(4, id))\n  FLOW AUTO CDC");
        Path f = tmp.resolve("users.sql");
        Files.writeString(f, unpartitioned);
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        assertThat(run("run", "--warehouse", w, f.toString())).isZero();

        Files.writeString(f, partitioned);
        List<String> filesBefore = files(warehouse.resolve("shop").resolve("users"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(CapturedOutput.stderr(err, () -> run("run", "--warehouse", w, f.toString())))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(
                        f
                                + ":2:1: TARGET_SCHEMA_MISMATCH: table shop.users is partitioned"
                                + " by [] but its"
                                + " definition says [bucket[4](id)]; a table that holds rows keeps"
                                + " its partitioning (an equality delete applies only to data"
                                + " files of its own partition spec). Fix: rebuild the table under"
                                + " the new partitioning with a full refresh (REFRESH STREAMING"
                                + " TABLE users FULL in a pipeline file, or run FILE.sql"
                                + " --full-refresh users; history and change feed kept; a flows"
                                + " file: ingest --from-scratch, which drops them), or change the"
                                + " definition back");
        assertThat(files(warehouse.resolve("shop").resolve("users"))).isEqualTo(filesBefore);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, "--full-refresh", "users", f.toString()))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "Full refresh: emptied shop.users and applied the definition's schema"
                                + " (partitioned by [] -> [bucket[4](id)]) (one commit)\n");
        Table t = table(warehouse, "users");
        assertThat(t.spec().fields()).hasSize(1);
        assertThat(t.spec().fields().get(0).transform().toString()).isEqualTo("bucket[4]");
        assertThat(TableRows.toCsvLines(t)).containsExactly("1,ann,1", "2,bob,2");
        // every live data file is written under the new spec
        try (var tasks = t.newScan().planFiles()) {
            for (var task : tasks) {
                assertThat(task.file().specId()).isEqualTo(t.spec().specId());
            }
        }
        // an update and a delete after the change apply to the rows written under the new spec
        Files.write(users.resolve("3.json"), List.of("{\"id\":1,\"name\":\"amy\",\"seq\":3}"));
        assertThat(run("run", "--warehouse", w, f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "users")))
                .containsExactly("1,amy,3", "2,bob,2");

        // SCD type 1 -> 2: refused over the saved state, then rebuilt by a full refresh
        Files.writeString(
                f,
                partitioned.replace("SEQUENCE BY seq;", "SEQUENCE BY seq STORED AS SCD TYPE 2;"));
        err = new ByteArrayOutputStream();
        assertThat(CapturedOutput.stderr(err, () -> run("run", "--warehouse", w, f.toString())))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(f + ":2:1: FLOW_CHANGED_FOR_EXISTING_STATE: flow 'users': scd-type");
        out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, "--full-refresh", "users", f.toString()))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "Full refresh: emptied shop.users and applied the definition's schema"
                                + " (identifier fields [id] -> [__START_AT, id]; add column"
                                + " '__START_AT' BIGINT (Iceberg long) NOT NULL; add column"
                                + " '__END_AT' BIGINT (Iceberg long)) (one commit)\n");
        t = table(warehouse, "users");
        assertThat(t.schema().identifierFieldNames()).containsExactlyInAnyOrder("id", "__START_AT");
        // every file read again: ann (seq 1) closed by amy (seq 3), bob current
        assertThat(TableRows.toCsvLines(t))
                .containsExactlyInAnyOrder("1,ann,1,1,3", "1,amy,3,3,", "2,bob,2,2,");
    }

    /**
     * S8: CONSTRAINT ... EXPECT on the flow into a streaming table — a kept violation is applied
     * and counted in the summary, a DROP ROW violation goes to the quarantine table with its
     * reason, a FAIL UPDATE violation fails the run naming the record and commits nothing.
     */
    @Test
    void expectationsKeepDropToQuarantineAndFailTheUpdate() throws Exception {
        Path orders = Files.createDirectories(tmp.resolve("orders"));
        Files.write(
                orders.resolve("1.jsonl"),
                List.of(
                        "{\"id\":1,\"status\":\"a\",\"seq\":1}",
                        "{\"id\":2,\"status\":\"bad\",\"seq\":2}",
                        "{\"id\":3,\"status\":null,\"seq\":3}",
                        "{\"id\":1,\"status\":\"bad\",\"seq\":4}"));
        String table =
                "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE orders (\n"
                        + "  id INT, status STRING, seq BIGINT,\n"
                        + "  CONSTRAINT not_bad EXPECT (status <> \"bad\"),\n"
                        + "  CONSTRAINT has_status EXPECT (status IS NOT NULL) ON VIOLATION DROP"
                        + " ROW FAIL\n"
                        + ") FLOW AUTO CDC FROM STREAM read_files('orders', format => 'json')\n"
                        + "  KEYS (id) SEQUENCE BY seq;\n";
        Path f = tmp.resolve("shop.sql");
        Files.writeString(f, table.replace(" FAIL\n", "\n"));
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, f.toString())).isZero();
        // 'bad' violates not_bad (kept, counted twice); the NULL status passes not_bad and
        // violates has_status (dropped)
        assertThat(TableRows.toCsvLines(table(warehouse, "orders")))
                .containsExactly("1,bad,4", "2,bad,2");
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "expectation orders.not_bad: 2 violated\n"
                                + "expectation orders.has_status: 1 violated\n");
        assertThat(quarantine(warehouse))
                .containsExactly(
                        "orders | EXPECTATION_VIOLATED | expectation 'has_status' (status IS NOT"
                                + " NULL) ON VIOLATION DROP ROW violated by the record with KEYS"
                                + " {id=3}");

        // FAIL UPDATE: the run fails naming the record; nothing of it is committed
        List<Long> before = snapshotIds(table(warehouse, "orders"));
        Files.write(
                orders.resolve("2.jsonl"),
                List.of(
                        "{\"id\":4,\"status\":\"ok\",\"seq\":5}",
                        "{\"id\":5,\"status\":\"x\",\"seq\":5000}"));
        Files.writeString(
                f,
                table.replace(
                        " FAIL\n",
                        ",\n  CONSTRAINT small_seq EXPECT (seq < 1000) ON VIOLATION FAIL UPDATE\n"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(runFailing(err, "run", "--warehouse", w, f.toString())).isNotZero();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(
                        "EXPECTATION_FAILED: flow 'orders': expectation 'small_seq' (seq < 1000)"
                                + " ON VIOLATION FAIL UPDATE failed on the record with KEYS {id=5},"
                                + " values {id=5, status=x, seq=5000");
        assertThat(snapshotIds(table(warehouse, "orders"))).isEqualTo(before);
        assertThat(TableRows.toCsvLines(table(warehouse, "orders")))
                .containsExactly("1,bad,4", "2,bad,2");
        // S9: the failed refresh is recorded on the table: no version written, the error
        java.util.Map<String, String> props = table(warehouse, "orders").properties();
        assertThat(props)
                .containsEntry(TableStatements.STATUS, "FAILED")
                .containsEntry(TableStatements.VERSIONS, "0")
                .containsEntry(TableStatements.FULL, "false")
                .doesNotContainKey(TableStatements.RECORDS);
        assertThat(props.get(TableStatements.ERROR))
                .contains(
                        "EXPECTATION_FAILED: flow 'orders': expectation 'small_seq' (seq < 1000)"
                                + " ON VIOLATION FAIL UPDATE failed on the record with KEYS"
                                + " {id=5}");
    }

    /**
     * S9: DESCRIBE TABLE EXTENDED after the file's refreshes prints the definition, the schedule
     * and the last refresh as recorded in the table's properties (records read, versions written);
     * DROP TABLE drops the table and its refresh job's saved state, so the REFRESH after it in the
     * same file re-creates the table from every file, each read once.
     */
    @Test
    void describeShowsTheLastRefreshAndDropTableStartsTheTableAfresh() throws Exception {
        Path events = Files.createDirectories(tmp.resolve("events"));
        Files.createDirectories(tmp.resolve("orders"));
        Files.write(
                events.resolve("1.jsonl"),
                List.of("{\"id\":1,\"note\":\"a\"}", "{\"id\":2,\"note\":\"b\"}"));
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        Path f =
                pipeline(
                        "seq",
                        "",
                        "REFRESH STREAMING TABLE events;\nDESCRIBE TABLE EXTENDED events;\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, f.toString())).isZero();
        Table t = table(warehouse, "events");
        java.util.Map<String, String> p = t.properties();
        int versions = snapshotIds(t).size();
        assertThat(versions).isPositive();
        assertThat(p)
                .containsEntry(TableStatements.RECORDS, "2")
                .containsEntry(TableStatements.VERSIONS, Integer.toString(versions))
                .containsEntry(TableStatements.STATUS, "SUCCEEDED");
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(printed.substring(printed.indexOf("Table shop.events\n")))
                .isEqualTo(
                        "Table shop.events\n"
                                + "Columns:\n"
                                + "  id int\n"
                                + "  note string\n"
                                + "Definition: "
                                + f
                                + ":2:1\n"
                                + "  flow: events\n"
                                + "  source: read_files "
                                + tmp.resolve("events")
                                + " (format json, table events)\n"
                                + "  kind: append-only (AS SELECT * FROM STREAM ...)\n"
                                + "  on-schema-change: fail\n"
                                + "  on-invalid-record: quarantine\n"
                                + "Schedule: EVERY 1 HOUR\n"
                                + "Last refresh:\n"
                                + "  start: "
                                + p.get(TableStatements.START)
                                + "\n"
                                + "  end: "
                                + p.get(TableStatements.END)
                                + "\n"
                                + "  full: false\n"
                                + "  records: 2\n"
                                + "  versions written: "
                                + versions
                                + "\n"
                                + "  status: SUCCEEDED\n"
                                + "  error: -\n");

        // a new file: the next refresh reads it alone and writes one version
        Files.write(events.resolve("2.jsonl"), List.of("{\"id\":3,\"note\":\"c\"}"));
        assertThat(run("run", "--warehouse", w, f.toString())).isZero();
        t = table(warehouse, "events");
        assertThat(t.properties())
                .containsEntry(TableStatements.RECORDS, "1")
                .containsEntry(
                        TableStatements.VERSIONS,
                        Integer.toString(snapshotIds(t).size() - versions));
        assertThat(TableRows.toCsvLines(t)).containsExactly("1,a", "2,b", "3,c");
        List<Long> before = snapshotIds(t);

        // DROP TABLE, then the refresh in the same file: a new table from every file, once
        pipeline("seq", "", "DROP TABLE events;\nREFRESH STREAMING TABLE events;\n");
        ByteArrayOutputStream dropped = new ByteArrayOutputStream();
        assertThat(run(dropped, "run", "--warehouse", w, f.toString())).isZero();
        assertThat(dropped.toString(StandardCharsets.UTF_8))
                .startsWith(
                        "DROP TABLE events: dropped shop.events; deleted the saved state of job"
                                + " shop-refresh-events\n");
        t = table(warehouse, "events");
        assertThat(TableRows.toCsvLines(t)).containsExactly("1,a", "2,b", "3,c");
        assertThat(snapshotIds(t)).doesNotContainAnyElementsOf(before);
        assertThat(t.properties())
                .containsEntry(TableStatements.RECORDS, "3")
                .containsEntry(TableStatements.VERSIONS, Integer.toString(snapshotIds(t).size()));

        // without IF EXISTS a missing table fails the file before anything runs
        pipeline("seq", "", "DROP TABLE orders;\nREFRESH STREAMING TABLE events;\n");
        List<Long> kept = snapshotIds(table(warehouse, "events"));
        assertThat(run("run", "--warehouse", w, f.toString())).isEqualTo(2);
        assertThat(snapshotIds(table(warehouse, "events"))).isEqualTo(kept);
    }

    /**
     * S9, DROP_SHARES_STATE: a DROP TABLE run from a file of DROP statements alone deletes the
     * saved state of the job that writes the table, as the same DROP inside the job's own file
     * does, so the next run of that job re-creates the table from every file; while that job's
     * state also holds a table that stays, the DROP is refused naming the job and nothing is
     * dropped.
     */
    @Test
    void dropTableFromAnotherFileDeletesTheOwningJobsStateOrIsRefused() throws Exception {
        Path cdc = Files.createDirectories(tmp.resolve("cdc"));
        Files.write(
                cdc.resolve("1.jsonl"),
                List.of(
                        debezium("customers", "\"id\":1,\"name\":\"a\"", 1),
                        debezium("customers", "\"id\":2,\"name\":\"b\"", 2),
                        debezium("payments", "\"id\":7,\"amount\":70", 3)));
        Path f = tmp.resolve("cust.sql");
        Files.writeString(
                f,
                "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE customers (id INT, name STRING)\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('cdc', table => 'customers')"
                        + " KEYS (id);\n"
                        + "CREATE OR REFRESH STREAMING TABLE payments (id INT, amount INT)\n"
                        + "  FLOW AUTO CDC FROM STREAM read_files('cdc', table => 'payments')"
                        + " KEYS (id);\n");
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        assertThat(run("run", "--warehouse", w, f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "customers")))
                .containsExactly("1,a", "2,b");
        assertThat(TableRows.toCsvLines(table(warehouse, "payments"))).containsExactly("7,70");
        List<Long> before = snapshotIds(table(warehouse, "customers"));

        // job 'cust' also holds payments, which would stay: refused, nothing dropped
        Path dropOne = tmp.resolve("drop-one.sql");
        Files.writeString(dropOne, "USE SCHEMA shop;\nDROP TABLE customers;\n");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(
                        CapturedOutput.stderr(
                                err, () -> run("run", "--warehouse", w, dropOne.toString())))
                .isEqualTo(2);
        Path state = warehouse.resolve(".changeflow/checkpoints/cust").toAbsolutePath();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .isEqualTo(
                        "error: "
                                + dropOne
                                + ":2:1: DROP_SHARES_STATE: DROP TABLE customers: the saved state"
                                + " of job 'cust' ("
                                + state
                                + "), which its next run resumes from, holds the flows of"
                                + " shop.customers, shop.payments, and table shop.payments"
                                + " stays; drop those tables together (add DROP TABLE"
                                + " shop.payments; to this file), or rebuild shop.customers in"
                                + " job 'cust' itself (run its file with --full-refresh naming"
                                + " every table of the job, or ingest --from-scratch)\n");
        assertThat(snapshotIds(table(warehouse, "customers"))).isEqualTo(before);
        assertThat(Files.isDirectory(state)).isTrue();

        // every table of the job: dropped with its state, as a DROP inside cust.sql would be
        Path dropBoth = tmp.resolve("drop-both.sql");
        Files.writeString(
                dropBoth, "USE SCHEMA shop;\nDROP TABLE customers;\nDROP TABLE payments;\n");
        ByteArrayOutputStream dropped = new ByteArrayOutputStream();
        assertThat(run(dropped, "run", "--warehouse", w, dropBoth.toString())).isZero();
        assertThat(dropped.toString(StandardCharsets.UTF_8))
                .isEqualTo(
                        "DROP TABLE customers: dropped shop.customers; deleted the saved state of"
                                + " job cust\n"
                                + "DROP TABLE payments: dropped shop.payments\n");
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(cat.tableExists(TableIdentifier.of("shop", "customers"))).isFalse();
        assertThat(cat.tableExists(TableIdentifier.of("shop", "payments"))).isFalse();
        assertThat(Files.exists(state)).isFalse();

        // the job's next run starts without state and rebuilds both tables from every file
        assertThat(run("run", "--warehouse", w, f.toString())).isZero();
        Table t = table(warehouse, "customers");
        assertThat(TableRows.toCsvLines(t)).containsExactly("1,a", "2,b");
        assertThat(snapshotIds(t)).doesNotContainAnyElementsOf(before);
        assertThat(TableRows.toCsvLines(table(warehouse, "payments"))).containsExactly("7,70");
    }

    /** A Debezium insert of {@code fields} into {@code table} at {@code lsn}. */
    private static String debezium(String table, String fields, long lsn) {
        return "{\"before\":null,\"after\":{"
                + fields
                + "},\"source\":{\"schema\":\"shop\",\"table\":\""
                + table
                + "\",\"lsn\":"
                + lsn
                + "},\"op\":\"c\"}";
    }

    /**
     * S8 on an append flow ({@code CREATE STREAMING TABLE ... AS SELECT ... FROM STREAM
     * read_files}): the expectations check the rows the flow appends, over the table's columns (the
     * select list's): a kept violation is appended and counted, a DROP ROW violation goes to the
     * quarantine naming the record's values, a FAIL UPDATE violation fails the run naming the
     * record and commits nothing; an expectation over a column the select list drops is
     * UNKNOWN_COLUMN at the CONSTRAINT before anything runs.
     */
    @Test
    void expectationsOnAnAppendFlowCheckTheAppendedRows() throws Exception {
        Path events = Files.createDirectories(tmp.resolve("events"));
        Files.write(
                events.resolve("1.jsonl"),
                List.of(
                        "{\"id\":1,\"note\":\"a\",\"n\":1}",
                        "{\"id\":2,\"note\":\"b\",\"n\":-5}",
                        "{\"id\":3,\"note\":null,\"n\":2}"));
        String table =
                "USE SCHEMA shop;\n"
                        + "CREATE OR REFRESH STREAMING TABLE notes (\n"
                        + "  CONSTRAINT positive EXPECT (amount > 0),\n"
                        + "  CONSTRAINT has_note EXPECT (note IS NOT NULL) ON VIOLATION DROP ROW"
                        + " FAIL\n"
                        + ") AS SELECT id, note, n * 10 AS amount\n"
                        + "  FROM STREAM read_files('events', format => 'json');\n";
        Path f = tmp.resolve("notes.sql");
        Files.writeString(f, table.replace(" FAIL\n", "\n"));
        Path warehouse = tmp.resolve("warehouse");
        String w = warehouse.toString();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        assertThat(run(out, "run", "--warehouse", w, f.toString())).isZero();
        assertThat(TableRows.toCsvLines(table(warehouse, "notes")))
                .containsExactly("1,a,10", "2,b,-50");
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains(
                        "expectation notes.positive: 1 violated\n"
                                + "expectation notes.has_note: 1 violated\n");
        assertThat(quarantine(warehouse))
                .containsExactly(
                        "notes | EXPECTATION_VIOLATED | expectation 'has_note' (note IS NOT NULL)"
                                + " ON VIOLATION DROP ROW violated by the record with values {id=3,"
                                + " note=null, amount=20}");

        // FAIL UPDATE: the run fails naming the record; nothing of it is committed
        List<Long> before = snapshotIds(table(warehouse, "notes"));
        Files.write(
                events.resolve("2.jsonl"),
                List.of(
                        "{\"id\":4,\"note\":\"c\",\"n\":3}",
                        "{\"id\":5,\"note\":\"d\",\"n\":500}"));
        Files.writeString(
                f,
                table.replace(
                        " FAIL\n",
                        ",\n  CONSTRAINT small EXPECT (amount < 1000) ON VIOLATION FAIL UPDATE\n"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        assertThat(runFailing(err, "run", "--warehouse", w, f.toString())).isNotZero();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(
                        "EXPECTATION_FAILED: flow 'notes': expectation 'small' (amount < 1000) ON"
                                + " VIOLATION FAIL UPDATE failed on the record with values {id=5,"
                                + " note=d, amount=5000}");
        assertThat(snapshotIds(table(warehouse, "notes"))).isEqualTo(before);

        // an expectation over a column the select list drops: UNKNOWN_COLUMN at the CONSTRAINT
        Files.writeString(
                f,
                table.replace(
                        " FAIL\n",
                        ",\n  CONSTRAINT small_n EXPECT (n < 1000) ON VIOLATION DROP ROW\n"));
        ByteArrayOutputStream bad = new ByteArrayOutputStream();
        assertThat(runFailing(bad, "run", "--warehouse", w, f.toString())).isEqualTo(2);
        assertThat(bad.toString(StandardCharsets.UTF_8))
                .startsWith(
                        "error: "
                                + f
                                + ":5:3: UNKNOWN_COLUMN: flow 'notes': expectation 'small_n' (n <"
                                + " 1000) is not a valid Flink SQL boolean expression over the"
                                + " columns [id, note, amount]: ");
        assertThat(snapshotIds(table(warehouse, "notes"))).isEqualTo(before);
    }

    private static List<String> quarantine(Path warehouse) throws Exception {
        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        List<String> rows = new ArrayList<>();
        for (Record r :
                TableRows.read(
                        cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine")))) {
            rows.add(
                    r.getField("flow")
                            + " | "
                            + r.getField("reason")
                            + " | "
                            + r.getField("detail"));
        }
        return rows;
    }

    private static List<Long> snapshotIds(Table t) {
        List<Long> ids = new ArrayList<>();
        for (Snapshot s : t.snapshots()) {
            ids.add(s.snapshotId());
        }
        return ids;
    }

    /**
     * Runs the command line in-process, what it printed to stderr into {@code err}; its exit code.
     */
    private static int runFailing(ByteArrayOutputStream err, String... args) {
        return CapturedOutput.stderr(err, () -> run(new ByteArrayOutputStream(), args));
    }

    /** As {@link #run(String...)}, also copying what it printed to {@code out}. */
    private static int run(ByteArrayOutputStream out, String... args) {
        return CapturedOutput.stdoutEchoed(out, () -> Main.execute(args));
    }

    /** Runs the command line in-process, printing what it printed; returns the exit code. */
    private static int run(String... args) {
        return run(new ByteArrayOutputStream(), args);
    }
}
