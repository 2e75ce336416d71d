package dev.changeflow.sources.cdf.retention;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.hadoop.Util;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SupportsPrefixOperations;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The change-feed consumers of one table (F7): one JSON file per consumer at {@code <table
 * location>/changeflow/consumers/<consumer-id>.json}, written and read through the table's {@link
 * FileIO}; no table-metadata commit, so registering never conflicts with writers.
 *
 * <p>File shape: {@code {"consumer-id": "gold-job", "next-version": 72, "updated-at":
 * "2026-11-30T07:00:00Z"}} ({@code next-version} a BIGINT ≥ 0, {@code updated-at} an ISO-8601
 * instant, UTC). A file is replaced whole on each write; object stores make the new content visible
 * atomically.
 *
 * <p>Errors: an id that is not 1–128 of {@code [A-Za-z0-9._-]} (not starting with a dot) is an
 * {@link IllegalArgumentException}; a file that is not of the shape above is an {@link
 * IllegalStateException} naming the file and the fix (delete or rewrite it) — never skipped, since
 * skipping a consumer could expire snapshots it needs.
 */
@PublicEvolving
public final class ConsumerRegistry {

    /** Folder under the table location holding the consumer files. */
    public static final String FOLDER = "changeflow/consumers";

    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CONSUMER_ID = "consumer-id";
    private static final String NEXT_VERSION = "next-version";
    private static final String UPDATED_AT = "updated-at";

    private final String tableName;
    private final FileIO io;
    private final String folder;

    private ConsumerRegistry(String tableName, FileIO io, String tableLocation) {
        this.tableName = tableName;
        this.io = io;
        String base = tableLocation.endsWith("/") ? tableLocation : tableLocation + "/";
        this.folder = base + FOLDER + "/";
    }

    /** The registry of {@code table}, through its FileIO and under its location. */
    public static ConsumerRegistry forTable(Table table) {
        return new ConsumerRegistry(table.name(), table.io(), table.location());
    }

    /** Location of {@code consumerId}'s file. */
    public String location(String consumerId) {
        return folder + checkId(consumerId) + ".json";
    }

    /** Writes (creates or replaces) {@code consumerId}'s position. */
    public void write(String consumerId, long nextVersion, Instant updatedAt) {
        if (nextVersion < 0) {
            throw new IllegalArgumentException(
                    String.format(
                            "next-version of consumer '%s' of table %s must be >= 0, got %d",
                            consumerId, tableName, nextVersion));
        }
        ObjectNode node = JSON.createObjectNode();
        node.put(CONSUMER_ID, consumerId);
        node.put(NEXT_VERSION, nextVersion);
        node.put(UPDATED_AT, updatedAt.toString());
        try {
            byte[] bytes = JSON.writeValueAsBytes(node);
            if (io instanceof HadoopFileIO) {
                writeByRename(((HadoopFileIO) io).conf(), location(consumerId), bytes);
            } else {
                // object stores (S3FileIO, ...) make a PUT visible whole or not at all
                try (OutputStream out =
                        io.newOutputFile(location(consumerId)).createOrOverwrite()) {
                    out.write(bytes);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(
                    String.format(
                            "Cannot write consumer file %s of table %s",
                            location(consumerId), tableName),
                    e);
        }
    }

    /**
     * A Hadoop file system shows a file while it is written, and a write interrupted (a job
     * stopping while its enumerator records the position) would leave it truncated: write a
     * temporary file beside it (not a {@code .json} name, so {@link #list} skips it), then rename
     * it over the consumer file.
     */
    private static void writeByRename(Configuration conf, String location, byte[] bytes)
            throws IOException {
        Path target = new Path(location);
        Path tmp = new Path(location + "." + UUID.randomUUID() + ".tmp");
        FileSystem fs = Util.getFs(target, conf);
        try (OutputStream out = fs.create(tmp, true)) {
            out.write(bytes);
        }
        if (!fs.rename(tmp, target)) {
            // HDFS does not rename over an existing file
            fs.delete(target, false);
            if (!fs.rename(tmp, target)) {
                fs.delete(tmp, false);
                throw new IOException("cannot rename " + tmp + " to " + target);
            }
        }
    }

    /** {@code consumerId}'s position, or empty when it has no file. */
    public Optional<ConsumerPosition> read(String consumerId) {
        InputFile file = io.newInputFile(location(consumerId));
        if (!file.exists()) {
            return Optional.empty();
        }
        return Optional.of(parse(file));
    }

    /**
     * Every consumer of the table, ordered by id.
     *
     * @throws UnsupportedOperationException when the table's FileIO cannot list files
     */
    public List<ConsumerPosition> list() {
        if (!(io instanceof SupportsPrefixOperations)) {
            throw new UnsupportedOperationException(
                    String.format(
                            "The FileIO of table %s (%s) cannot list files, so its change-feed consumers under %s "
                                    + "cannot be listed. Use a FileIO that supports prefix operations (HadoopFileIO, "
                                    + "S3FileIO, ResolvingFileIO, ...).",
                            tableName, io.getClass().getName(), folder));
        }
        List<ConsumerPosition> result = new ArrayList<>();
        try {
            for (FileInfo info : ((SupportsPrefixOperations) io).listPrefix(folder)) {
                String location = info.location();
                String name = location.substring(location.lastIndexOf('/') + 1);
                String id = name.endsWith(".json") ? name.substring(0, name.length() - 5) : "";
                if (ID.matcher(id).matches()) {
                    result.add(parse(io.newInputFile(location(id))));
                }
            }
        } catch (UncheckedIOException e) {
            if (!(e.getCause() instanceof FileNotFoundException)) {
                throw e;
            }
        } catch (NotFoundException e) {
            // no consumer folder yet
        }
        result.sort(Comparator.comparing(ConsumerPosition::consumerId));
        return result;
    }

    /** Removes {@code consumerId}'s file; returns whether it existed. */
    public boolean remove(String consumerId) {
        String location = location(consumerId);
        if (!io.newInputFile(location).exists()) {
            return false;
        }
        io.deleteFile(location);
        return true;
    }

    private ConsumerPosition parse(InputFile file) {
        try (InputStream in = file.newStream()) {
            JsonNode node = JSON.readTree(in);
            JsonNode id = node == null ? null : node.get(CONSUMER_ID);
            JsonNode next = node == null ? null : node.get(NEXT_VERSION);
            JsonNode updated = node == null ? null : node.get(UPDATED_AT);
            if (id == null
                    || !id.isTextual()
                    || next == null
                    || !next.canConvertToLong()
                    || next.asLong() < 0
                    || updated == null
                    || !updated.isTextual()) {
                throw malformed(
                        file,
                        "it needs \"consumer-id\" (text), \"next-version\" (integer >= 0) and "
                                + "\"updated-at\" (ISO-8601 instant)",
                        null);
            }
            return new ConsumerPosition(
                    id.asText(), next.asLong(), Instant.parse(updated.asText()));
        } catch (DateTimeParseException e) {
            throw malformed(
                    file,
                    "\"updated-at\" is not an ISO-8601 instant such as 2026-11-30T07:00:00Z",
                    e);
        } catch (IOException e) {
            throw malformed(file, "it is not JSON (" + e.getMessage() + ")", e);
        }
    }

    private IllegalStateException malformed(InputFile file, String problem, Exception cause) {
        return new IllegalStateException(
                String.format(
                        "Consumer file %s of table %s is malformed: %s. Delete the file (the consumer is then "
                                + "unknown to snapshot expiry) or rewrite it.",
                        file.location(), tableName, problem),
                cause);
    }

    private String checkId(String consumerId) {
        if (consumerId == null || !ID.matcher(consumerId).matches()) {
            throw new IllegalArgumentException(
                    String.format(
                            "Consumer id '%s' for table %s is not valid: use 1 to 128 letters, digits, '.', '_' "
                                    + "or '-', not starting with '.'.",
                            consumerId, tableName));
        }
        return consumerId;
    }
}
