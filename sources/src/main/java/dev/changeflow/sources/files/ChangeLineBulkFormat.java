package dev.changeflow.sources.files;

import dev.changeflow.operators.quarantine.QuarantineReason;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.io.compression.GzipInflaterInputStreamFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.compression.StandardDeCompressors;
import org.apache.flink.connector.file.src.impl.StreamFormatAdapter;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.util.CheckpointedPosition;
import org.apache.flink.connector.file.src.util.IteratorResultIterator;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.apache.flink.core.fs.FSDataInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipException;

/**
 * The {@link BulkFormat} behind {@link ChangeFiles}: Flink's {@link StreamFormatAdapter} over
 * {@link ChangeLineFormat}, plus what the adapter cannot do itself —
 *
 * <ul>
 *   <li>sets each line's {@code source} to the split's file path;
 *   <li>an empty (0-byte) file yields just its end-of-file marker (the adapter rejects empty
 *       files);
 *   <li>a gzip file ({@code .gz}, {@code .gzip}) is first verified member by member ({@link
 *       GzipVerifier}: header, deflate data, CRC32 and ISIZE), because deflate has no intermediate
 *       checksum and a damaged member decompresses to plausible garbage before its check fails.
 *       When a member fails, only the lines inside the members before it are read, then one damage
 *       marker with reason {@code DAMAGED_FILE} (naming the file, the failed check and the first
 *       untrusted line) and the end-of-file marker; when the first member fails (or the file is not
 *       gzip at all), just the marker at line 1 and the end-of-file marker. A file cut inside a
 *       member is read as before (its lines up to the cut, then {@code TRUNCATED_FILE}); one cut
 *       inside the header of a later member is read up to the end of the member before, then {@code
 *       TRUNCATED_FILE} (Java's gzip reader would end there silently);
 *   <li>another compressed file whose header is already damaged (the decompressor fails while the
 *       adapter opens it; for gzip: cut inside the first header) yields a damage marker at line 1
 *       ({@code TRUNCATED_FILE}) and an end-of-file marker instead of failing the job;
 *   <li>for CSV files ({@link ChangeFiles.Format#CSV}), turns data lines into JSON rows by the
 *       file's header ({@link CsvLines}) and drops the header line.
 * </ul>
 *
 * Positions are record counts (no offsets), for the marker-only readers too, so restore is
 * consistent with {@link ChangeLineFormat}; a restored reader verifies the file again and, the
 * bytes being the same, emits the same records, of which it skips the ones already emitted.
 *
 * <p>Cost of the verification: one more inflate of each gzip file (native inflater, 256 KiB
 * buffers) — on the pgbench capture (3.5 MB gzip, 94 MB decompressed, 141,511 lines) about 33 ms of
 * CPU, against 87 ms for the read pass itself and several hundred for decoding its records ({@code
 * GzipVerifierCostMain} in the tests).
 */
@Internal
final class ChangeLineBulkFormat implements BulkFormat<SourceLine, FileSourceSplit> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ChangeLineBulkFormat.class);

    private final int maxLineBytes;
    @Nullable private final CsvOptions csv;
    private final StreamFormatAdapter<SourceLine> delegate;

    ChangeLineBulkFormat(int maxLineBytes) {
        this(maxLineBytes, null);
    }

    /**
     * @param csv null: JSON lines; else the files are CSV read with these options: data lines
     *     become JSON rows ({@link CsvLines}), the header line and comment lines are not emitted
     *     (they still count in the positions)
     */
    ChangeLineBulkFormat(int maxLineBytes, @Nullable CsvOptions csv) {
        this.maxLineBytes = maxLineBytes;
        this.csv = csv;
        this.delegate = new StreamFormatAdapter<>(new ChangeLineFormat(maxLineBytes));
    }

    @Override
    public Reader<SourceLine> createReader(Configuration config, FileSourceSplit split)
            throws IOException {
        return open(config, split, false);
    }

    @Override
    public Reader<SourceLine> restoreReader(Configuration config, FileSourceSplit split)
            throws IOException {
        return open(config, split, true);
    }

    private Reader<SourceLine> open(Configuration config, FileSourceSplit split, boolean restore)
            throws IOException {
        String path = split.path().toString();
        long skip =
                split.getReaderPosition()
                        .map(CheckpointedPosition::getRecordsAfterOffset)
                        .orElse(0L);
        if (split.fileSize() == 0) {
            return new MarkerReader(List.of(SourceLine.endOfFile(path, 0)), skip);
        }
        StreamFormatAdapter<SourceLine> adapter = delegate;
        if (StandardDeCompressors.getDecompressorForFileName(split.path().getPath())
                instanceof GzipInflaterInputStreamFactory) {
            ChangeLineFormat.TrustedPrefix prefix = trustedPrefix(split);
            if (prefix != null && prefix.bytes == 0) {
                List<SourceLine> markers = new ArrayList<>();
                markers.add(SourceLine.damage(path, 1, prefix.reason, prefix.detail(1, 0), null));
                markers.add(SourceLine.endOfFile(path, 0));
                return new MarkerReader(markers, skip);
            }
            if (prefix != null) {
                adapter = new StreamFormatAdapter<>(new ChangeLineFormat(maxLineBytes, prefix));
            }
        }
        try {
            Reader<SourceLine> r =
                    restore
                            ? adapter.restoreReader(config, split)
                            : adapter.createReader(config, split);
            // S2: the header is read apart, so a restored reader has it too
            return new PathSettingReader(
                    r, path, csv == null ? null : CsvLines.header(split, csv), csv);
        } catch (EOFException | ZipException e) {
            LOG.warn(
                    "Compressed file {} is damaged at its start; quarantining it as TRUNCATED_FILE: {}",
                    path,
                    e.toString());
            List<SourceLine> markers = new ArrayList<>();
            markers.add(
                    SourceLine.damage(
                            path, 1, "compressed stream damaged at its start: " + e, null));
            markers.add(SourceLine.endOfFile(path, 0));
            return new MarkerReader(markers, skip);
        }
    }

    /**
     * Verifies the gzip file of {@code split} ({@link GzipVerifier}); null when it is read whole
     * (it verified, or is cut inside a member, which the reader reports itself), else the prefix
     * that may be read.
     */
    @Nullable
    private static ChangeLineFormat.TrustedPrefix trustedPrefix(FileSourceSplit split)
            throws IOException {
        long start = System.nanoTime();
        GzipVerifier.Result check;
        try (FSDataInputStream in = split.path().getFileSystem().open(split.path())) {
            check = GzipVerifier.verify(in);
        }
        String path = split.path().toString();
        LOG.debug(
                "Verified gzip file {} in {} ms: {}",
                path,
                (System.nanoTime() - start) / 1_000_000,
                check);
        switch (check.outcome) {
            case DAMAGED:
                LOG.warn(
                        "Gzip file {} fails its integrity check; reading only its {} verified member(s) and quarantining "
                                + "the rest as DAMAGED_FILE: {}",
                        path,
                        check.verifiedMembers,
                        check.detail);
                return new ChangeLineFormat.TrustedPrefix(
                        check.verifiedBytes,
                        QuarantineReason.DAMAGED_FILE,
                        "damaged gzip file "
                                + path
                                + ": "
                                + check.detail
                                + "; "
                                + check.verifiedMembers
                                + " member(s) before it verified");
            case TRUNCATED:
                if (check.inHeader && check.verifiedMembers > 0) {
                    LOG.warn(
                            "Gzip file {} is cut short after {} member(s); quarantining the rest as TRUNCATED_FILE: {}",
                            path,
                            check.verifiedMembers,
                            check.detail);
                    return new ChangeLineFormat.TrustedPrefix(
                            check.verifiedBytes,
                            QuarantineReason.TRUNCATED_FILE,
                            "gzip file "
                                    + path
                                    + " cut short: "
                                    + check.detail
                                    + "; "
                                    + check.verifiedMembers
                                    + " member(s) before it verified");
                }
                return null;
            default:
                return null;
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
        @Nullable private final CsvLines.Header csv;
        @Nullable private final CsvOptions options;

        /**
         * @param csv the CSV file's header: data lines are converted, the header line and comment
         *     lines dropped
         */
        PathSettingReader(
                Reader<SourceLine> reader,
                String path,
                @Nullable CsvLines.Header csv,
                @Nullable CsvOptions options) {
            this.reader = reader;
            this.path = path;
            this.csv = csv;
            this.options = options;
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
                    while (true) {
                        RecordAndPosition<SourceLine> r = batch.next();
                        if (r == null) {
                            return null;
                        }
                        SourceLine l = r.getRecord();
                        l.setSource(path);
                        if (csv != null && !l.marker()) {
                            if (l.line == csv.line || options.isComment(l.bytes, l.length)) {
                                continue; // the header: its position is passed with the next
                            }
                            if (!l.oversized()) {
                                CsvLines.convert(csv, l, options);
                            }
                        }
                        return r;
                    }
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
                    records.subList((int) skip, records.size()).iterator(),
                    CheckpointedPosition.NO_OFFSET,
                    skip);
        }

        @Override
        public void close() {}
    }
}
