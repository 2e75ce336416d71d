package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.TableProperties;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * How a streaming table is created and written: Iceberg format version, partitioning, file size,
 * writer parallelism, extra table properties and Parquet bloom filters on the identifier columns.
 *
 * <p>Built with {@link #builder()}; every option is validated in {@link Builder#build()}. Options
 * that shape the table ({@code formatVersion}, {@code partitionBy}, {@code bloomFilters}, {@code
 * properties}, {@code targetFileSizeBytes}) apply when {@link StreamingTables#ensureTable} creates
 * the table; an existing table keeps its own. {@code writeParallelism} applies to every write.
 */
@PublicEvolving
public final class StreamingTableOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Default Iceberg format version. */
    public static final int DEFAULT_FORMAT_VERSION = 2;

    private final int formatVersion;
    private final List<String> partitionBy;
    private final Long targetFileSizeBytes;
    private final Integer writeParallelism;
    private final Map<String, String> properties;
    private final boolean bloomFilters;

    private StreamingTableOptions(Builder b) {
        this.formatVersion = b.formatVersion;
        this.partitionBy = Collections.unmodifiableList(new ArrayList<>(b.partitionBy));
        this.targetFileSizeBytes = b.targetFileSizeBytes;
        this.writeParallelism = b.writeParallelism;
        this.properties = Collections.unmodifiableMap(new TreeMap<>(b.properties));
        this.bloomFilters = b.bloomFilters;
    }

    /** A builder with the defaults: v2, unpartitioned, bloom filters on. */
    public static Builder builder() {
        return new Builder();
    }

    /** All defaults. */
    public static StreamingTableOptions defaults() {
        return builder().build();
    }

    /** Iceberg format version of a new table: 2 (default) or 3. */
    public int formatVersion() {
        return formatVersion;
    }

    /**
     * Partition fields of a new table, in order: a column name ({@code region}) or an Iceberg
     * transform: {@code identity(c)}, {@code bucket(N, c)}, {@code truncate(W, c)}, {@code
     * years(c)}, {@code months(c)}, {@code days(c)}, {@code hours(c)} (singular forms accepted).
     */
    public List<String> partitionBy() {
        return partitionBy;
    }

    /** Target data file size in bytes ({@code write.target-file-size-bytes}), if set. */
    public OptionalLong targetFileSizeBytes() {
        return targetFileSizeBytes == null
                ? OptionalLong.empty()
                : OptionalLong.of(targetFileSizeBytes);
    }

    /** Parallelism of the Iceberg writers, if set; else the input's parallelism. */
    public OptionalInt writeParallelism() {
        return writeParallelism == null ? OptionalInt.empty() : OptionalInt.of(writeParallelism);
    }

    /** Extra table properties for a new table, unmodifiable. */
    public Map<String, String> properties() {
        return properties;
    }

    /**
     * Whether a new table gets Parquet bloom filters on its identifier columns ({@code
     * write.parquet.bloom-filter-enabled.column.<name>=true}); default true.
     */
    public boolean bloomFilters() {
        return bloomFilters;
    }

    /** A builder initialised with these options. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.formatVersion = formatVersion;
        b.partitionBy.addAll(partitionBy);
        b.targetFileSizeBytes = targetFileSizeBytes;
        b.writeParallelism = writeParallelism;
        b.properties.putAll(properties);
        b.bloomFilters = bloomFilters;
        return b;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof StreamingTableOptions)) {
            return false;
        }
        StreamingTableOptions that = (StreamingTableOptions) o;
        return formatVersion == that.formatVersion
                && bloomFilters == that.bloomFilters
                && partitionBy.equals(that.partitionBy)
                && Objects.equals(targetFileSizeBytes, that.targetFileSizeBytes)
                && Objects.equals(writeParallelism, that.writeParallelism)
                && properties.equals(that.properties);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                formatVersion,
                partitionBy,
                targetFileSizeBytes,
                writeParallelism,
                properties,
                bloomFilters);
    }

    @Override
    public String toString() {
        return "StreamingTableOptions{formatVersion="
                + formatVersion
                + ", partitionBy="
                + partitionBy
                + ", targetFileSizeBytes="
                + targetFileSizeBytes
                + ", writeParallelism="
                + writeParallelism
                + ", properties="
                + properties
                + ", bloomFilters="
                + bloomFilters
                + '}';
    }

    /** Builder of {@link StreamingTableOptions}. */
    @PublicEvolving
    public static final class Builder {
        private int formatVersion = DEFAULT_FORMAT_VERSION;
        private final List<String> partitionBy = new ArrayList<>();
        private Long targetFileSizeBytes;
        private Integer writeParallelism;
        private final Map<String, String> properties = new TreeMap<>();
        private boolean bloomFilters = true;

        private Builder() {}

        /** Iceberg format version, 2 or 3. */
        public Builder formatVersion(int version) {
            this.formatVersion = version;
            return this;
        }

        /**
         * Partition fields (see {@link StreamingTableOptions#partitionBy()}); replaces earlier
         * ones.
         */
        public Builder partitionBy(List<String> fields) {
            this.partitionBy.clear();
            this.partitionBy.addAll(Objects.requireNonNull(fields, "partitionBy"));
            return this;
        }

        /**
         * Partition fields (see {@link StreamingTableOptions#partitionBy()}); replaces earlier
         * ones.
         */
        public Builder partitionBy(String... fields) {
            return partitionBy(List.of(fields));
        }

        /** Target data file size in bytes (&gt; 0). */
        public Builder targetFileSizeBytes(long bytes) {
            this.targetFileSizeBytes = bytes;
            return this;
        }

        /** Parallelism of the Iceberg writers (&gt; 0). */
        public Builder writeParallelism(int parallelism) {
            this.writeParallelism = parallelism;
            return this;
        }

        /** One extra table property. */
        public Builder property(String key, String value) {
            this.properties.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
            return this;
        }

        /** Extra table properties (added to earlier ones). */
        public Builder properties(Map<String, String> props) {
            props.forEach(this::property);
            return this;
        }

        /** Parquet bloom filters on identifier columns (default true). */
        public Builder bloomFilters(boolean enabled) {
            this.bloomFilters = enabled;
            return this;
        }

        /**
         * Validates and builds.
         *
         * @throws IllegalArgumentException naming the option and the accepted values
         */
        public StreamingTableOptions build() {
            if (formatVersion != 2 && formatVersion != 3) {
                throw new IllegalArgumentException(
                        "formatVersion " + formatVersion + " is not supported; accepted: 2, 3");
            }
            String fv = properties.get(TableProperties.FORMAT_VERSION);
            if (fv != null && !fv.trim().equals(Integer.toString(formatVersion))) {
                throw new IllegalArgumentException(
                        "property "
                                + TableProperties.FORMAT_VERSION
                                + "="
                                + fv
                                + " contradicts formatVersion "
                                + formatVersion
                                + "; set the version with formatVersion(2|3) only");
            }
            if (targetFileSizeBytes != null && targetFileSizeBytes <= 0) {
                throw new IllegalArgumentException(
                        "targetFileSizeBytes must be > 0, got " + targetFileSizeBytes);
            }
            if (writeParallelism != null && writeParallelism <= 0) {
                throw new IllegalArgumentException(
                        "writeParallelism must be > 0, got " + writeParallelism);
            }
            for (String field : partitionBy) {
                PartitionTransforms.parse(field); // syntax only; columns are checked on creation
            }
            return new StreamingTableOptions(this);
        }
    }
}
