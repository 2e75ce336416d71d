package dev.changeflow.jobs.demo;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.zip.GZIPOutputStream;

/**
 * Generates TPC-B-like Debezium change events (PostgreSQL connector shape, with the JSON schema
 * wrapper) for the four pgbench tables, with a fixed seed, and keeps the truth they must produce.
 *
 * <p>What it emits: a snapshot ({@code op = r}, all at one LSN), then transactions that update an
 * account, a teller and a branch and insert a history row; deletes of accounts (each followed by a
 * Kafka tombstone line) and later re-inserts ({@code op = c}); some updates without {@code before}
 * (K5) and some whose {@code before} equals {@code after}. Delivery is then made imperfect the way
 * real pipelines are: about 3% of keyed records are delivered twice (at-least-once, K7) and records
 * are shuffled within windows of {@link #SHUFFLE_WINDOW} lines, so per-key order is destroyed and
 * only {@code source.lsn} tells the order (A2).
 *
 * <p>Lines have the capture form {@code {"key": {...}, "value": {"schema":..., "payload":...},
 * "topic": "tpcb.public.<table>"}}.
 */
public final class TpcbGenerator {
    public static final int SHUFFLE_WINDOW = 64;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    /** Final rows per table (key → column values in table order), the oracle of the demo. */
    public final Map<String, TreeMap<Integer, Object[]>> finalRows = new TreeMap<>();

    /**
     * SCD type 2 truth for pgbench_accounts: one {aid, bid, abalance, filler, start, end|null} per
     * version.
     */
    public final List<Object[]> accountVersions = new ArrayList<>();

    /** History rows (multiset): {tid, bid, aid, delta, mtimeMicros, filler}. */
    public final List<Object[]> history = new ArrayList<>();

    public int events;
    public int duplicates;
    public int deletes;

    private final Random random;
    private final int branches;
    private final int tellersPerBranch;
    private final int accountsPerBranch;
    private final int transactions;
    private long lsn = 30_000_000L;
    private long clockMicros = 1_796_000_000_000_000L;

    private final List<ObjectNode> lines = new ArrayList<>();

    /** Per-account events in LSN order: {lsn, row or null for delete}. */
    private final Map<Integer, List<Object[]>> accountEvents = new TreeMap<>();

    public TpcbGenerator(
            long seed,
            int branches,
            int tellersPerBranch,
            int accountsPerBranch,
            int transactions) {
        this.random = new Random(seed);
        this.branches = branches;
        this.tellersPerBranch = tellersPerBranch;
        this.accountsPerBranch = accountsPerBranch;
        this.transactions = transactions;
        finalRows.put("pgbench_accounts", new TreeMap<>());
        finalRows.put("pgbench_branches", new TreeMap<>());
        finalRows.put("pgbench_tellers", new TreeMap<>());
    }

    /** Generates the events and writes them gzip-compressed to {@code file}. */
    public void write(Path file) throws IOException {
        generate();
        Files.createDirectories(file.toAbsolutePath().getParent());
        try (BufferedWriter w =
                new BufferedWriter(
                        new OutputStreamWriter(
                                new GZIPOutputStream(Files.newOutputStream(file)),
                                StandardCharsets.UTF_8))) {
            for (ObjectNode line : lines) {
                w.write(JSON.writeValueAsString(line));
                w.write('\n');
            }
        }
    }

    private void generate() {
        TreeMap<Integer, Object[]> accounts = finalRows.get("pgbench_accounts");
        TreeMap<Integer, Object[]> tellers = finalRows.get("pgbench_tellers");
        TreeMap<Integer, Object[]> branchRows = finalRows.get("pgbench_branches");
        long snapshotLsn = lsn;
        for (int b = 1; b <= branches; b++) {
            Object[] row = {b, 0, null};
            branchRows.put(b, row);
            emit("pgbench_branches", "bid", b, "r", null, row, snapshotLsn, false);
        }
        for (int t = 1; t <= branches * tellersPerBranch; t++) {
            Object[] row = {t, (t - 1) / tellersPerBranch + 1, 0, null};
            tellers.put(t, row);
            emit("pgbench_tellers", "tid", t, "r", null, row, snapshotLsn, false);
        }
        int nAccounts = branches * accountsPerBranch;
        for (int a = 1; a <= nAccounts; a++) {
            Object[] row = {a, (a - 1) / accountsPerBranch + 1, 0, pad("", 84)};
            accounts.put(a, row);
            accountEvent(a, snapshotLsn, row);
            emit("pgbench_accounts", "aid", a, "r", null, row, snapshotLsn, false);
        }
        List<Integer> deleted = new ArrayList<>();
        for (int tx = 0; tx < transactions; tx++) {
            lsn += 1_000 + random.nextInt(500);
            int aid = 1 + random.nextInt(nAccounts);
            int tid = 1 + random.nextInt(branches * tellersPerBranch);
            int bid = (int) tellers.get(tid)[1];
            int delta = random.nextInt(20) == 0 ? 0 : random.nextInt(10_001) - 5_000;
            Object[] acc = accounts.get(aid);
            if (acc != null) {
                Object[] after = {aid, acc[1], (int) acc[2] + delta, acc[3]};
                boolean noBefore = random.nextInt(20) == 0;
                emit(
                        "pgbench_accounts",
                        "aid",
                        aid,
                        "u",
                        noBefore ? null : acc,
                        after,
                        nextLsn(),
                        random.nextInt(33) == 0);
                accounts.put(aid, after);
                accountEvent(aid, lsn, after);
            }
            Object[] tel = tellers.get(tid);
            Object[] telAfter = {tid, tel[1], (int) tel[2] + delta, tel[3]};
            emit(
                    "pgbench_tellers",
                    "tid",
                    tid,
                    "u",
                    tel,
                    telAfter,
                    nextLsn(),
                    random.nextInt(33) == 0);
            tellers.put(tid, telAfter);
            Object[] br = branchRows.get(bid);
            Object[] brAfter = {bid, (int) br[1] + delta, br[2]};
            emit(
                    "pgbench_branches",
                    "bid",
                    bid,
                    "u",
                    br,
                    brAfter,
                    nextLsn(),
                    random.nextInt(33) == 0);
            branchRows.put(bid, brAfter);
            clockMicros += 1_000 + random.nextInt(5_000);
            Object[] hist = {tid, bid, aid, delta, clockMicros, null};
            history.add(hist);
            emit("pgbench_history", null, 0, "c", null, hist, nextLsn(), false);
            if (tx % 50 == 25) {
                int victim = 1 + random.nextInt(nAccounts);
                Object[] old = accounts.remove(victim);
                if (old != null) {
                    emit(
                            "pgbench_accounts",
                            "aid",
                            victim,
                            "d",
                            old,
                            null,
                            nextLsn(),
                            random.nextInt(10) == 0);
                    accountEvent(victim, lsn, null);
                    deleted.add(victim);
                    deletes++;
                }
            }
            if (tx % 50 == 40 && !deleted.isEmpty()) {
                int back = deleted.remove(random.nextInt(deleted.size()));
                if (!accounts.containsKey(back)) {
                    Object[] row = {
                        back, (back - 1) / accountsPerBranch + 1, random.nextInt(1000), pad("", 84)
                    };
                    emit("pgbench_accounts", "aid", back, "c", null, row, nextLsn(), false);
                    accounts.put(back, row);
                    accountEvent(back, lsn, row);
                }
            }
        }
        shuffle();
        deriveVersions();
    }

    private long nextLsn() {
        lsn += 8 + random.nextInt(200);
        return lsn;
    }

    private void accountEvent(int aid, long at, Object[] row) {
        accountEvents.computeIfAbsent(aid, k -> new ArrayList<>()).add(new Object[] {at, row});
    }

    /** A4 applied in LSN order: a changed row opens a version, a delete closes the current one. */
    private void deriveVersions() {
        for (Map.Entry<Integer, List<Object[]>> e : accountEvents.entrySet()) {
            Object[] open = null;
            for (Object[] ev : e.getValue()) {
                long at = (long) ev[0];
                Object[] row = (Object[]) ev[1];
                if (row == null) {
                    if (open != null) {
                        open[5] = at;
                        open = null;
                    }
                    continue;
                }
                if (open != null && Arrays.equals(Arrays.copyOf(open, 4), row)) {
                    continue;
                }
                if (open != null) {
                    open[5] = at;
                }
                open = new Object[] {row[0], row[1], row[2], row[3], at, null};
                accountVersions.add(open);
            }
        }
    }

    private void shuffle() {
        for (int from = 0; from < lines.size(); from += SHUFFLE_WINDOW) {
            Collections.shuffle(
                    lines.subList(from, Math.min(lines.size(), from + SHUFFLE_WINDOW)), random);
        }
    }

    private void emit(
            String table,
            String keyName,
            int key,
            String op,
            Object[] before,
            Object[] after,
            long at,
            boolean duplicate) {
        ObjectNode line = F.objectNode();
        if (keyName != null) {
            line.set("key", F.objectNode().put(keyName, key));
        } else {
            line.putNull("key");
        }
        ObjectNode value = F.objectNode();
        value.set("schema", envelopeSchema(table));
        ObjectNode payload = value.putObject("payload");
        payload.set("before", before == null ? F.nullNode() : row(table, before));
        payload.set("after", after == null ? F.nullNode() : row(table, after));
        ObjectNode source = payload.putObject("source");
        source.put("version", "3.6.1.Final").put("connector", "postgresql").put("name", "tpcb");
        source.put("ts_ms", clockMicros / 1000).put("snapshot", op.equals("r") ? "true" : "false");
        source.put("db", "tpcb")
                .put("schema", "public")
                .put("table", table)
                .put("txId", 700 + lines.size() / 4)
                .put("lsn", at);
        payload.put("op", op).put("ts_ms", clockMicros / 1000 + 50);
        line.set("value", value);
        line.put("topic", "tpcb.public." + table);
        lines.add(line);
        events++;
        if (duplicate) {
            lines.add(line.deepCopy());
            events++;
            duplicates++;
        }
        if (op.equals("d")) {
            ObjectNode tomb = F.objectNode();
            tomb.set("key", line.get("key"));
            tomb.putNull("value");
            tomb.put("topic", "tpcb.public." + table);
            lines.add(tomb);
            events++;
        }
    }

    private static final String[][] COLUMNS = {
        {"pgbench_accounts", "aid:int32", "bid:int32", "abalance:int32", "filler:string"},
        {"pgbench_branches", "bid:int32", "bbalance:int32", "filler:string"},
        {"pgbench_tellers", "tid:int32", "bid:int32", "tbalance:int32", "filler:string"},
        {
            "pgbench_history",
            "tid:int32",
            "bid:int32",
            "aid:int32",
            "delta:int32",
            "mtime:micros",
            "filler:string"
        }
    };

    private static String[] columns(String table) {
        for (String[] c : COLUMNS) {
            if (c[0].equals(table)) {
                return c;
            }
        }
        throw new IllegalArgumentException(table);
    }

    private static ObjectNode row(String table, Object[] values) {
        String[] cols = columns(table);
        ObjectNode o = F.objectNode();
        for (int i = 1; i < cols.length; i++) {
            String name = cols[i].substring(0, cols[i].indexOf(':'));
            Object v = values[i - 1];
            if (v == null) {
                o.putNull(name);
            } else if (v instanceof Integer) {
                o.put(name, (Integer) v);
            } else if (v instanceof Long) {
                o.put(name, (Long) v);
            } else {
                o.put(name, v.toString());
            }
        }
        return o;
    }

    private static ObjectNode envelopeSchema(String table) {
        String[] cols = columns(table);
        ObjectNode rowSchema = F.objectNode().put("type", "struct");
        ArrayNode fields = rowSchema.putArray("fields");
        for (int i = 1; i < cols.length; i++) {
            String[] nt = cols[i].split(":");
            ObjectNode f = fields.addObject();
            switch (nt[1]) {
                case "micros":
                    f.put("type", "int64")
                            .put("optional", true)
                            .put("name", "io.debezium.time.MicroTimestamp")
                            .put("version", 1);
                    break;
                case "string":
                    f.put("type", "string").put("optional", true);
                    break;
                default:
                    f.put("type", nt[1]).put("optional", i != 1 || table.equals("pgbench_history"));
            }
            f.put("field", nt[0]);
        }
        rowSchema.put("optional", true).put("name", "tpcb.public." + table + ".Value");
        ObjectNode env = F.objectNode().put("type", "struct");
        ArrayNode envFields = env.putArray("fields");
        envFields.add(rowSchema.deepCopy().put("field", "before"));
        envFields.add(rowSchema.deepCopy().put("field", "after"));
        ObjectNode source = envFields.addObject().put("type", "struct");
        ArrayNode sf = source.putArray("fields");
        for (String s :
                new String[] {
                    "version:string",
                    "connector:string",
                    "name:string",
                    "ts_ms:int64",
                    "snapshot:string",
                    "db:string",
                    "schema:string",
                    "table:string",
                    "txId:int64",
                    "lsn:int64"
                }) {
            String[] nt = s.split(":");
            sf.addObject()
                    .put("type", nt[1])
                    .put("optional", !nt[0].equals("version"))
                    .put("field", nt[0]);
        }
        source.put("optional", false)
                .put("name", "io.debezium.connector.postgresql.Source")
                .put("field", "source");
        envFields.addObject().put("type", "string").put("optional", false).put("field", "op");
        envFields.addObject().put("type", "int64").put("optional", true).put("field", "ts_ms");
        env.put("optional", false)
                .put("name", "tpcb.public." + table + ".Envelope")
                .put("version", 2);
        return env;
    }

    private static String pad(String s, int n) {
        StringBuilder b = new StringBuilder(s);
        while (b.length() < n) {
            b.append(' ');
        }
        return b.toString();
    }
}
