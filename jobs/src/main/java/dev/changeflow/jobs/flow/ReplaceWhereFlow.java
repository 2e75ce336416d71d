package dev.changeflow.jobs.flow;

import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.StreamingTableOptions;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.util.List;
import java.util.Objects;

/**
 * A REPLACE WHERE flow built in Java (docs/semantics.md S4): {@code ReplaceWhereFlow.query("SELECT
 * ...").where("day >= CURRENT_DATE - INTERVAL '7' DAY")
 * .catalog(settings).into("shop.daily").refresh()}. Each {@link #refresh()} is one Flink BATCH job
 * and at most one Iceberg commit ({@link ReplaceWhereRefresh}); {@link #refreshWhere(String)}
 * replaces another slice once (a backfill).
 *
 * <p>Errors are {@link SqlException}s with the codes of S4; their position names the part they are
 * about: file {@code "query"}, {@code "predicate"} or {@code "override"}, line 1, the column inside
 * that text.
 */
@PublicEvolving
public final class ReplaceWhereFlow {

    private final ReplaceWhereRefresh.Definition definition;
    private final CatalogSettings catalog;
    private final int parallelism;

    private ReplaceWhereFlow(
            ReplaceWhereRefresh.Definition definition, CatalogSettings catalog, int parallelism) {
        this.definition = definition;
        this.catalog = catalog;
        this.parallelism = parallelism;
    }

    /** Starts a flow whose bounded Flink SQL query gives the slice's rows (matched BY NAME). */
    public static Builder query(String sql) {
        return new Builder(sql);
    }

    /** The definition the refreshes run. */
    public ReplaceWhereRefresh.Definition definition() {
        return definition;
    }

    /**
     * Replaces the rows the flow's predicate selects.
     *
     * @throws SqlException see {@link ReplaceWhereRefresh}
     */
    public ReplaceWhereRefresh.Result refresh() throws Exception {
        return ReplaceWhereRefresh.refresh(definition, catalog, null, null, parallelism);
    }

    /**
     * Replaces the rows {@code predicate} selects instead, this once (a backfill).
     *
     * @throws SqlException see {@link ReplaceWhereRefresh}
     */
    public ReplaceWhereRefresh.Result refreshWhere(String predicate) throws Exception {
        Objects.requireNonNull(predicate, "predicate");
        return ReplaceWhereRefresh.refresh(
                definition, catalog, predicate, new SqlPosition("override", 1, 1), parallelism);
    }

    /** Builds a {@link ReplaceWhereFlow}; {@link #where} and {@link #catalog} are required. */
    @PublicEvolving
    public static final class Builder {
        private final String query;
        @Nullable private String predicate;
        @Nullable private String schema;
        @Nullable private CatalogSettings catalog;
        private final StreamingTableOptions.Builder options = StreamingTableOptions.builder();
        private int parallelism;

        private Builder(String query) {
            this.query = Objects.requireNonNull(query, "query");
        }

        /** The slice the flow owns: a deterministic Flink SQL boolean over the table's columns. */
        public Builder where(String predicate) {
            this.predicate = predicate;
            return this;
        }

        /**
         * The table's columns as a Flink DDL column list ({@code "day DATE, total BIGINT"}); by
         * default a missing table gets the query's columns.
         */
        public Builder schema(String columns) {
            this.schema = columns;
            return this;
        }

        /** Partition fields of a new table (column names or Iceberg transforms). */
        public Builder partitionBy(String... fields) {
            options.partitionBy(List.of(fields));
            return this;
        }

        /** Iceberg format version of a new table: 2 (default) or 3. */
        public Builder formatVersion(int version) {
            options.formatVersion(version);
            return this;
        }

        /** The Iceberg catalog of the table and of the tables the query reads. */
        public Builder catalog(CatalogSettings settings) {
            this.catalog = settings;
            return this;
        }

        /** Parallelism of each refresh's job; 0 (default): Flink's default. */
        public Builder parallelism(int parallelism) {
            if (parallelism < 0) {
                throw new IllegalArgumentException("parallelism must be >= 0, got " + parallelism);
            }
            this.parallelism = parallelism;
            return this;
        }

        /**
         * The flow into {@code table} ({@code namespace.name}).
         *
         * @throws IllegalArgumentException when the predicate or the catalog is missing, or the
         *     table has no namespace
         */
        public ReplaceWhereFlow into(String table) {
            if (predicate == null || predicate.isBlank()) {
                throw new IllegalArgumentException(
                        "a REPLACE WHERE flow needs its predicate: .where(\"<Flink SQL boolean>\")");
            }
            if (catalog == null) {
                throw new IllegalArgumentException(
                        "a REPLACE WHERE flow needs .catalog(CatalogSettings)");
            }
            TableIdentifier id = TableIdentifier.parse(table);
            if (!id.hasNamespace()) {
                throw new IllegalArgumentException(
                        "give the table as namespace.name, got '" + table + "'");
            }
            return new ReplaceWhereFlow(
                    new ReplaceWhereRefresh.Definition(
                            id,
                            query,
                            new SqlPosition("query", 1, 1),
                            predicate,
                            new SqlPosition("predicate", 1, 1),
                            schema,
                            options.build()),
                    catalog,
                    parallelism);
        }
    }
}
