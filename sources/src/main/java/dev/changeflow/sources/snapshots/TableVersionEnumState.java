package dev.changeflow.sources.snapshots;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Checkpointed state of the {@link TableVersionEnumerator}: the highest version it discovered
 * (later discoveries only look above it; {@link Long#MIN_VALUE} before the first) and the
 * discovered versions not yet handed to the reader, ascending.
 */
@Internal
final class TableVersionEnumState {
    final long lastDiscovered;
    final List<TableVersionSplit> pending;

    TableVersionEnumState(long lastDiscovered, List<TableVersionSplit> pending) {
        this.lastDiscovered = lastDiscovered;
        this.pending = List.copyOf(pending);
    }

    /** Serializer of the state; version 1. */
    static final class Serializer implements SimpleVersionedSerializer<TableVersionEnumState> {
        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(TableVersionEnumState state) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(12 + 24 * state.pending.size());
            out.writeLong(state.lastDiscovered);
            out.writeInt(state.pending.size());
            for (TableVersionSplit s : state.pending) {
                s.write(out);
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public TableVersionEnumState deserialize(int version, byte[] bytes) throws IOException {
            if (version != 1) {
                throw new IOException("unknown table version state serializer version " + version);
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            long last = in.readLong();
            int n = in.readInt();
            List<TableVersionSplit> pending = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                pending.add(TableVersionSplit.read(in));
            }
            return new TableVersionEnumState(last, pending);
        }
    }
}
