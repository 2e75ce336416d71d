package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowConfig;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.operators.AutoCdcSpec;
import dev.changeflow.operators.ReplaceUsingSpec;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;
import dev.changeflow.sources.cdf.ChangeFeedColumns;
import dev.changeflow.sources.changes.DecoderFlow;

import org.apache.flink.table.types.logical.RowType;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * The resolved plan of an ingest job: per flow its decoder routing, its AUTO CDC definition (null
 * for append-only flows), its target table and table options. Built on the client by {@link
 * IngestPlanner} before the job graph, so definition errors (A1) surface before any data is read.
 */
public final class IngestPlan implements Serializable {
    private static final long serialVersionUID = 1L;

    /** One flow of the plan. */
    public static final class Flow implements Serializable {
        private static final long serialVersionUID = 1L;
        public final FlowConfig config;
        public final DecoderFlow decoder;

        /** Null for append-only and REPLACE USING flows. */
        @Nullable public final AutoCdcSpec spec;

        /**
         * The REPLACE USING definition (docs/semantics.md S5); null for other flows. Such a flow's
         * decoder reads its rows as an append-only flow's (data columns, no KEYS) and checks its
         * SEQUENCE BY columns ({@code NULL_SEQUENCE}, {@code MISSING_COLUMN} with the record's file
         * and line), and its target has no identifier fields.
         */
        @Nullable public final ReplaceUsingSpec replaceUsing;

        public final TableIdentifier target;
        public final StreamingTableOptions tableOptions;

        /**
         * The Iceberg table whose change feed the flow reads (docs/semantics.md S7); null for a
         * flow reading change records (files, Kafka). The decoder of such a flow only types its
         * rows: they are the change feed's, columns of {@link DecoderFlow#dataType()}.
         */
        @Nullable public final TableIdentifier changeFeed;

        Flow(
                FlowConfig config,
                DecoderFlow decoder,
                @Nullable AutoCdcSpec spec,
                TableIdentifier target,
                StreamingTableOptions tableOptions,
                @Nullable TableIdentifier changeFeed) {
            this(config, decoder, spec, target, tableOptions, changeFeed, null);
        }

        /**
         * The query of an append-only flow with a select list or WHERE (docs/semantics.md S1), over
         * the rows of {@link #appendInputType()}; null for other flows.
         */
        @Nullable public final AppendQuery query;

        Flow(
                FlowConfig config,
                DecoderFlow decoder,
                @Nullable AutoCdcSpec spec,
                TableIdentifier target,
                StreamingTableOptions tableOptions,
                @Nullable TableIdentifier changeFeed,
                @Nullable ReplaceUsingSpec replaceUsing) {
            this(config, decoder, spec, target, tableOptions, changeFeed, replaceUsing, null);
        }

        Flow(
                FlowConfig config,
                DecoderFlow decoder,
                @Nullable AutoCdcSpec spec,
                TableIdentifier target,
                StreamingTableOptions tableOptions,
                @Nullable TableIdentifier changeFeed,
                @Nullable ReplaceUsingSpec replaceUsing,
                @Nullable AppendQuery query) {
            this.query = query;
            this.replaceUsing = replaceUsing;
            this.config = config;
            this.decoder = decoder;
            this.spec = spec;
            this.target = target;
            this.tableOptions = tableOptions;
            this.changeFeed = changeFeed;
        }

        public String name() {
            return config.flowName();
        }

        /**
         * The rows an append-only flow takes, before its {@link #query}: the decoder's data
         * columns, or for a flow over a change feed the source table's columns (without {@code
         * _change_type}, {@code _commit_version}, {@code _commit_timestamp}: a streaming read of a
         * table gives its rows, S7).
         */
        public RowType appendInputType() {
            RowType data = decoder.dataType();
            if (changeFeed == null) {
                return data;
            }
            List<RowType.RowField> fields = new ArrayList<>();
            for (RowType.RowField f : data.getFields()) {
                if (!ChangeFeedColumns.RESERVED.contains(f.getName())) {
                    fields.add(f);
                }
            }
            return new RowType(fields);
        }

        /** The columns an append-only flow writes: its query's, else {@link #appendInputType()}. */
        public RowType appendType() {
            return query != null ? query.outputType() : appendInputType();
        }
    }

    public final IngestConfig config;
    public final List<Flow> flows;
    public final Namespace quarantineNamespace;

    IngestPlan(IngestConfig config, List<Flow> flows, Namespace quarantineNamespace) {
        this.config = config;
        this.flows = List.copyOf(flows);
        this.quarantineNamespace = quarantineNamespace;
    }
}
