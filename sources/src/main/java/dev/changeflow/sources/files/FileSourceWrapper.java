package dev.changeflow.sources.files;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.PendingSplitsCheckpoint;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * A file source that changes only how splits are enumerated: readers, split and enumerator
 * serializers, boundedness and the produced type are the wrapped source's. The enumerator state is
 * the wrapped source's {@link PendingSplitsCheckpoint}, so a savepoint taken with a wrapper
 * restores into the plain source under the same uid, and back ({@link NewFilesOnly}, {@link
 * FilesPerCheckpoint}).
 *
 * @param <T> the records the readers emit
 */
@Internal
abstract class FileSourceWrapper<T>
        implements Source<T, FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>>,
                ResultTypeQueryable<T> {
    private static final long serialVersionUID = 1L;

    /** The wrapped file source. */
    final Source<T, FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>> files;

    FileSourceWrapper(Source<T, FileSourceSplit, PendingSplitsCheckpoint<FileSourceSplit>> files) {
        this.files = files;
    }

    @Override
    public Boundedness getBoundedness() {
        return files.getBoundedness();
    }

    @Override
    public SourceReader<T, FileSourceSplit> createReader(SourceReaderContext readerContext)
            throws Exception {
        return files.createReader(readerContext);
    }

    @Override
    public SimpleVersionedSerializer<FileSourceSplit> getSplitSerializer() {
        return files.getSplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<PendingSplitsCheckpoint<FileSourceSplit>>
            getEnumeratorCheckpointSerializer() {
        return files.getEnumeratorCheckpointSerializer();
    }

    @Override
    @SuppressWarnings("unchecked")
    public TypeInformation<T> getProducedType() {
        return ((ResultTypeQueryable<T>) files).getProducedType();
    }
}
