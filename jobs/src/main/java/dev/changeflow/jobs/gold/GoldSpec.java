package dev.changeflow.jobs.gold;

import org.apache.iceberg.catalog.TableIdentifier;

import javax.annotation.Nullable;

import java.io.Serializable;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a Silver→Gold job maintains from the change feed of one Silver table (an SCD1 table or any
 * Iceberg v2/v3 table with identifier fields): a Gold upsert table, a Gold aggregate table, or
 * both.
 *
 * <ul>
 *   <li><b>Upsert</b>: {@code SELECT <columns> FROM silver WHERE <where>} kept current — the
 *       columns are Flink SQL select items over the Silver columns and must keep the Silver
 *       identifier fields under their names (they become the Gold table's identifier fields); a row
 *       that stops matching {@code where} is deleted from Gold. The Gold table gets one more
 *       column, {@code _source_version BIGINT NOT NULL}: the Silver version of the row's last
 *       change.
 *   <li><b>Aggregate</b>: {@code SELECT <group-by>, <aggregates> FROM silver GROUP BY <group-by>},
 *       maintained incrementally from inserts, deletes and update pre/post images, with the
 *       invertible aggregates {@code SUM(expr)}, {@code COUNT(*)} and {@code COUNT(expr)} only. SUM
 *       ignores NULLs; it is NULL for a group without rows and 0 for a group whose values are all
 *       NULL (SQL would give NULL there: the start without state seeds from the Gold row, which
 *       cannot tell "all NULL" from "no value"). Group-by entries are Silver column names; they
 *       become the Gold table's identifier fields (NOT NULL: Silver rows with a NULL group value
 *       are not aggregated and are counted in the metric {@code goldNullGroupRows}). A group whose
 *       last row left stays in Gold with count 0, so every Silver version with a change leaves a
 *       trace in {@code _source_version}. The table has the group-by columns, the aggregates,
 *       {@code _row_count BIGINT} when no aggregate is a {@code COUNT(*)}, and {@code
 *       _source_version BIGINT NOT NULL}: the last Silver version applied to the group.
 * </ul>
 */
public final class GoldSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The column every Gold table carries: the Silver version of the last change it reflects. */
    public static final String SOURCE_VERSION = "_source_version";

    /**
     * The row-count column an aggregate table gets when its aggregates include no {@code COUNT(*)}.
     */
    public static final String ROW_COUNT = "_row_count";

    private final String name;
    // identifiers kept as text: Iceberg's Namespace is not Serializable
    private final String source;
    @Nullable private final Upsert upsert;
    @Nullable private final Aggregate aggregate;

    public GoldSpec(
            String name,
            TableIdentifier source,
            @Nullable Upsert upsert,
            @Nullable Aggregate aggregate) {
        this.name = Objects.requireNonNull(name, "name");
        this.source = Objects.requireNonNull(source, "source").toString();
        if (upsert == null && aggregate == null) {
            throw new GoldException(
                    GoldException.Code.GOLD_DEFINITION_INVALID,
                    "Gold job '"
                            + name
                            + "' maintains nothing: give an upsert table, an aggregate table, or both");
        }
        if (upsert != null && aggregate != null && upsert.target().equals(aggregate.target())) {
            throw new GoldException(
                    GoldException.Code.GOLD_DEFINITION_INVALID,
                    "Gold job '"
                            + name
                            + "': the upsert and the aggregate table are both "
                            + upsert.target());
        }
        for (String target :
                new String[] {
                    upsert == null ? null : upsert.target,
                    aggregate == null ? null : aggregate.target
                }) {
            if (this.source.equals(target)) {
                throw new GoldException(
                        GoldException.Code.GOLD_DEFINITION_INVALID,
                        "Gold job '"
                                + name
                                + "': the Gold table "
                                + target
                                + " is the Silver table itself");
            }
        }
        this.upsert = upsert;
        this.aggregate = aggregate;
    }

    /** The job's name: prefix of operator uids, default checkpoint folder name. */
    public String name() {
        return name;
    }

    /** The Silver table whose change feed is read. */
    public TableIdentifier source() {
        return TableIdentifier.parse(source);
    }

    @Nullable
    public Upsert upsert() {
        return upsert;
    }

    @Nullable
    public Aggregate aggregate() {
        return aggregate;
    }

    /**
     * A Gold upsert table: projection ({@code columns}) and optional filter ({@code where}), Flink
     * SQL.
     */
    public static final class Upsert implements Serializable {
        private static final long serialVersionUID = 1L;
        final String target;
        final List<String> columns;
        @Nullable final String where;

        /**
         * @param columns Flink SQL select items (e.g. {@code aid}, {@code abalance * 100 AS
         *     cents}); empty = all columns
         * @param where Flink SQL predicate, or null for every row
         */
        public Upsert(TableIdentifier target, List<String> columns, @Nullable String where) {
            this.target = Objects.requireNonNull(target, "target").toString();
            this.columns = List.copyOf(columns);
            this.where = where == null || where.isBlank() ? null : where;
        }

        public TableIdentifier target() {
            return TableIdentifier.parse(target);
        }

        public List<String> columns() {
            return columns;
        }

        @Nullable
        public String where() {
            return where;
        }
    }

    /** A Gold aggregate table: GROUP BY Silver columns, invertible aggregates. */
    public static final class Aggregate implements Serializable {
        private static final long serialVersionUID = 1L;
        final String target;
        final List<String> groupBy;
        final List<AggregateColumn> aggregates;

        public Aggregate(
                TableIdentifier target, List<String> groupBy, List<AggregateColumn> aggregates) {
            this.target = Objects.requireNonNull(target, "target").toString();
            this.groupBy = List.copyOf(groupBy);
            this.aggregates = List.copyOf(aggregates);
            if (this.groupBy.isEmpty() || this.aggregates.isEmpty()) {
                throw new GoldException(
                        GoldException.Code.GOLD_DEFINITION_INVALID,
                        "the aggregate table "
                                + target
                                + " needs at least one group-by column and one aggregate");
            }
        }

        public TableIdentifier target() {
            return TableIdentifier.parse(target);
        }

        public List<String> groupBy() {
            return groupBy;
        }

        public List<AggregateColumn> aggregates() {
            return aggregates;
        }
    }

    /** The invertible aggregates an incremental Gold aggregate supports. */
    public enum AggregateKind {
        /**
         * {@code SUM(expr)}: integers → BIGINT, DECIMAL(p, s) → DECIMAL(38, s), FLOAT/DOUBLE →
         * DOUBLE.
         */
        SUM,
        /**
         * {@code COUNT(*)} (argument null) or {@code COUNT(expr)} (non-NULL values): BIGINT NOT
         * NULL.
         */
        COUNT
    }

    /** One aggregate column: {@code <name> = SUM(<expr>) | COUNT(*) | COUNT(<expr>)}. */
    public static final class AggregateColumn implements Serializable {
        private static final long serialVersionUID = 1L;
        private static final Pattern FORM =
                Pattern.compile(
                        "\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*=\\s*([A-Za-z]+)\\s*\\((.*)\\)\\s*",
                        Pattern.DOTALL);

        final String name;
        final AggregateKind kind;
        @Nullable final String argument;

        public AggregateColumn(String name, AggregateKind kind, @Nullable String argument) {
            this.name = Objects.requireNonNull(name, "name");
            this.kind = Objects.requireNonNull(kind, "kind");
            this.argument = argument;
            if (kind == AggregateKind.SUM && argument == null) {
                throw new GoldException(
                        GoldException.Code.GOLD_DEFINITION_INVALID,
                        "SUM needs an argument (" + name + ")");
            }
        }

        /**
         * Parses {@code name=SUM(expr)}, {@code name=COUNT(*)} or {@code name=COUNT(expr)}
         * (function names case-insensitive).
         *
         * @throws GoldException {@code GOLD_DEFINITION_INVALID} for any other form, naming the
         *     supported ones (MIN, MAX, AVG are not invertible: use SUM and COUNT, AVG = SUM /
         *     COUNT)
         */
        public static AggregateColumn parse(String text) {
            Matcher m = FORM.matcher(text);
            if (!m.matches()) {
                throw new GoldException(
                        GoldException.Code.GOLD_DEFINITION_INVALID,
                        "aggregate '"
                                + text
                                + "' is not of the form name=SUM(expr), name=COUNT(*) or name=COUNT(expr)");
            }
            String fn = m.group(2).toUpperCase(Locale.ROOT);
            if (!Set.of(
                            "SUM",
                            "COUNT",
                            "MIN",
                            "MAX",
                            "AVG",
                            "STDDEV",
                            "VARIANCE",
                            "FIRST_VALUE",
                            "LAST_VALUE",
                            "LISTAGG",
                            "COLLECT")
                    .contains(fn)) {
                throw new GoldException(
                        GoldException.Code.GOLD_DEFINITION_INVALID,
                        "aggregate '"
                                + text
                                + "': unknown aggregate function "
                                + m.group(2)
                                + "; use SUM(expr), COUNT(*) or COUNT(expr)");
            }
            String arg = m.group(3).trim();
            switch (fn) {
                case "SUM":
                    if (arg.isEmpty() || arg.equals("*")) {
                        throw new GoldException(
                                GoldException.Code.GOLD_DEFINITION_INVALID,
                                "aggregate '" + text + "': SUM needs a column or expression");
                    }
                    return new AggregateColumn(m.group(1), AggregateKind.SUM, arg);
                case "COUNT":
                    return new AggregateColumn(
                            m.group(1),
                            AggregateKind.COUNT,
                            arg.equals("*") || arg.isEmpty() ? null : arg);
                default:
                    throw new GoldException(
                            GoldException.Code.GOLD_DEFINITION_INVALID,
                            "aggregate '"
                                    + text
                                    + "': "
                                    + fn
                                    + " cannot be maintained incrementally from deletes and updates;"
                                    + " use SUM(expr), COUNT(*) or COUNT(expr) (an average is SUM / COUNT at read time)");
            }
        }

        public String name() {
            return name;
        }

        public AggregateKind kind() {
            return kind;
        }

        @Nullable
        public String argument() {
            return argument;
        }

        @Override
        public String toString() {
            return name + "=" + kind + "(" + (argument == null ? "*" : argument) + ")";
        }
    }
}
