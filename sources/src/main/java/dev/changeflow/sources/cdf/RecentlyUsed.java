package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A thread-safe map that keeps at most a given number of entries, dropping the least recently used.
 */
@Internal
final class RecentlyUsed {
    private RecentlyUsed() {}

    /**
     * @param max entries kept (at least 1)
     * @return a synchronized access-ordered map that drops its eldest entry above {@code max}
     */
    static <K, V> Map<K, V> map(int max) {
        return Collections.synchronizedMap(
                new LinkedHashMap<>(Math.min(max, 1024), 0.75f, true) {
                    @Override
                    protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                        return size() > max;
                    }
                });
    }
}
