package dev.changeflow.sources.cdf.stream.split;

import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Versioned serializer of {@link ChangeFeedSplit} (checkpoints, savepoints).
 *
 * <p>Version 1 layout: {@code version} long, {@code snapshotId} long, {@code commitMillis} long,
 * kind code (one byte: {@code I}, {@code A}, {@code R}), {@code index} int, file present (boolean)
 * then its UTF-8 bytes (int length + bytes; scan-task JSON can exceed 64 KiB), {@code offset} long,
 * {@code finished} boolean. Never change a version's layout; add a version and keep reading the old
 * ones.
 */
@Internal
public final class ChangeFeedSplitSerializer implements SimpleVersionedSerializer<ChangeFeedSplit> {

    public static final ChangeFeedSplitSerializer INSTANCE = new ChangeFeedSplitSerializer();

    public static final int CURRENT_VERSION = 1;

    @Override
    public int getVersion() {
        return CURRENT_VERSION;
    }

    @Override
    public byte[] serialize(ChangeFeedSplit split) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        write(split, out);
        return out.getCopyOfBuffer();
    }

    @Override
    public ChangeFeedSplit deserialize(int version, byte[] serialized) throws IOException {
        return read(version, new DataInputDeserializer(serialized));
    }

    /** Writes {@code split} in the current layout (also used inside the enumerator state). */
    public static void write(ChangeFeedSplit split, DataOutputView out) throws IOException {
        out.writeLong(split.version());
        out.writeLong(split.snapshotId());
        out.writeLong(split.commitMillis());
        out.writeByte(split.kind().code());
        out.writeInt(split.index());
        out.writeBoolean(split.file() != null);
        if (split.file() != null) {
            byte[] bytes = split.file().getBytes(StandardCharsets.UTF_8);
            out.writeInt(bytes.length);
            out.write(bytes);
        }
        out.writeLong(split.offset());
        out.writeBoolean(split.finished());
    }

    /** Reads a split written in layout {@code version}. */
    public static ChangeFeedSplit read(int version, DataInputView in) throws IOException {
        switch (version) {
            case 1:
                long v = in.readLong();
                long snapshotId = in.readLong();
                long commitMillis = in.readLong();
                ChangeFeedSplit.Kind kind = ChangeFeedSplit.Kind.ofCode((char) in.readByte());
                int index = in.readInt();
                String file = null;
                if (in.readBoolean()) {
                    byte[] bytes = new byte[in.readInt()];
                    in.readFully(bytes);
                    file = new String(bytes, StandardCharsets.UTF_8);
                }
                long offset = in.readLong();
                boolean finished = in.readBoolean();
                return new ChangeFeedSplit(
                        v, snapshotId, commitMillis, kind, index, file, offset, finished);
            default:
                throw new IOException(
                        "Unknown change-feed split serializer version "
                                + version
                                + " (this build reads versions 1 to "
                                + CURRENT_VERSION
                                + ")");
        }
    }
}
