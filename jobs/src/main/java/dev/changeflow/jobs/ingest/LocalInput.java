package dev.changeflow.jobs.ingest;

import dev.changeflow.sinks.iceberg.CatalogSettings;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Optional;

/**
 * What differs between inputs in a local run ({@link LocalIngest}): what is new, the reader, the
 * end condition. One instance serves one launch; {@link #prepare} is called first.
 */
interface LocalInput {
    /**
     * Decides what this run reads; false = nothing new (a message was printed to {@code out}).
     *
     * @param checkpoints where the job keeps its state (an input may keep its own records there)
     * @param restore the state the run resumes from, if any
     */
    boolean prepare(
            LocalCheckpoints checkpoints,
            Optional<org.apache.flink.core.fs.Path> restore,
            LocalJobState state,
            PrintStream out)
            throws Exception;

    /** "3 file(s)", "topics [...] (8 partitions)". */
    String describe();

    /** Adds the job reading this input to {@code env}. */
    void build(StreamExecutionEnvironment env, IngestPlan plan, CatalogSettings catalog);

    /** Whether everything this run set out to read was read (polled from the launcher). */
    boolean done();

    /** The input's part of a progress line, e.g. {@code files 0/1}. */
    String progress();

    /** Called instead of a run when {@link #prepare} found nothing new. */
    default void nothingToDo(LocalJobState state) throws IOException {}

    /** Called after the job stopped cleanly with {@code savepoint}. */
    default void finished(org.apache.flink.core.fs.Path savepoint, LocalJobState state)
            throws IOException {}
}
