package dev.changeflow.sources.files;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.IOException;

/**
 * A file of any Flink file system (local, {@code s3://}, ...) as the input file of Iceberg's and
 * Parquet's readers, so Parquet files are probed and read through {@link FileSystem} as JSON and
 * CSV files are (docs/semantics.md S2), not through Hadoop's file systems.
 */
final class FlinkFsInputFiles {
    private FlinkFsInputFiles() {}

    /** {@code file} as an Iceberg input file. */
    static org.apache.iceberg.io.InputFile iceberg(Path file) {
        return new org.apache.iceberg.io.InputFile() {
            @Override
            public long getLength() {
                try {
                    return fs(file).getFileStatus(file).getLen();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }

            @Override
            public org.apache.iceberg.io.SeekableInputStream newStream() {
                FSDataInputStream in;
                try {
                    in = fs(file).open(file);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return new org.apache.iceberg.io.SeekableInputStream() {
                    @Override
                    public long getPos() throws IOException {
                        return in.getPos();
                    }

                    @Override
                    public void seek(long newPos) throws IOException {
                        in.seek(newPos);
                    }

                    @Override
                    public int read() throws IOException {
                        return in.read();
                    }

                    @Override
                    public int read(byte[] b, int off, int len) throws IOException {
                        return in.read(b, off, len);
                    }

                    @Override
                    public void close() throws IOException {
                        in.close();
                    }
                };
            }

            @Override
            public String location() {
                return file.toString();
            }

            @Override
            public boolean exists() {
                try {
                    return fs(file).exists(file);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        };
    }

    /** {@code file} as a Parquet input file (for its footer). */
    static org.apache.parquet.io.InputFile parquet(Path file) throws IOException {
        long length = fs(file).getFileStatus(file).getLen();
        return new org.apache.parquet.io.InputFile() {
            @Override
            public long getLength() {
                return length;
            }

            @Override
            public org.apache.parquet.io.SeekableInputStream newStream() throws IOException {
                FSDataInputStream in = fs(file).open(file);
                return new org.apache.parquet.io.DelegatingSeekableInputStream(in) {
                    @Override
                    public long getPos() throws IOException {
                        return in.getPos();
                    }

                    @Override
                    public void seek(long newPos) throws IOException {
                        in.seek(newPos);
                    }
                };
            }

            @Override
            public String toString() {
                return file.toString();
            }
        };
    }

    private static FileSystem fs(Path file) throws IOException {
        return InputFileSystems.of(file);
    }
}
