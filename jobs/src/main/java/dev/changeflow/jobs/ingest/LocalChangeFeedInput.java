package dev.changeflow.jobs.ingest;

import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sources.cdf.StreamingAccess;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The change feeds of Iceberg tables in a local run (docs/semantics.md S7): a run reads each source
 * table's changes up to the version that was its latest at launch — from its current snapshot on a
 * start without state, else from the position saved with the job — and ends once every subtask of
 * every feed saw that version's watermark ({@link ChangeFeedProgressOperator}).
 */
final class LocalChangeFeedInput implements LocalInput {
    /** How often a feed looks for new versions during a local run. */
    static final Duration MONITOR_INTERVAL = Duration.ofMillis(500);

    private final CatalogSettings catalog;
    private final List<TableIdentifier> sources = new ArrayList<>();
    private final int parallelism;
    private final Map<TableIdentifier, Long> upTo = new LinkedHashMap<>();

    /**
     * @param plan a plan of {@link IngestPlanner#planChangeFeeds}
     */
    LocalChangeFeedInput(IngestPlan plan, CatalogSettings catalog) {
        this.catalog = catalog;
        this.parallelism = plan.config.parallelism;
        for (IngestPlan.Flow f : plan.flows) {
            if (f.changeFeed != null && !sources.contains(f.changeFeed)) {
                sources.add(f.changeFeed);
            }
        }
    }

    @Override
    public boolean prepare(
            LocalCheckpoints checkpoints,
            Optional<org.apache.flink.core.fs.Path> restore,
            LocalJobState state,
            PrintStream out)
            throws IOException {
        Catalog cat = catalog.open();
        try {
            for (TableIdentifier id : sources) {
                upTo.put(id, StreamingAccess.history(cat.loadTable(id)).latestVersion());
            }
        } finally {
            if (cat instanceof Closeable c) {
                c.close();
            }
        }
        return true;
    }

    @Override
    public String describe() {
        List<String> feeds = new ArrayList<>();
        upTo.forEach((id, v) -> feeds.add(id + " up to version " + v));
        return "the change feed of " + String.join(", ", feeds);
    }

    @Override
    public void build(StreamExecutionEnvironment env, IngestPlan plan, CatalogSettings catalog) {
        IngestJob.buildChangeFeeds(env, plan, catalog, upTo, MONITOR_INTERVAL);
    }

    @Override
    public boolean done() {
        return LocalMetrics.sum(ChangeFeedProgressOperator.SUBTASKS_METRIC)
                        >= (long) sources.size() * parallelism
                && LocalMetrics.sum(ChangeFeedProgressOperator.PENDING_METRIC) == 0;
    }

    @Override
    public String progress() {
        long subtasks = (long) sources.size() * parallelism;
        long pending = LocalMetrics.sum(ChangeFeedProgressOperator.PENDING_METRIC);
        return "change-feed readers at their last version "
                + (LocalMetrics.sum(ChangeFeedProgressOperator.SUBTASKS_METRIC) - pending)
                + "/"
                + subtasks;
    }
}
