package dev.changeflow.e2e.bench;

import dev.changeflow.sinks.iceberg.TableRows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Seeded generator of Debezium change records for {@code pgbench_accounts} (the capture's line
 * shape: {@code {"key":..,"value":{before,after,source{lsn,..},op,..},"topic":..}}) over {@code
 * keys} keys: each event picks a key uniformly; an absent key is inserted ({@code c}), a present
 * one is deleted with probability {@code deleteRatio} ({@code d}, followed by a tombstone) or else
 * updated ({@code u}, new {@code abalance}). {@code source.lsn} grows by 8 per event. Delivery is
 * then made imperfect: a fraction {@code duplicateFraction} of records is delivered twice (the copy
 * right after), and a fraction {@code outOfOrderFraction} is swapped with a record up to 64
 * positions later. {@link #truth} is the generator's own final table (key → CSV line of {@code aid,
 * bid, abalance, filler}), the expected SCD type 1 table.
 */
final class SyntheticChanges {
    static final int SHUFFLE_WINDOW = 64;

    final List<byte[]> lines;
    final Map<Integer, String> truth;
    final long events;

    private SyntheticChanges(List<byte[]> lines, Map<Integer, String> truth, long events) {
        this.lines = lines;
        this.truth = truth;
        this.events = events;
    }

    /**
     * @param keys number of distinct keys (≥ 1)
     * @param events change events before duplication (tombstones not counted)
     * @throws IllegalArgumentException for non-positive sizes or ratios outside [0, 1]
     */
    static SyntheticChanges generate(
            int keys,
            long events,
            double deleteRatio,
            double duplicateFraction,
            double outOfOrderFraction,
            long seed) {
        if (keys < 1 || events < 1) {
            throw new IllegalArgumentException(
                    "synthetic input needs keys ≥ 1 and events ≥ 1, got " + keys + ", " + events);
        }
        for (double d : new double[] {deleteRatio, duplicateFraction, outOfOrderFraction}) {
            if (d < 0 || d > 1) {
                throw new IllegalArgumentException("ratios must lie in [0, 1], got " + d);
            }
        }
        SplittableRandom random = new SplittableRandom(seed);
        int[] balance = new int[keys];
        boolean[] present = new boolean[keys];
        List<byte[]> lines =
                new ArrayList<>((int) Math.min(Integer.MAX_VALUE - 8, events * 11 / 10));
        long lsn = 1_000;
        for (long i = 0; i < events; i++) {
            int k = random.nextInt(keys);
            int aid = k + 1;
            int bid = 1 + aid / 100_000;
            lsn += 8;
            String line;
            if (!present[k]) {
                balance[k] = random.nextInt(-5_000, 5_000);
                present[k] = true;
                line = record(aid, null, row(aid, bid, balance[k]), "c", lsn);
            } else if (random.nextDouble() < deleteRatio) {
                present[k] = false;
                line = record(aid, row(aid, bid, balance[k]), null, "d", lsn);
            } else {
                String before = row(aid, bid, balance[k]);
                balance[k] += random.nextInt(-5_000, 5_000);
                line = record(aid, before, row(aid, bid, balance[k]), "u", lsn);
            }
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            lines.add(bytes);
            if (random.nextDouble() < duplicateFraction) {
                lines.add(bytes);
            }
            if (line.contains("\"op\":\"d\"")) {
                lines.add(
                        ("{\"key\":{\"aid\":"
                                        + aid
                                        + "},\"value\":null,\"topic\":\"pgbench.public."
                                        + BenchFlows.TABLE
                                        + "\"}")
                                .getBytes(StandardCharsets.UTF_8));
            }
        }
        for (int i = 0; i < lines.size(); i++) {
            if (random.nextDouble() < outOfOrderFraction) {
                int j = Math.min(lines.size() - 1, i + 1 + random.nextInt(SHUFFLE_WINDOW));
                Collections.swap(lines, i, j);
            }
        }
        Map<Integer, String> truth = new HashMap<>();
        for (int k = 0; k < keys; k++) {
            if (present[k]) {
                int aid = k + 1;
                truth.put(
                        aid,
                        aid
                                + ","
                                + (1 + aid / 100_000)
                                + ","
                                + balance[k]
                                + ","
                                + TableRows.formatValue(null));
            }
        }
        return new SyntheticChanges(lines, truth, events);
    }

    /**
     * The state-size input: every key inserted ({@code c}) and directly after updated ({@code u},
     * new {@code abalance}), keys in a seeded random order, {@code source.lsn} growing by 8 per
     * event. Each key's two records meet the AUTO CDC operator between the same two flushes (except
     * at most one key per flush), whatever the key count — so bytes per key compare across key
     * counts.
     *
     * @throws IllegalArgumentException for {@code keys < 1}
     */
    static SyntheticChanges insertThenUpdate(int keys, long seed) {
        if (keys < 1) {
            throw new IllegalArgumentException("synthetic input needs keys ≥ 1, got " + keys);
        }
        SplittableRandom random = new SplittableRandom(seed);
        int[] order = new int[keys];
        for (int k = 0; k < keys; k++) {
            order[k] = k;
        }
        for (int k = keys - 1; k > 0; k--) {
            int j = random.nextInt(k + 1);
            int t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        List<byte[]> lines = new ArrayList<>(2 * keys);
        Map<Integer, String> truth = new HashMap<>();
        long lsn = 1_000;
        for (int k : order) {
            int aid = k + 1;
            int bid = 1 + aid / 100_000;
            int first = random.nextInt(-5_000, 5_000);
            int second = first + random.nextInt(1, 5_000);
            lsn += 8;
            lines.add(
                    record(aid, null, row(aid, bid, first), "c", lsn)
                            .getBytes(StandardCharsets.UTF_8));
            lsn += 8;
            lines.add(
                    record(aid, row(aid, bid, first), row(aid, bid, second), "u", lsn)
                            .getBytes(StandardCharsets.UTF_8));
            truth.put(aid, aid + "," + bid + "," + second + "," + TableRows.formatValue(null));
        }
        return new SyntheticChanges(lines, truth, 2L * keys);
    }

    private static String row(int aid, int bid, int balance) {
        return "{\"aid\":"
                + aid
                + ",\"bid\":"
                + bid
                + ",\"abalance\":"
                + balance
                + ",\"filler\":null}";
    }

    private static String record(int aid, String before, String after, String op, long lsn) {
        return "{\"key\":{\"aid\":"
                + aid
                + "},\"value\":{\"before\":"
                + before
                + ",\"after\":"
                + after
                + ",\"source\":{\"version\":\"3.6.1.Final\",\"connector\":\"postgresql\",\"name\":\"pgbench\",\"ts_ms\":0,"
                + "\"snapshot\":\"false\",\"db\":\"pgbench\",\"schema\":\"public\",\"table\":\""
                + BenchFlows.TABLE
                + "\",\"txId\":"
                + lsn
                + ",\"lsn\":"
                + lsn
                + "},\"op\":\""
                + op
                + "\",\"ts_ms\":0},\"topic\":\"pgbench.public."
                + BenchFlows.TABLE
                + "\"}";
    }
}
