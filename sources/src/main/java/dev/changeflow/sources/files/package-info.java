/**
 * Change records from files (semantics.md S2, A5): a line-oriented {@link
 * org.apache.flink.connector.file.src.FileSource} over plain or gzip files ({@link
 * dev.changeflow.sources.files.ChangeFiles}) that turns a damaged gzip into a {@code
 * TRUNCATED_FILE} (cut short) or {@code DAMAGED_FILE} (fails its integrity checks) marker instead
 * of a crash loop, and the Flink adapter over the change-record decoder ({@link
 * dev.changeflow.sources.files.DecodeFunction}).
 */
package dev.changeflow.sources.files;
