package dev.changeflow.e2e.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.Function;

/**
 * CPU seconds per pipeline stage of a job running in this JVM, from the CPU time of its threads
 * (issue #18's per-stage breakdown, without a profiler). A daemon thread polls every thread's CPU
 * time every {@value #POLL_MS} ms and keeps the last value per thread id, so threads that end
 * during the run (Flink's task threads end with the job) are counted up to their last poll (at most
 * {@value #POLL_MS} ms of a thread's CPU is missed). Threads are assigned to stages by name ({@code
 * stageOf}). The JVM's own threads (JIT compilers, garbage collector) and native threads (RocksDB's
 * flush and compaction) are not Java threads the bean lists; on Linux they are read from {@code
 * /proc/self/task/<tid>/stat} by their names ({@code C2 CompilerThre}, {@code GC Thread#0}, {@code
 * rocksdb:low}, ...). CPU the process used that no polled thread accounts for (threads that started
 * and ended between polls, other native threads) is reported as {@code other}.
 */
final class ThreadCpuStages implements AutoCloseable {
    static final long POLL_MS = 100;

    /**
     * Every how many polls the JVM's and native threads are read from {@code /proc} (they live as
     * long as the JVM or the state backend; reading a few hundred files per poll would cost the
     * measured run several percent of a core).
     */
    static final int NATIVE_EVERY = 10;

    private int polls;

    private final ThreadMXBean bean = ManagementFactory.getThreadMXBean();
    private final Map<Long, long[]> start = new HashMap<>();
    private final Map<Long, Long> last = new HashMap<>();
    private final Map<Long, String> names = new HashMap<>();
    private final Map<String, Long> nativeStart = new HashMap<>();
    private final Map<String, Long> nativeLast = new HashMap<>();
    private final Map<String, String> nativeStage = new HashMap<>();
    private final long ticksPerSecond = 100; // USER_HZ on Linux
    private final Thread poller;
    private final long processCpu0;
    private volatile boolean stop;

    /** Name prefix of the threads whose states are counted ({@link #states}); null: none. */
    private final String watched;

    private final Map<String, Integer> states = new HashMap<>();

    ThreadCpuStages() {
        this(null);
    }

    /**
     * @param watched name prefix of threads whose state is sampled at every poll (RUNNABLE, or
     *     where it waits: the first frame outside {@code java.} / {@code jdk.} / {@code sun.}),
     *     reported by {@link #states()}
     */
    ThreadCpuStages(String watched) {
        this.watched = watched;
        for (long id : bean.getAllThreadIds()) {
            long cpu = bean.getThreadCpuTime(id);
            if (cpu >= 0) {
                start.put(id, new long[] {cpu});
            }
        }
        pollNative(nativeStart);
        processCpu0 = processCpuNanos();
        poller =
                new Thread(
                        () -> {
                            while (!stop) {
                                poll();
                                try {
                                    Thread.sleep(POLL_MS);
                                } catch (InterruptedException e) {
                                    return;
                                }
                            }
                        },
                        "thread-cpu-stages");
        poller.setDaemon(true);
        poller.start();
    }

    private synchronized void poll() {
        long[] ids = bean.getAllThreadIds();
        for (long id : ids) {
            long cpu = bean.getThreadCpuTime(id);
            if (cpu < 0) {
                continue;
            }
            last.put(id, cpu);
            String name = names.get(id);
            if (name == null) {
                ThreadInfo info = bean.getThreadInfo(id);
                if (info == null) {
                    continue;
                }
                name = info.getThreadName();
                names.put(id, name);
            }
            if (watched != null && name.startsWith(watched)) {
                ThreadInfo info = bean.getThreadInfo(id, 12);
                if (info != null) {
                    states.merge(state(info), 1, Integer::sum);
                }
            }
        }
        if (polls++ % NATIVE_EVERY == 0 || stop) {
            pollNative(nativeLast);
        }
    }

    /**
     * The CPU nanoseconds of the JVM's and native threads by {@code tid}, from {@code /proc} (empty
     * where there is none).
     */
    private void pollNative(Map<String, Long> into) {
        java.io.File[] tasks = new java.io.File("/proc/self/task").listFiles();
        if (tasks == null) {
            return;
        }
        for (java.io.File task : tasks) {
            try {
                String stat = java.nio.file.Files.readString(task.toPath().resolve("stat"));
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                String name = stat.substring(open + 1, close);
                String stage = nativeStageOf(name);
                if (stage == null) {
                    continue;
                }
                String[] f = stat.substring(close + 2).split(" ");
                // fields 14 and 15 of stat (utime, stime): indexes 11 and 12 after the name
                long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                into.put(task.getName(), ticks * 1_000_000_000L / ticksPerSecond);
                nativeStage.put(task.getName(), stage);
            } catch (java.io.IOException | RuntimeException e) {
                // the thread ended between the listing and the read
            }
        }
    }

    /** The stage of a thread that is not a Java thread, by its (15-character) name; else null. */
    private static String nativeStageOf(String name) {
        if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
            return "jvm: JIT compiler";
        }
        if (name.startsWith("GC Thread")
                || name.startsWith("G1 ")
                || name.equals("VM Thread")
                || name.startsWith("VM Periodic")) {
            return "jvm: GC and VM";
        }
        if (name.startsWith("rocksdb")) {
            return "RocksDB background (flush, compaction)";
        }
        return null;
    }

    /**
     * Stops polling and returns CPU seconds per stage in the order of first appearance, plus {@code
     * other} for what the process used beyond its polled threads.
     */
    synchronized Map<String, Double> stop(Function<String, String> stageOf) {
        stop = true;
        poller.interrupt();
        poll();
        long processCpu = processCpuNanos() - processCpu0;
        Map<String, Double> out = new LinkedHashMap<>();
        long counted = 0;
        for (Map.Entry<Long, Long> e : last.entrySet()) {
            long[] s = start.get(e.getKey());
            long used = e.getValue() - (s == null ? 0 : s[0]);
            if (used <= 0) {
                continue;
            }
            counted += used;
            String stage =
                    e.getKey() == poller.getId()
                            ? "measurement (this poll)"
                            : stageOf.apply(names.get(e.getKey()));
            out.merge(stage, used / 1e9, Double::sum);
        }
        for (Map.Entry<String, Long> e : nativeLast.entrySet()) {
            long used = e.getValue() - nativeStart.getOrDefault(e.getKey(), 0L);
            if (used <= 0) {
                continue;
            }
            counted += used;
            out.merge(nativeStage.get(e.getKey()), used / 1e9, Double::sum);
        }
        out.put("other", Math.max(0, processCpu - counted) / 1e9);
        return out;
    }

    /** The state of a watched thread: RUNNABLE, or its waiting state and where it waits. */
    private static String state(ThreadInfo info) {
        if (info.getThreadState() == Thread.State.RUNNABLE) {
            return "RUNNABLE";
        }
        for (StackTraceElement e : info.getStackTrace()) {
            String c = e.getClassName();
            if (!c.startsWith("java.") && !c.startsWith("jdk.") && !c.startsWith("sun.")) {
                return info.getThreadState()
                        + " in "
                        + c.substring(c.lastIndexOf('.') + 1)
                        + "."
                        + e.getMethodName();
            }
        }
        return info.getThreadState().toString();
    }

    /** The sampled states of the watched threads, "42% RUNNABLE, 30% WAITING in X.y, ...". */
    synchronized String states() {
        int n = states.values().stream().mapToInt(Integer::intValue).sum();
        StringJoiner j = new StringJoiner(", ");
        states.entrySet().stream()
                .sorted((a, b) -> b.getValue() - a.getValue())
                .limit(6)
                .forEach(
                        e ->
                                j.add(
                                        String.format(
                                                Locale.ROOT,
                                                "%.0f%% %s",
                                                100.0 * e.getValue() / n,
                                                e.getKey())));
        return n + " samples: " + j;
    }

    /** "stage 1.23 s, stage 0.40 s, ..." in descending order of CPU. */
    static String format(Map<String, Double> stages, long events) {
        StringJoiner j = new StringJoiner(", ");
        stages.entrySet().stream()
                .sorted((a, b) -> Double.compare(b.getValue(), a.getValue()))
                .forEach(
                        e ->
                                j.add(
                                        String.format(
                                                Locale.ROOT,
                                                "%s %.1f s (%.2f/M)",
                                                e.getKey(),
                                                e.getValue(),
                                                e.getValue() / (events / 1e6))));
        return j.toString();
    }

    @Override
    public void close() {
        stop = true;
        poller.interrupt();
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }
}
