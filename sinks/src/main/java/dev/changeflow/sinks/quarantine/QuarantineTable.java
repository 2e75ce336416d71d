package dev.changeflow.sinks.quarantine;

import dev.changeflow.operators.quarantine.QuarantineRecords;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sinks.iceberg.StreamingTableSink;
import dev.changeflow.sinks.iceberg.StreamingTables;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.table.data.RowData;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;

import java.util.List;

/**
 * The quarantine table of a namespace, {@code <namespace>.changeflow_quarantine} (semantics.md A2,
 * A5): one append-only Iceberg table per namespace holding every record that could not be applied,
 * with its reason — nothing is dropped silently.
 *
 * <p>Schema ({@link QuarantineRecords#ROW_TYPE}): {@code flow string, source string, partition int,
 * offset long, raw binary, reason string, detail string, quarantined_at timestamptz} (Flink {@code
 * TIMESTAMP_LTZ(3)}, stored by Iceberg in microseconds). No identifier fields; unpartitioned;
 * format v2.
 */
@PublicEvolving
public final class QuarantineTable {

    private QuarantineTable() {}

    /** {@code <namespace>.changeflow_quarantine}. */
    public static TableIdentifier identifier(Namespace namespace) {
        return TableIdentifier.of(namespace, QuarantineRecords.TABLE_NAME);
    }

    /**
     * Creates the namespace and the quarantine table when missing and returns it.
     *
     * @throws dev.changeflow.operators.AutoCdcException {@code TARGET_SCHEMA_MISMATCH} when a table
     *     of that name exists with another schema
     */
    public static Table ensure(Catalog catalog, Namespace namespace) {
        return StreamingTables.ensureTable(
                catalog, identifier(namespace), QuarantineRecords.ROW_TYPE, List.of(), options());
    }

    /**
     * Appends quarantine rows ({@link QuarantineRecords#of}) to the namespace's quarantine table
     * (which {@link #ensure} must have created), committed with each checkpoint.
     *
     * @param uidSuffix stable suffix of the sink's operator uids
     */
    public static DataStreamSink<Void> append(
            DataStream<RowData> quarantine,
            CatalogLoader catalogLoader,
            Namespace namespace,
            String uidSuffix) {
        return StreamingTableSink.append(
                quarantine,
                catalogLoader,
                identifier(namespace),
                options(),
                uidSuffix,
                QuarantineRecords.ROW_TYPE);
    }

    private static StreamingTableOptions options() {
        return StreamingTableOptions.builder().bloomFilters(false).build();
    }
}
