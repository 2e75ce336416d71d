package dev.changeflow.sources.files;

import dev.changeflow.sources.changes.DecoderFlow;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.core.fs.Path;

import javax.annotation.Nullable;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point of the change-file source (semantics.md S2, A5): a Flink {@link FileSource} of {@link
 * SourceLine}s over plain or compressed line files — each path a file or a directory (read
 * recursively; names starting with {@code .} or {@code _} are skipped, as Flink's default filter
 * does), or a glob pattern ({@link FileGlob}: the files under its base that match it). Files are
 * decompressed by extension by Flink ({@code .gz}, {@code .gzip}, {@code .deflate}; {@code
 * .bz2}/{@code .xz} when commons-compress is present, but only gzip/deflate damage is turned into
 * markers). Files are not split; each file is read once and its position is checkpointed as the
 * number of records emitted.
 *
 * <p>A damaged gzip never fails the job; it yields some of its lines, one damage marker and the
 * end-of-file marker. A gzip cut short yields its lines up to the cut (the marker is quarantined as
 * {@code TRUNCATED_FILE}); one that fails its integrity checks (a member's CRC32 or ISIZE, a
 * deflate data error, a bad header, not gzip at all) yields only the lines inside the members that
 * verified ({@code DAMAGED_FILE}, see {@link SourceLine}), since the bytes of a damaged member
 * decompress to garbage before the check fails.
 *
 * <p>Files should appear atomically (written elsewhere, then renamed), as for any Flink file
 * source: a file still being written is read as it is when discovered.
 *
 * <p>Example: {@code env.fromSource(ChangeFiles.source(List.of(Path.of("/data/capture")), null),
 * WatermarkStrategy.noWatermarks(), "change-files")}.
 */
@PublicEvolving
public final class ChangeFiles {
    private ChangeFiles() {}

    /** How the files' lines are records (docs/semantics.md S2). */
    public enum Format {
        /** One JSON record per line (Debezium or plain JSON). */
        LINES,
        /**
         * CSV with a header line: each later line is turned into the plain JSON row {@code
         * {"header": cell, ...}} ({@link CsvLines}); a line that is no record of the file is marked
         * {@link SourceLine#malformed}.
         */
        CSV,
        /**
         * Parquet: each record becomes the plain JSON row of its columns, numbered from 1 ({@link
         * ParquetRowsFormat}); a file that cannot be read gives a {@code DAMAGED_FILE} marker.
         */
        PARQUET
    }

    /**
     * The source over local files or directories, with the default line limit {@link
     * DecoderFlow#DEFAULT_MAX_RECORD_BYTES}.
     *
     * @param paths local files or directories
     * @param monitorInterval null for a bounded source (the files present at start); else the
     *     interval at which directories are scanned for new files (unbounded)
     */
    public static FileSource<SourceLine> source(
            List<java.nio.file.Path> paths, @Nullable Duration monitorInterval) {
        return source(paths, monitorInterval, DecoderFlow.DEFAULT_MAX_RECORD_BYTES);
    }

    /** {@link #source(List, Duration)} with an explicit line limit (see {@link #forFlinkPaths}). */
    public static FileSource<SourceLine> source(
            List<java.nio.file.Path> paths, @Nullable Duration monitorInterval, int maxLineBytes) {
        return source(paths, monitorInterval, maxLineBytes, Format.LINES, CsvOptions.DEFAULT);
    }

    /**
     * {@link #source(List, Duration, int)} of files in {@code format}; CSV files read with {@code
     * csv}.
     */
    public static FileSource<SourceLine> source(
            List<java.nio.file.Path> paths,
            @Nullable Duration monitorInterval,
            int maxLineBytes,
            Format format,
            CsvOptions csv) {
        return forFlinkPaths(flinkPaths(paths), monitorInterval, maxLineBytes, format, csv);
    }

    private static List<Path> flinkPaths(List<java.nio.file.Path> paths) {
        List<Path> flinkPaths = new ArrayList<>();
        for (java.nio.file.Path p : paths) {
            flinkPaths.add(new Path(p.toAbsolutePath().toUri()));
        }
        return flinkPaths;
    }

    /**
     * The source over files or directories of any Flink file system (local, s3://, abfss://,
     * gs://).
     *
     * @param monitorInterval null = bounded; else continuous discovery at this interval
     * @param maxLineBytes longer lines are emitted cut (see {@link SourceLine#oversized()}) and
     *     quarantined as {@code RECORD_TOO_LARGE}; pass the largest {@link
     *     DecoderFlow#maxRecordBytes()} of the flows reading these files
     */
    public static FileSource<SourceLine> forFlinkPaths(
            List<Path> paths, @Nullable Duration monitorInterval, int maxLineBytes) {
        return forFlinkPaths(
                paths, monitorInterval, maxLineBytes, Format.LINES, CsvOptions.DEFAULT);
    }

    /**
     * {@link #forFlinkPaths(List, Duration, int)} of files in {@code format}; CSV files read with
     * {@code csv}.
     */
    public static FileSource<SourceLine> forFlinkPaths(
            List<Path> paths,
            @Nullable Duration monitorInterval,
            int maxLineBytes,
            Format format,
            CsvOptions csv) {
        if (paths.isEmpty()) {
            throw new IllegalArgumentException("at least one path is required");
        }
        FileGlob filter = FileGlob.of(paths);
        FileSource.FileSourceBuilder<SourceLine> b =
                FileSource.forBulkFileFormat(
                        format == Format.PARQUET
                                ? new ParquetRowsFormat()
                                : new ChangeLineBulkFormat(
                                        maxLineBytes, format == Format.CSV ? csv : null),
                        filter.bases());
        if (FileGlob.anyPattern(paths)) {
            // S2: a pattern reads the files under its base that match it
            b.setFileEnumerator(filter.enumerator());
        }
        if (monitorInterval != null) {
            b.monitorContinuously(monitorInterval);
        }
        return b.build();
    }

    /**
     * As {@link #forFlinkPaths}, continuous, but its first start takes the files already under the
     * paths as read without reading them: only files that appear afterwards are read ({@code
     * read_files(..., includeExistingFiles => false)}, docs/semantics.md S2; see {@link
     * NewFilesOnly}). A restored job is not affected: its checkpoint says what was processed.
     *
     * @param monitorInterval the discovery interval (required: a bounded source would read nothing)
     * @param skip the files taken as existing (absolute local paths or URIs), or null for every
     *     file found when the job first starts
     */
    public static NewFilesOnly<SourceLine> newFilesOnlyForFlinkPaths(
            List<Path> paths,
            Duration monitorInterval,
            int maxLineBytes,
            @Nullable List<String> skip) {
        return newFilesOnlyForFlinkPaths(
                paths, monitorInterval, maxLineBytes, skip, Format.LINES, CsvOptions.DEFAULT);
    }

    /** {@link #newFilesOnlyForFlinkPaths(List, Duration, int, List)} of files in {@code format}. */
    public static NewFilesOnly<SourceLine> newFilesOnlyForFlinkPaths(
            List<Path> paths,
            Duration monitorInterval,
            int maxLineBytes,
            @Nullable List<String> skip,
            Format format,
            CsvOptions csv) {
        if (monitorInterval == null) {
            throw new IllegalArgumentException(
                    "skipping the existing files needs a monitor interval (a bounded source would"
                            + " read nothing)");
        }
        FileGlob filter = FileGlob.of(paths);
        return new NewFilesOnly<>(
                forFlinkPaths(paths, monitorInterval, maxLineBytes, format, csv),
                List.of(filter.bases()),
                FileGlob.anyPattern(paths)
                        ? filter.enumerator()
                        : FileSource.DEFAULT_NON_SPLITTABLE_FILE_ENUMERATOR,
                skip);
    }

    /** {@link #newFilesOnlyForFlinkPaths} over local files or directories. */
    public static NewFilesOnly<SourceLine> newFilesOnly(
            List<java.nio.file.Path> paths,
            Duration monitorInterval,
            int maxLineBytes,
            @Nullable List<String> skip) {
        return newFilesOnly(
                paths, monitorInterval, maxLineBytes, skip, Format.LINES, CsvOptions.DEFAULT);
    }

    /** {@link #newFilesOnly(List, Duration, int, List)} of files in {@code format}. */
    public static NewFilesOnly<SourceLine> newFilesOnly(
            List<java.nio.file.Path> paths,
            Duration monitorInterval,
            int maxLineBytes,
            @Nullable List<String> skip,
            Format format,
            CsvOptions csv) {
        return newFilesOnlyForFlinkPaths(
                flinkPaths(paths), monitorInterval, maxLineBytes, skip, format, csv);
    }

    /**
     * The column names of the header of the first CSV file under {@code paths} that has a usable
     * one (with {@code csv.header} false: {@code _c0, _c1, ...} of its first record), files in path
     * order, a directory's files by name, recursively, names starting with {@code .} or {@code _}
     * skipped, as the source does; an empty list when there is no file yet (docs/semantics.md S2).
     * A file without a usable header is skipped here (the source quarantines its lines as {@code
     * MALFORMED_CSV}).
     *
     * @throws IOException when a directory cannot be listed
     * @throws IllegalArgumentException when there are files and none has a usable header
     */
    public static List<String> csvHeader(List<java.nio.file.Path> paths, CsvOptions csv)
            throws IOException {
        return csvHeaderForFlinkPaths(flinkPaths(paths), csv);
    }

    /**
     * {@link #csvHeader(List, CsvOptions)} of files on any Flink file system (local, {@code s3://},
     * ...).
     *
     * @throws IOException when a directory cannot be listed
     * @throws IllegalArgumentException when there are files and none has a usable header
     */
    public static List<String> csvHeaderForFlinkPaths(List<Path> paths, CsvOptions csv)
            throws IOException {
        String firstError = null;
        for (Path file : filesInOrder(paths)) {
            CsvLines.Header h = CsvLines.header(file, csv);
            if (h.names != null) {
                return List.of(h.names);
            }
            // a file without a usable header is quarantined by the source (MALFORMED_CSV): the
            // columns come from the next file
            firstError = firstError == null ? h.error : firstError;
        }
        if (firstError != null) {
            throw new IllegalArgumentException(
                    firstError + ", and no later file has a usable one to take the columns from");
        }
        return List.of();
    }

    /**
     * The columns of the first readable Parquet file under {@code paths} (in the order {@link
     * #csvHeader} takes), as a Flink row type (all nullable), or null when there is no file yet
     * (docs/semantics.md S2). A file that is not Parquet is skipped here (the source quarantines it
     * as {@code DAMAGED_FILE}).
     *
     * @throws IOException when a directory cannot be listed, or no file's footer can be read
     */
    @Nullable
    public static org.apache.flink.table.types.logical.RowType parquetRowType(
            List<java.nio.file.Path> paths) throws IOException {
        return parquetRowTypeForFlinkPaths(flinkPaths(paths));
    }

    /**
     * {@link #parquetRowType(List)} of files on any Flink file system (local, {@code s3://}, ...).
     *
     * @throws IOException when a directory cannot be listed, or no file's footer can be read
     */
    @Nullable
    public static org.apache.flink.table.types.logical.RowType parquetRowTypeForFlinkPaths(
            List<Path> paths) throws IOException {
        IOException first = null;
        for (Path file : filesInOrder(paths)) {
            try {
                return ParquetRowsFormat.rowType(file);
            } catch (IOException | RuntimeException e) {
                if (first == null) {
                    first =
                            new IOException(
                                    "the schema of Parquet file "
                                            + FileGlob.key(file)
                                            + " cannot be read ("
                                            + e.getMessage()
                                            + "), and no later file has one to take the columns"
                                            + " from",
                                    e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
        return null;
    }

    /** The files under {@code paths}, each path's in {@link #collectInOrder} order. */
    private static List<Path> filesInOrder(List<Path> paths) throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path p : paths) {
            org.apache.flink.core.fs.FileSystem fs = InputFileSystems.of(p);
            if (FileGlob.isPattern(p.toUri().getPath())) {
                Path base = FileGlob.base(p);
                if (fs.exists(base) && fs.getFileStatus(base).isDir()) {
                    out.addAll(FileGlob.list(List.of(p)));
                }
                continue;
            }
            if (fs.exists(p)) {
                collectInOrder(fs, fs.getFileStatus(p), out);
            }
        }
        return out;
    }

    /**
     * The visible files under {@code st}: a file itself, a folder's entries by name (recursively);
     * a glob pattern's matches are in path order ({@link FileGlob#list}). Any Flink file system.
     */
    private static void collectInOrder(
            org.apache.flink.core.fs.FileSystem fs,
            org.apache.flink.core.fs.FileStatus st,
            List<Path> out)
            throws IOException {
        if (!st.isDir()) {
            out.add(st.getPath());
            return;
        }
        org.apache.flink.core.fs.FileStatus[] children = fs.listStatus(st.getPath());
        if (children == null) {
            return;
        }
        List<org.apache.flink.core.fs.FileStatus> sorted = new ArrayList<>(List.of(children));
        sorted.sort(java.util.Comparator.comparing(c -> c.getPath().getName()));
        for (org.apache.flink.core.fs.FileStatus c : sorted) {
            String n = c.getPath().getName();
            if (!n.startsWith(".") && !n.startsWith("_")) {
                collectInOrder(fs, c, out);
            }
        }
    }
}
