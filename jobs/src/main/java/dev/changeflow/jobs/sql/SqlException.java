package dev.changeflow.jobs.sql;

import org.apache.flink.annotation.PublicEvolving;

/**
 * An error in a pipeline file ({@code bin/changeflow run FILE.sql}), with a stable code and the
 * place it was found. The message reads {@code file:line:column: CODE: what is wrong}, e.g. {@code
 * pipeline.sql:4:7: SYNTAX_ERROR: expected '(' after KEYS, found 'aid'}. Nothing is read or written
 * when a file fails (docs/semantics.md S1).
 *
 * <p>Codes:
 *
 * <ul>
 *   <li>{@code SYNTAX_ERROR}: the text is not a statement of the grammar; the message says what was
 *       expected and what was found, and, when the word found is one edit away from a keyword that
 *       fits there, {@code (did you mean STREAMING?)}.
 *   <li>{@code UNSUPPORTED_STATEMENT}: a statement, clause or argument of the vendor's dialect that
 *       changeflow recognises but does not implement yet (SCHEDULE, REPLACE WHERE, GRANT, a query
 *       other than {@code SELECT * FROM STREAM source}, ...); it is named, never ignored.
 *   <li>{@code UNKNOWN_SOURCE}: {@code STREAM(name)} names no temporary view of the file and no
 *       table of the catalog (found when the run is planned, S7).
 *   <li>{@code UNKNOWN_TABLE}: a flow writes a table that no {@code CREATE STREAMING TABLE}
 *       declares.
 *   <li>{@code DUPLICATE_TABLE}, {@code DUPLICATE_VIEW}: a name declared twice.
 *   <li>{@code DUPLICATE_FLOW}: a second flow into a table, or two flows of one name.
 *   <li>{@code DUPLICATE_CLAUSE}: a clause given twice in one statement.
 *   <li>{@code DUPLICATE_COLUMN}: a column named twice in one column list of a flow (KEYS, REPLACE
 *       USING, COLUMNS, TRACK HISTORY ON, {@code * EXCEPT (...)}, SEQUENCE BY {@code STRUCT(...)}),
 *       at the second mention; found when the file is parsed, so {@code --dry-run} reports it.
 *   <li>{@code TABLE_WITHOUT_FLOW}: a streaming table that no flow writes.
 *   <li>{@code CONFLICTING_FORMATS}: {@code read_files} calls with different {@code format}s (one
 *       job reads every file with one decoder).
 *   <li>{@code INVALID_OPTION}: an unknown {@code SET} key or {@code changeflow.} table property,
 *       or a value its option refuses.
 *   <li>{@code INVALID_FLOW}: a flow whose options do not go together (e.g. no KEYS).
 *   <li>{@code SOURCE_NOT_FOUND}: a {@code read_files} path that does not exist when the pipeline
 *       runs, or {@code read_kafka} bootstrap servers of which no broker answers within 20 s (the
 *       message names the servers, the topics, the consumer group and the time waited).
 *   <li>{@code INVALID_SCHEDULE}: a {@code SCHEDULE} out of range (EVERY 1–72 hours, 1–31 days, 1–8
 *       weeks), a Quartz expression or an EVERY period with no Kubernetes cron expression, an
 *       unknown time zone, or {@code ALTER STREAMING TABLE} adding a schedule a table already has
 *       or changing or dropping one it has not (docs/semantics.md S3); a streaming table without
 *       SCHEDULE that the continuous job of {@code deploy --print FILE.sql} / {@code run --cluster}
 *       cannot run (its flow reads {@code read_files} or {@code STREAM(table)}, or is a bounded
 *       REPLACE WHERE or FROM SNAPSHOT refresh), at its source; {@code run --cluster} of a file
 *       whose tables all have one.
 *   <li>{@code RESET_NOT_ALLOWED}: a full refresh of a table whose {@code TBLPROPERTIES} set {@code
 *       'pipelines.reset.allowed' = 'false'} (S1).
 *   <li>{@code UNKNOWN_COLUMN}: a KEYS or SEQUENCE BY column the flow's records do not have (found
 *       when the run is planned; the position is the column or the clause). In {@code
 *       bin/changeflow sql}, a column no table of the statement has (Flink's message, at the
 *       column).
 *   <li>{@code UNKNOWN_FUNCTION}: in {@code bin/changeflow sql}, a function Flink does not know by
 *       that name and those arguments (Flink's message, at the call).
 *   <li>{@code INVALID_QUERY}: a Gold file's INSERT Flink cannot plan; in {@code bin/changeflow
 *       sql}, any other statement Flink parses but cannot validate (Flink's message, at the place
 *       it names).
 *   <li>{@code UNKNOWN_TYPE}: a declared column whose type is no Flink SQL type ({@code INTEGR}).
 *   <li>{@code INVALID_REFRESH}: a {@code REFRESH STREAMING TABLE} that cannot run on its own (a
 *       {@code read_files} path of its table also feeds a table it leaves out) (S1).
 *   <li>{@code CONFLICTING_SOURCES}: one job would read files and the change feed of a table (S7),
 *       or {@code read_files} calls of one job disagree on {@code includeExistingFiles} (S2);
 *       refresh those tables separately.
 *   <li>{@code NO_INSERT}: a Gold file ({@code bin/changeflow gold FILE.sql}) without an {@code
 *       INSERT INTO} statement: its INSERTs are its job.
 *   <li>{@code UPDATES_WITHOUT_PRIMARY_KEY}: a Gold file's {@code INSERT INTO} whose query is an
 *       update stream (an aggregate, a join or a ranking over a changelog) into a table without
 *       {@code PRIMARY KEY}: Iceberg would append its retractions as rows (docs/semantics.md G2).
 *   <li>{@code DUPLICATE_EXPECTATION}: two {@code CONSTRAINT}s of one table share a name (S8).
 *   <li>{@code INVALID_EXPECTATION}: an {@code EXPECT (...)} expression that is not a Flink SQL
 *       boolean expression over the flow's source columns (found when the run is planned; the
 *       position is the CONSTRAINT). One naming a column the records do not have is {@code
 *       UNKNOWN_COLUMN} at the CONSTRAINT (S8).
 *   <li>{@code TABLE_NOT_FOUND}: {@code DROP TABLE t} without {@code IF EXISTS} of a table the
 *       catalog does not have, at the name (S9); in {@code bin/changeflow sql}, any statement
 *       naming a table its database does not have, or a table named without database while the
 *       session's current database does not exist (the message then says what the warehouse has).
 *   <li>{@code INVALID_RETENTION}: {@code VACUUM t RETAIN n HOURS} of {@code bin/changeflow sql}
 *       with n below 1 or above 876,000 (docs/semantics.md M2), at the number.
 *   <li>{@code DROP_SHARES_STATE}: {@code DROP TABLE t} where a job of the file that writes {@code
 *       t} also writes a table that exists and is not dropped: their saved state cannot be split
 *       (S9).
 *   <li>{@code COLUMN_LIST_MISMATCH}: {@code CREATE STREAMING TABLE t (columns) AS SELECT ...}
 *       whose query's columns are not the declared ones by name, or of a type Flink cannot cast to
 *       the declared one; the message names each such column, declared and selected (found when the
 *       run is planned, {@code --dry-run} too, before any job starts; S1).
 *   <li>{@code UNKNOWN_DATABASE}: a statement of {@code bin/changeflow sql} names a database
 *       (namespace) the catalog does not have, named in the message (at the place Flink names, else
 *       the statement's start).
 * </ul>
 *
 * <p>Gold files ({@code bin/changeflow gold FILE.sql}) report {@code SYNTAX_ERROR}, {@code
 * UNSUPPORTED_STATEMENT}, {@code UNKNOWN_TABLE} (a table the file reads or writes that the catalog
 * does not have, named), {@code NO_INSERT} and {@code UPDATES_WITHOUT_PRIMARY_KEY}.
 */
@PublicEvolving
public final class SqlException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /** The stable error codes (printed after the position). */
    public enum Code {
        SYNTAX_ERROR,
        UNSUPPORTED_STATEMENT,
        UNKNOWN_SOURCE,
        UNKNOWN_TABLE,
        DUPLICATE_TABLE,
        DUPLICATE_VIEW,
        DUPLICATE_FLOW,
        DUPLICATE_CLAUSE,
        TABLE_WITHOUT_FLOW,
        CONFLICTING_FORMATS,
        INVALID_OPTION,
        INVALID_FLOW,
        SOURCE_NOT_FOUND,
        INVALID_SCHEDULE,
        RESET_NOT_ALLOWED,
        UNKNOWN_COLUMN,
        UNKNOWN_TYPE,
        INVALID_REFRESH,
        CONFLICTING_SOURCES,
        NO_INSERT,
        UPDATES_WITHOUT_PRIMARY_KEY,
        DUPLICATE_EXPECTATION,
        INVALID_EXPECTATION,
        /**
         * DROP TABLE without IF EXISTS of a table the catalog does not have (S9); a statement of
         * {@code bin/changeflow sql} naming a table the catalog does not have.
         */
        TABLE_NOT_FOUND,
        /**
         * DROP TABLE of a table whose flow shares a job's saved state with a table that stays (S9).
         */
        DROP_SHARES_STATE,
        /**
         * An INSERT of a Gold file that Flink cannot plan (G2), found before any Gold table is
         * emptied; a statement of {@code bin/changeflow sql} that Flink parses but cannot validate
         * (a type mismatch, an INSERT whose columns do not match its table's), with Flink's
         * message.
         */
        INVALID_QUERY,
        /**
         * A statement of {@code bin/changeflow sql} calling a function Flink does not know by that
         * name and those arguments, with Flink's message (at the call).
         */
        UNKNOWN_FUNCTION,
        /**
         * A column named twice in one column list of a flow (KEYS, REPLACE USING, COLUMNS, TRACK
         * HISTORY ON, EXCEPT, SEQUENCE BY STRUCT(...)), at the second mention.
         */
        DUPLICATE_COLUMN,
        /**
         * {@code VACUUM t RETAIN n HOURS} with n below 1 or above 876,000 hours (M2): a younger
         * file may be a running job's uncommitted output.
         */
        INVALID_RETENTION,
        /**
         * A REPLACE WHERE predicate calling a function that is not deterministic (S4), at the call.
         */
        NON_DETERMINISTIC_PREDICATE,
        /**
         * A REPLACE WHERE refresh whose target changed between its read and its commit (S4);
         * nothing was committed.
         */
        REPLACE_CONFLICT,
        /**
         * A statement of {@code bin/changeflow sql} names a database the catalog does not have
         * ({@code SHOW TABLES FROM db}, {@code USE db}, {@code SELECT ... FROM db.t}, {@code DROP
         * DATABASE db}); the message names it.
         */
        UNKNOWN_DATABASE,
        /**
         * A streaming table's declared columns that its AS SELECT query's columns do not match by
         * name or castable type (S1); the message names each column, declared and selected.
         */
        COLUMN_LIST_MISMATCH
    }

    private final Code code;
    private final SqlPosition position;
    private final String detail;

    /**
     * @param code the error code
     * @param position where the offending statement, clause or token starts
     * @param detail what is wrong and, where there is one, the fix
     */
    public SqlException(Code code, SqlPosition position, String detail) {
        super(position + ": " + code + ": " + withoutCode(detail));
        this.code = code;
        this.position = position;
        this.detail = withoutCode(detail);
    }

    /** A leading error code of another coded exception: upper case with an underscore. */
    private static final java.util.regex.Pattern LEADING_CODE =
            java.util.regex.Pattern.compile("^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+: ");

    /**
     * {@code detail} without the error code another coded exception's message starts with ({@code
     * AutoCdcException}, {@code CdfException}, {@code GoldException}: {@code
     * SNAPSHOT_FOLDER_NOT_FOUND: ...}), so that a message carries one code, this exception's: a
     * wrapped error is reported as {@code p.sql:10:31: SOURCE_NOT_FOUND: flow 'cities': ...}, not
     * {@code SOURCE_NOT_FOUND: SNAPSHOT_FOLDER_NOT_FOUND: ...}. Anything else is kept as it is.
     *
     * @param detail a message (null gives "null")
     */
    public static String withoutCode(@javax.annotation.Nullable String detail) {
        String d = String.valueOf(detail);
        return LEADING_CODE.matcher(d).replaceFirst("");
    }

    /** As {@link #SqlException(Code, SqlPosition, String)}, caused by {@code cause}. */
    public SqlException(Code code, SqlPosition position, String detail, Throwable cause) {
        this(code, position, detail);
        initCause(cause);
    }

    /** The error code. */
    public Code code() {
        return code;
    }

    /** Where the error was found. */
    public SqlPosition position() {
        return position;
    }

    /** The message without position and code (and without a wrapped error's code). */
    public String detail() {
        return detail;
    }

    /**
     * A message of Flink's SQL parser or planner, shortened for a user: the list of tokens the
     * parser expected ("Was expecting one of: ..." — often a hundred lines) is cut, and when the
     * parser stopped at a word ({@code Encountered "day"}), a hint says it may be one of Flink
     * SQL's reserved words and how to quote it.
     *
     * @param message Flink's message (null gives "null")
     * @return the message for a {@link SqlException} detail
     */
    public static String flinkMessage(@javax.annotation.Nullable String message) {
        String msg = String.valueOf(message);
        int cut = msg.indexOf("Was expecting");
        if (cut > 0) {
            msg = msg.substring(0, cut).strip();
        }
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("Encountered \"([A-Za-z_]+)\"").matcher(msg);
        if (m.find()) {
            msg +=
                    " ('"
                            + m.group(1)
                            + "' may be a reserved word of Flink SQL: quote the name with"
                            + " backticks, `"
                            + m.group(1)
                            + "`, or rename the column)";
        }
        return msg;
    }
}
