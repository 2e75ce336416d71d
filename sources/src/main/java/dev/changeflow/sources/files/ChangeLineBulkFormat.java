package dev.changeflow.sources.files;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.impl.StreamFormatAdapter;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.IteratorResultIterator;
import org.apache.flink.connector.file.src.util.RecordAndPosition;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipException;

/**
 * The {@link BulkFormat} behind {@link ChangeFiles}: Flink's {@link StreamFormatAdapter} over {@link
 * ChangeLineFormat}, plus what the adapter cannot do itself —
 *
 * <ul>
 *   <li>sets each line's {@code source} to the split's file path;
 *   <li>an empty (0-byte) file yields just its end-of-file marker (the adapter rejects empty files);
 *   <li>a compressed file whose header is already damaged (the decompressor fails while the adapter
 *       opens it: not gzip at all, or cut inside the header) yields a damage marker at line 1 and an
 *       end-of-file marker instead of failing the job.
 * </ul>
 *
 * Positions are record counts (no offsets), for the marker-only readers too, so restore is
 * consistent with {@link ChangeLineFormat}.
 */
@Internal
final class ChangeLineBulkFormat implements BulkFormat<SourceLine, FileSourceSplit> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ChangeLineBulkFormat.class);

    private final StreamFormatAdapter<SourceLine> delegate;

    ChangeLineBulkFormat(int maxLineBytes) {
        this.delegate = new StreamFormatAdapter<>(new ChangeLineFormat(maxLineBytes));
    }

    @Override
    public Reader<SourceLine> createReader(Configuration config, FileSourceSplit split) throws IOException {
        return open(config, split, false);
    }

    @Override
    public Reader<SourceLine> restoreReader(Configuration config, FileSourceSplit split) throws IOException {
        return open(config, split, true);
    }

    private Reader<SourceLine> open(Configuration config, FileSourceSplit split, boolean restore) throws IOException {
        String path = split.path().toString();
        long skip = split.getReaderPosition().map(CheckpointedPosition::getRecordsAfterOffset).orElse(0L);
        if (split.fileSize() == 0) {
            return new MarkerReader(List.of(SourceLine.endOfFile(path, 0)), skip);
        }
        try {
            Reader<SourceLine> r = restore ? delegate.restoreReader(config, split) : delegate.createReader(config, split);
            return new PathSettingReader(r, path);
        } catch (EOFException | ZipException e) {
            LOG.warn("Compressed file {} is damaged at its start; quarantining it as TRUNCATED_FILE: {}", path, e.toString());
            List<SourceLine> markers = new ArrayList<>();
            markers.add(SourceLine.damage(path, 1, "compressed stream damaged at its start: " + e, null));
            markers.add(SourceLine.endOfFile(path, 0));
            return new MarkerReader(markers, skip);
        }
    }

    @Override
    public boolean isSplittable() {
        return false;
    }

    @Override
    public TypeInformation<SourceLine> getProducedType() {
        return delegate.getProducedType();
    }

    /** Sets the file path on every line of the delegate's batches. */
    private static final class PathSettingReader implements Reader<SourceLine> {
        private final Reader<SourceLine> reader;
        private final String path;

        PathSettingReader(Reader<SourceLine> reader, String path) {
            this.reader = reader;
            this.path = path;
        }

        @Nullable
        @Override
        public RecordIterator<SourceLine> readBatch() throws IOException {
            RecordIterator<SourceLine> batch = reader.readBatch();
            if (batch == null) {
                return null;
            }
            return new RecordIterator<>() {
                @Nullable
                @Override
                public RecordAndPosition<SourceLine> next() {
                    RecordAndPosition<SourceLine> r = batch.next();
                    if (r != null) {
                        r.getRecord().setSource(path);
                    }
                    return r;
                }

                @Override
                public void releaseBatch() {
                    batch.releaseBatch();
                }
            };
        }

        @Override
        public void close() throws IOException {
            reader.close();
        }
    }

    /** Emits a fixed list of markers, skipping the ones already emitted before a restore. */
    private static final class MarkerReader implements Reader<SourceLine> {
        private final List<SourceLine> records;
        private final long skip;
        private boolean done;

        MarkerReader(List<SourceLine> records, long skip) {
            this.records = records;
            this.skip = skip;
        }

        @Nullable
        @Override
        public RecordIterator<SourceLine> readBatch() {
            if (done || skip >= records.size()) {
                done = true;
                return null;
            }
            done = true;
            return new IteratorResultIterator<>(
                    records.subList((int) skip, records.size()).iterator(), CheckpointedPosition.NO_OFFSET, skip);
        }

        @Override
        public void close() {}
    }
}
