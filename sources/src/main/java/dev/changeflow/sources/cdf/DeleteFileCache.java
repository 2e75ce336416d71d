package dev.changeflow.sources.cdf;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Schema;
import org.apache.iceberg.data.BaseDeleteLoader;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.StructLikeSet;

import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A bounded, least-recently-used cache of loaded delete files, shared by the reads of one change
 * feed reader (one {@link TableChanges}, one streaming split reader) across the versions it reads.
 *
 * <p>Why: a table written by an upsert sink and never compacted piles up equality-delete files, and
 * every one of them applies to every older data file of its partition. Reading version {@code v}
 * reads data files of {@code v}'s parent (the pre-images of equality-deleted rows, F2) with all the
 * delete files that apply to them; without a cache each such read parses every one of those files
 * again, so version {@code v} costs O(all deletes so far). Delete files are immutable, so a file
 * loaded for one version serves every later version read by the same reader.
 *
 * <p>What is cached: through Iceberg's own hook ({@link BaseDeleteLoader}'s {@code canCache} and
 * {@code getOrLoad}, the hook Spark's executor cache uses), the rows of an equality-delete file
 * projected to its equality columns (keyed by the file's location and the projected field ids and
 * types, so a type promotion never reuses values of the old type), and the position indexes of a v2
 * position-delete file (keyed by its location). Deletion vectors are not cached (Iceberg reads them
 * directly, they apply to one data file).
 *
 * <p>Bound: at most {@code maxBytes} estimated bytes of heap, least recently used entries evicted
 * first. An entry's estimate is Iceberg's estimate of its values (record count × estimated field
 * sizes for equality deletes, one byte per position for position deletes) plus, for equality
 * deletes, {@value #ROW_OVERHEAD_BYTES} bytes per row and {@value #FIELD_OVERHEAD_BYTES} bytes per
 * field for the JVM objects holding them. A file whose Iceberg estimate exceeds half the bound is
 * read without caching, as before. {@link #DEFAULT_MAX_BYTES} is the default bound.
 *
 * <p>Thread safety: the cache may be shared by threads (the SQL reader's concurrent version reads
 * share one); its map is guarded by the cache's lock, and a file is loaded outside the lock (two
 * threads missing the same file at once may both load it; either result is the same). Each {@link
 * #loader} is for one thread.
 */
@Internal
public final class DeleteFileCache {

    /** Default bound of a cache: 64 MiB of estimated heap. */
    public static final long DEFAULT_MAX_BYTES = 64L << 20;

    static final int ROW_OVERHEAD_BYTES = 64;
    static final int FIELD_OVERHEAD_BYTES = 16;

    private final long maxBytes;
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long totalBytes;
    private long loads;
    private long hits;

    /** A cache of at most {@link #DEFAULT_MAX_BYTES} estimated bytes. */
    public DeleteFileCache() {
        this(DEFAULT_MAX_BYTES);
    }

    /**
     * A cache of at most {@code maxBytes} estimated bytes; 0 caches nothing.
     *
     * @throws IllegalArgumentException when {@code maxBytes} is negative
     */
    public DeleteFileCache(long maxBytes) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException(
                    "the delete-file cache bound must be at least 0 bytes, got " + maxBytes);
        }
        this.maxBytes = maxBytes;
    }

    /**
     * A delete loader that reads delete files through this cache, inline on the calling thread (no
     * worker pool: the few uncached files of one task load without the pool's 10 ms completion
     * polling per file). For one thread at a time.
     */
    BaseDeleteLoader loader(Function<DeleteFile, InputFile> loadInputFile) {
        return new CachingDeleteLoader(loadInputFile);
    }

    /** The bound in estimated bytes of heap; 0 caches nothing. */
    public long maxBytes() {
        return maxBytes;
    }

    /**
     * Delete files parsed through this cache since its creation: misses, and files not cached
     * (larger than half the bound, or a bound of 0).
     */
    public synchronized long loads() {
        return loads;
    }

    /** Delete-file loads served from the cache since its creation. */
    public synchronized long hits() {
        return hits;
    }

    /** Estimated bytes currently held (see the class comment for the estimate). */
    public synchronized long bytes() {
        return totalBytes;
    }

    private synchronized Entry lookUp(String key) {
        Entry entry = entries.get(key);
        if (entry != null) {
            hits++;
        } else {
            loads++;
        }
        return entry;
    }

    private synchronized void countUncachedLoad() {
        loads++;
    }

    private synchronized void put(String key, Object value, long bytes) {
        if (bytes > maxBytes || entries.containsKey(key)) {
            return;
        }
        entries.put(key, new Entry(value, bytes));
        totalBytes += bytes;
        Iterator<Map.Entry<String, Entry>> eldest = entries.entrySet().iterator();
        while (totalBytes > maxBytes && eldest.hasNext()) {
            totalBytes -= eldest.next().getValue().bytes;
            eldest.remove();
        }
    }

    private static final class Entry {
        final Object value;
        final long bytes;

        Entry(Object value, long bytes) {
            this.value = value;
            this.bytes = bytes;
        }
    }

    /**
     * Iceberg's loader with the cache hook filled in. {@code getOrLoad} gets only the file's
     * location as key; the projection of an equality-delete load is added to it here, because the
     * same file can be loaded with different projections (the delete filter of a data file reads
     * the equality columns in id order, the pre-image lookup in schema order).
     */
    private final class CachingDeleteLoader extends BaseDeleteLoader {

        /** The projection of the equality-delete load in progress, null outside one. */
        private Schema equalityProjection;

        CachingDeleteLoader(Function<DeleteFile, InputFile> loadInputFile) {
            super(loadInputFile, null);
        }

        @Override
        public StructLikeSet loadEqualityDeletes(
                Iterable<DeleteFile> deleteFiles, Schema projection) {
            equalityProjection = projection;
            try {
                return super.loadEqualityDeletes(deleteFiles, projection);
            } finally {
                equalityProjection = null;
            }
        }

        @Override
        protected boolean canCache(long size) {
            boolean cacheable = maxBytes > 0 && size <= maxBytes / 2;
            if (!cacheable) {
                countUncachedLoad();
            }
            return cacheable;
        }

        @Override
        @SuppressWarnings("unchecked")
        protected <V> V getOrLoad(String key, Supplier<V> valueSupplier, long valueSize) {
            Schema projection = equalityProjection;
            String cacheKey =
                    projection == null
                            ? "position:" + key
                            : "equality:" + key + "#" + projectionKey(projection);
            Entry cached = lookUp(cacheKey);
            if (cached != null) {
                return (V) cached.value;
            }
            V value = valueSupplier.get();
            long bytes = valueSize;
            if (projection != null && value instanceof Collection<?> rows) {
                long perRow =
                        ROW_OVERHEAD_BYTES
                                + (long) FIELD_OVERHEAD_BYTES * projection.columns().size();
                bytes = saturatedAdd(valueSize, saturatedMultiply(rows.size(), perRow));
            }
            put(cacheKey, value, bytes);
            return value;
        }
    }

    /** The projected field ids and types in order: {@code 1:long,2:string}. */
    private static String projectionKey(Schema projection) {
        StringBuilder key = new StringBuilder();
        for (Types.NestedField field : projection.columns()) {
            if (key.length() > 0) {
                key.append(',');
            }
            key.append(field.fieldId()).append(':').append(field.type());
        }
        return key.toString();
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }

    private static long saturatedMultiply(long a, long b) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
