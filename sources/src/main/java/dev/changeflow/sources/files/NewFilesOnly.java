package dev.changeflow.sources.files;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.connector.file.src.ContinuousEnumerationSettings;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.PendingSplitsCheckpoint;
import org.apache.flink.connector.file.src.enumerate.FileEnumerator;
import org.apache.flink.connector.file.src.impl.ContinuousFileSplitEnumerator;
import org.apache.flink.core.fs.Path;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A continuous {@link FileSource} that, at its first start, takes the files already under its paths
 * as processed without reading them: {@code read_files(..., includeExistingFiles => false)}
 * (docs/semantics.md S2). Only files that appear afterwards are read.
 *
 * <p>"First start" is a start without restored state: {@link #createEnumerator} lists the paths
 * once, hands no split of the existing files to the readers and records their paths among the
 * enumerator's processed paths — the same {@link PendingSplitsCheckpoint} a plain {@link
 * FileSource} checkpoints, so a restored job ({@link #restoreEnumerator}) never sees them again,
 * and a savepoint of this source restores into a plain {@link FileSource} (and back) under the same
 * uid. Everything but the first enumeration is the wrapped {@link FileSource}'s (readers,
 * serializers, discovery every interval).
 *
 * <p>{@code skip} narrows what is taken as existing: null takes every file the first listing finds
 * (a cluster job); a set takes only those paths (absolute local paths, or URIs of other file
 * systems) — a local launcher passes the exact list it recorded, so its bookkeeping and the
 * enumerator agree even when a file arrives between the two listings (that file is read).
 */
@PublicEvolving
public final class NewFilesOnly<T> extends FileSourceWrapper<T> {
    private static final long serialVersionUID = 1L;

    private final FileSource<T> fileSource;
    private final Path[] paths;
    private final FileEnumerator.Provider enumerators;
    @Nullable private final Set<String> skip;

    /**
     * @param files a continuous file source over {@code paths} (built with {@code
     *     monitorContinuously})
     * @param paths the same paths as {@code files}
     * @param enumerators the file enumerator of {@code files} (for {@link ChangeFiles}: the
     *     non-splitting one)
     * @param skip the files taken as existing, or null for every file found at the first start
     * @throws IllegalArgumentException when {@code files} is bounded: a bounded source that skips
     *     the files present at its start reads nothing
     */
    public NewFilesOnly(
            FileSource<T> files,
            List<Path> paths,
            FileEnumerator.Provider enumerators,
            @Nullable Collection<String> skip) {
        super(continuous(files));
        this.fileSource = files;
        this.paths = paths.toArray(new Path[0]);
        this.enumerators = enumerators;
        this.skip = skip == null ? null : new LinkedHashSet<>(skip);
    }

    /** First start: the existing files are processed paths, and no split is assigned for them. */
    @Override
    public SplitEnumerator<FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>>
            createEnumerator(SplitEnumeratorContext<FileSourceSplit> context) {
        FileEnumerator enumerator = enumerators.create();
        Collection<FileSourceSplit> found;
        try {
            found = enumerator.enumerateSplits(paths, context.currentParallelism());
        } catch (IOException e) {
            throw new UncheckedIOException("could not list the input files", e);
        }
        Set<Path> processed = new LinkedHashSet<>();
        List<FileSourceSplit> toRead = new ArrayList<>();
        for (FileSourceSplit split : found) {
            processed.add(split.path());
            if (skip != null && !skip.contains(key(split.path()))) {
                toRead.add(split);
            }
        }
        ContinuousEnumerationSettings continuous = fileSource.getContinuousEnumerationSettings();
        return new ContinuousFileSplitEnumerator(
                context,
                enumerator,
                fileSource.getAssignerFactory().create(toRead),
                paths,
                processed,
                continuous.getDiscoveryInterval().toMillis());
    }

    @Override
    public SplitEnumerator<FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>>
            restoreEnumerator(
                    SplitEnumeratorContext<FileSourceSplit> context,
                    PendingSplitsCheckpoint<FileSourceSplit> checkpoint) {
        return fileSource.restoreEnumerator(context, checkpoint);
    }

    private static <T> FileSource<T> continuous(FileSource<T> files) {
        if (files.getContinuousEnumerationSettings() == null) {
            throw new IllegalArgumentException(
                    "skipping the existing files needs continuous discovery (a monitor interval):"
                            + " a bounded source would read nothing");
        }
        return files;
    }

    /** A local file as its absolute path, a file of another file system as its URI. */
    static String key(Path path) {
        return FileGlob.key(path);
    }
}
