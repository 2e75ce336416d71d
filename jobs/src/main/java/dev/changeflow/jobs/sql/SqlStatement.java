package dev.changeflow.jobs.sql;

import org.apache.flink.annotation.PublicEvolving;

import javax.annotation.Nullable;

import java.util.List;
import java.util.Map;

/**
 * One statement of a pipeline file, as {@link SqlParser} read it. Names are as written, without
 * back-quotes and without a {@code LIVE.} prefix; expressions ({@code SEQUENCE BY}, {@code APPLY AS
 * ... WHEN}), column types and partition transforms are Flink SQL text: the tokens as written, runs
 * of blanks and comments shortened to one blank, string literals single-quoted. They are never
 * evaluated here (docs/semantics.md A1, A5).
 */
@PublicEvolving
public sealed interface SqlStatement {

    /** Where the statement starts. */
    SqlPosition position();

    /** {@code SET key = value}: key and value as written, quotes of a single literal removed. */
    record Set(SqlPosition position, String key, String value) implements SqlStatement {}

    /**
     * {@code USE CATALOG c} (catalog set, namespace null) or {@code USE [SCHEMA|DATABASE] ns}
     * (namespace set).
     */
    record Use(SqlPosition position, @Nullable String catalog, @Nullable String namespace)
            implements SqlStatement {}

    /** {@code CREATE TEMPORARY VIEW name AS SELECT * FROM STREAM source}. */
    record CreateView(SqlPosition position, String name, Source source) implements SqlStatement {}

    /**
     * {@code CREATE [OR REFRESH] STREAMING TABLE name [(columns)] [PARTITIONED BY (...)] [COMMENT
     * '...'] [TBLPROPERTIES (...)] [AS SELECT * FROM STREAM source | FLOW AUTO CDC FROM source
     * clauses]}.
     *
     * @param flow the flow the statement defines itself; null for a target declared without one
     * @param schedule the SCHEDULE clause; null without one (S3)
     * @param constraints the column list's {@code CONSTRAINT ... EXPECT} items, in order (S8)
     */
    record CreateStreamingTable(
            SqlPosition position,
            String name,
            List<Column> columns,
            List<String> partitionedBy,
            @Nullable String comment,
            Map<String, String> properties,
            @Nullable Flow flow,
            @Nullable Schedule schedule,
            List<Constraint> constraints)
            implements SqlStatement {

        /** A table without expectations. */
        public CreateStreamingTable(
                SqlPosition position,
                String name,
                List<Column> columns,
                List<String> partitionedBy,
                @Nullable String comment,
                Map<String, String> properties,
                @Nullable Flow flow,
                @Nullable Schedule schedule) {
            this(
                    position,
                    name,
                    columns,
                    partitionedBy,
                    comment,
                    properties,
                    flow,
                    schedule,
                    List.of());
        }

        /** A table without a SCHEDULE clause or expectations. */
        public CreateStreamingTable(
                SqlPosition position,
                String name,
                List<Column> columns,
                List<String> partitionedBy,
                @Nullable String comment,
                Map<String, String> properties,
                @Nullable Flow flow) {
            this(position, name, columns, partitionedBy, comment, properties, flow, null);
        }
    }

    /**
     * {@code ALTER STREAMING TABLE name ADD SCHEDULE ... | ALTER SCHEDULE ... | DROP SCHEDULE}
     * (docs/semantics.md S3).
     *
     * @param schedule the new schedule; null for {@code DROP}
     */
    record AlterSchedule(
            SqlPosition position, String table, Action action, @Nullable Schedule schedule)
            implements SqlStatement {
        /** What the statement does to the table's schedule. */
        public enum Action {
            /** ADD SCHEDULE: the table must have none. */
            ADD,
            /** ALTER SCHEDULE: the table must have one. */
            ALTER,
            /** DROP SCHEDULE: the table must have one. */
            DROP
        }
    }

    /**
     * A {@code SCHEDULE} clause (docs/semantics.md S3): {@code SCHEDULE [REFRESH] EVERY n
     * HOUR[S]|DAY[S]|WEEK[S]} or {@code SCHEDULE [REFRESH] CRON 'quartz' [AT TIME ZONE 'tz']}.
     */
    sealed interface Schedule {
        /** Where the clause starts. */
        SqlPosition position();

        /** The IANA time zone of the schedule; null for the cluster's (UTC on Kubernetes). */
        @Nullable
        String timeZone();

        /** The units of {@code EVERY}. */
        enum Unit {
            HOURS,
            DAYS,
            WEEKS
        }

        /**
         * {@code EVERY count unit}; the parser checks the range (1–72 hours, 1–31 days, 1–8 weeks).
         */
        record Every(SqlPosition position, int count, Unit unit) implements Schedule {
            @Override
            public String timeZone() {
                return null;
            }
        }

        /**
         * {@code CRON 'quartz' [AT TIME ZONE 'tz']}: the Quartz expression as written; its
         * Kubernetes form is {@link KubernetesCron#fromQuartz}, checked by the parser.
         */
        record Cron(SqlPosition position, String quartz, @Nullable String timeZone)
                implements Schedule {}
    }

    /**
     * {@code CREATE FLOW name AS AUTO CDC INTO target ...}, {@code CREATE FLOW name AS INSERT INTO
     * target BY NAME SELECT * FROM STREAM source} or {@code APPLY CHANGES INTO target ...}.
     *
     * @param name the flow's name; null for {@code APPLY CHANGES INTO}
     */
    record CreateFlow(SqlPosition position, @Nullable String name, String target, Flow flow)
            implements SqlStatement {}

    /**
     * A declared column: name, Flink SQL type text, NOT NULL, comment, and where its type starts
     * (errors about the type point there).
     */
    /**
     * {@code CONSTRAINT name EXPECT (expression) [ON VIOLATION DROP ROW | FAIL UPDATE]} in the
     * column list of a streaming table: a data-quality expectation of the flow into it
     * (docs/semantics.md S8).
     *
     * @param position where CONSTRAINT starts
     * @param expression the Flink SQL text between the parentheses (normalised as other
     *     expressions)
     * @param onViolation KEEP without an ON VIOLATION clause
     */
    record Constraint(
            SqlPosition position,
            String name,
            String expression,
            dev.changeflow.operators.Expectation.OnViolation onViolation) {}

    record Column(
            String name,
            String type,
            boolean notNull,
            @Nullable String comment,
            SqlPosition typePosition) {}

    /**
     * {@code REFRESH STREAMING TABLE t [, t2 ...] [FULL]} (docs/semantics.md S1): what {@code run
     * --refresh t} ({@code --full-refresh t} with FULL) does, run when the file is run.
     *
     * @param tables the table names as written, without {@code LIVE.}
     * @param full whether FULL is given
     */
    record Refresh(
            SqlPosition position,
            List<String> tables,
            boolean full,
            @Nullable String where,
            @Nullable SqlPosition wherePosition)
            implements SqlStatement {
        /** A refresh without a predicate override. */
        public Refresh(SqlPosition position, List<String> tables, boolean full) {
            this(position, tables, full, null, null);
        }
    }

    /**
     * {@code DESCRIBE [TABLE] [EXTENDED] t} (docs/semantics.md S9): {@code run} prints the table's
     * columns and, with EXTENDED, its definition in the file, its schedule and its last refresh,
     * after the file's refreshes.
     *
     * @param table the name as written, without {@code LIVE.}
     * @param tablePosition where the name is written
     */
    record Describe(SqlPosition position, String table, SqlPosition tablePosition, boolean extended)
            implements SqlStatement {}

    /**
     * {@code DROP TABLE [IF EXISTS] t} (docs/semantics.md S9): {@code run} drops the Iceberg table
     * and the saved state of the file's jobs that write it, before the file's refreshes.
     *
     * @param table the name as written, without {@code LIVE.}
     * @param tablePosition where the name is written (a missing table's error points there)
     */
    record Drop(SqlPosition position, String table, SqlPosition tablePosition, boolean ifExists)
            implements SqlStatement {}

    /**
     * What a flow reads and how it applies it.
     *
     * @param autoCdc the AUTO CDC clauses; null for an append flow (every record inserted) and a
     *     REPLACE USING flow
     * @param replaceUsing the REPLACE USING clauses (S5); null for other flows
     */
    record Flow(
            SqlPosition position,
            @Nullable Source source,
            @Nullable AutoCdc autoCdc,
            @Nullable ReplaceUsing replaceUsing,
            @Nullable ReplaceWhere replaceWhere,
            @Nullable Select select) {
        /** A flow without a select list. */
        Flow(
                SqlPosition position,
                @Nullable Source source,
                @Nullable AutoCdc autoCdc,
                @Nullable ReplaceUsing replaceUsing,
                @Nullable ReplaceWhere replaceWhere) {
            this(position, source, autoCdc, replaceUsing, replaceWhere, null);
        }

        /** An AUTO CDC flow ({@code autoCdc} set) or an append flow ({@code autoCdc} null). */
        Flow(SqlPosition position, Source source, @Nullable AutoCdc autoCdc) {
            this(position, source, autoCdc, null, null);
        }

        /** A flow of the above or a REPLACE USING flow. */
        Flow(
                SqlPosition position,
                Source source,
                @Nullable AutoCdc autoCdc,
                @Nullable ReplaceUsing replaceUsing) {
            this(position, source, autoCdc, replaceUsing, null);
        }
    }

    /**
     * The query of an append flow other than {@code SELECT * FROM STREAM source}: {@code SELECT
     * list FROM STREAM source [WHERE predicate]} (docs/semantics.md S1). The select list and the
     * predicate are Flink SQL over the source's columns, evaluated by Flink; each text is laid out
     * as in the file from its position (a position inside it is exact).
     *
     * @param list the select list (columns, {@code AS} aliases, casts, expressions)
     * @param where the WHERE predicate; null without one
     */
    record Select(
            String list,
            SqlPosition listPosition,
            @Nullable String where,
            @Nullable SqlPosition wherePosition) {}

    /**
     * {@code FLOW REPLACE WHERE predicate BY NAME query} (docs/semantics.md S4); such a flow has no
     * {@link Source}: its query reads catalog tables.
     *
     * @param predicate the predicate as Flink SQL, laid out as in the file from {@code
     *     predicatePosition} (a position inside it is exact)
     * @param query the query as Flink SQL, laid out as in the file from {@code queryPosition}
     */
    record ReplaceWhere(
            String predicate,
            SqlPosition predicatePosition,
            String query,
            SqlPosition queryPosition) {}

    /**
     * {@code FLOW REPLACE USING (keys) SEQUENCE BY s BY NAME query} (docs/semantics.md S5).
     *
     * @param keys the REPLACE USING columns, never empty
     * @param sequenceBy the SEQUENCE BY text: a column, or {@code STRUCT(a, b)}
     * @param keyPositions where each of {@code keys} is written, in the same order
     * @param sequenceByPosition where the SEQUENCE BY expression starts
     */
    record ReplaceUsing(
            List<String> keys,
            String sequenceBy,
            List<SqlPosition> keyPositions,
            SqlPosition sequenceByPosition) {}

    /**
     * The clauses of an AUTO CDC flow; an absent clause is null. Column selections are text: {@code
     * a, b}, {@code *} or {@code * EXCEPT (a, b)}.
     *
     * @param keys KEYS, never empty
     * @param scdType 1 or 2 from STORED AS SCD TYPE
     * @param ignoreNullUpdates {@code true} when IGNORE NULL UPDATES is given
     * @param keyPositions where each of {@code keys} is written, in the same order
     * @param sequenceByPosition where the SEQUENCE BY clause starts; null without one
     */
    record AutoCdc(
            List<String> keys,
            @Nullable String sequenceBy,
            @Nullable String applyAsDeleteWhen,
            @Nullable String applyAsTruncateWhen,
            @Nullable String columns,
            boolean ignoreNullUpdates,
            @Nullable Integer scdType,
            @Nullable String trackHistoryOn,
            List<SqlPosition> keyPositions,
            @Nullable SqlPosition sequenceByPosition) {}

    /** The source of a view or flow. */
    sealed interface Source {
        /** Where the source is named. */
        SqlPosition position();
    }

    /**
     * {@code read_files('path', name => value, ...)}: the path as written and the named arguments
     * (names as written, values without quotes), in order.
     */
    record ReadFiles(SqlPosition position, String path, Map<String, String> arguments)
            implements Source {}

    /**
     * {@code read_kafka(bootstrapServers => ..., subscribe => ... | subscribePattern => ...,
     * startingOffsets => ...)}: the named arguments as written (values without quotes), in order.
     */
    record ReadKafka(SqlPosition position, Map<String, String> arguments) implements Source {}

    /**
     * {@code STREAM(name)}, {@code STREAM name}: a temporary view of the file, else the change feed
     * of the Iceberg table of that name (a streaming table of the file, or any table of the
     * catalog; docs/semantics.md S7).
     */
    record Named(SqlPosition position, String name) implements Source {}

    /**
     * {@code FROM SNAPSHOT source} of an AUTO CDC flow (docs/semantics.md A6): each snapshot of
     * {@code of} is compared with the previous one per key. {@code of} is a {@link ReadFiles} (a
     * folder of snapshot files, one per version; its only argument is {@code format => 'csv' |
     * 'json'}) or a {@link Named} table of the catalog (each of its Iceberg versions is a
     * snapshot).
     *
     * @param position where {@code SNAPSHOT} is written
     */
    record Snapshot(SqlPosition position, Source of) implements Source {}
}
