package dev.changeflow.jobs.gold;

import dev.changeflow.sources.cdf.stream.ChangeFeedStart;

import org.apache.iceberg.Table;
import org.apache.iceberg.flink.CatalogLoader;

import javax.annotation.Nullable;

/**
 * Resolves a Gold job's start inside the change feed's enumerator when the job starts without state
 * ({@link GoldStart#resolve}); a restore from a checkpoint or savepoint never calls it.
 *
 * @see ChangeFeedStart.Resolver
 */
final class GoldStartResolver implements ChangeFeedStart.Resolver {
    private static final long serialVersionUID = 1L;

    private final CatalogLoader catalog;
    private final GoldSpec spec;
    @Nullable private final Long requested;

    GoldStartResolver(CatalogLoader catalog, GoldSpec spec, @Nullable Long requested) {
        this.catalog = catalog;
        this.spec = spec;
        this.requested = requested;
    }

    @Override
    public ChangeFeedStart start(Table silver) {
        return GoldRunner.startOf(catalog.loadCatalog(), silver, spec, requested).feedStart();
    }
}
