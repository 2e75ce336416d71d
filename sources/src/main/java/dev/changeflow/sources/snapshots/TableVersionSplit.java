package dev.changeflow.sources.snapshots;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import java.io.IOException;

/**
 * One version of the source table of {@link IcebergSnapshots} to read in full (semantics.md A6):
 * the Iceberg snapshot id, its sequence number (the version) and how many rows of it the reader
 * already emitted (0 until a checkpoint inside the version records more). Immutable.
 */
@Internal
final class TableVersionSplit implements SourceSplit {
    final long snapshotId;
    final long version;
    final long emitted;

    TableVersionSplit(long snapshotId, long version, long emitted) {
        this.snapshotId = snapshotId;
        this.version = version;
        this.emitted = emitted;
    }

    TableVersionSplit withEmitted(long rows) {
        return new TableVersionSplit(snapshotId, version, rows);
    }

    @Override
    public String splitId() {
        return "version-" + version;
    }

    @Override
    public String toString() {
        return "version " + version + " (snapshot " + snapshotId + ", " + emitted + " rows read)";
    }

    void write(DataOutputSerializer out) throws IOException {
        out.writeLong(snapshotId);
        out.writeLong(version);
        out.writeLong(emitted);
    }

    static TableVersionSplit read(DataInputDeserializer in) throws IOException {
        return new TableVersionSplit(in.readLong(), in.readLong(), in.readLong());
    }

    /** Serializer of splits: three longs; version 1. */
    static final class Serializer implements SimpleVersionedSerializer<TableVersionSplit> {
        static final Serializer INSTANCE = new Serializer();

        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(TableVersionSplit split) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(24);
            split.write(out);
            return out.getCopyOfBuffer();
        }

        @Override
        public TableVersionSplit deserialize(int version, byte[] bytes) throws IOException {
            if (version != 1) {
                throw new IOException("unknown table version split serializer version " + version);
            }
            return read(new DataInputDeserializer(bytes));
        }
    }
}
