package dev.changeflow.sinks.iceberg;

import org.apache.flink.annotation.Internal;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;

import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses {@link StreamingTableOptions#partitionBy()} entries into an Iceberg {@link PartitionSpec}.
 */
@Internal
final class PartitionTransforms {
    static final String ACCEPTED =
            "a column name, identity(c), bucket(N, c), truncate(W, c), years(c), months(c), days(c), hours(c)";

    private static final Pattern CALL =
            Pattern.compile(
                    "^\\s*([A-Za-z_]+)\\s*\\(\\s*(?:(\\d+)\\s*,\\s*)?([^,()]+?)\\s*\\)\\s*$");
    private static final Pattern COLUMN = Pattern.compile("^\\s*([^,()\\s]+)\\s*$");

    private PartitionTransforms() {}

    /**
     * One parsed entry: transform name (lower case), its width/bucket count or -1, source column.
     */
    static final class Field {
        final String transform;
        final int argument;
        final String column;

        Field(String transform, int argument, String column) {
            this.transform = transform;
            this.argument = argument;
            this.column = column;
        }
    }

    static Field parse(String entry) {
        if (entry == null) {
            throw new IllegalArgumentException("partitionBy entry must not be null");
        }
        Matcher call = CALL.matcher(entry);
        if (call.matches()) {
            String name = call.group(1).toLowerCase(Locale.ROOT);
            String arg = call.group(2);
            String column = unquote(call.group(3));
            switch (name) {
                case "identity":
                case "year":
                case "years":
                case "month":
                case "months":
                case "day":
                case "days":
                case "hour":
                case "hours":
                    if (arg != null) {
                        throw invalid(entry, name + " takes only a column");
                    }
                    return new Field(name, -1, column);
                case "bucket":
                case "truncate":
                    if (arg == null) {
                        throw invalid(
                                entry,
                                name + " needs a number and a column, e.g. " + name + "(16, c)");
                    }
                    int n = Integer.parseInt(arg);
                    if (n <= 0) {
                        throw invalid(entry, name + "'s number must be > 0");
                    }
                    return new Field(name, n, column);
                default:
                    throw invalid(entry, "unknown transform '" + name + "'");
            }
        }
        Matcher column = COLUMN.matcher(entry);
        if (column.matches()) {
            return new Field("identity", -1, unquote(column.group(1)));
        }
        throw invalid(entry, "not a column or transform");
    }

    static PartitionSpec toSpec(Schema schema, List<String> entries, String table) {
        if (entries.isEmpty()) {
            return PartitionSpec.unpartitioned();
        }
        PartitionSpec.Builder spec = PartitionSpec.builderFor(schema);
        for (String entry : entries) {
            Field f = parse(entry);
            if (schema.findField(f.column) == null) {
                throw new IllegalArgumentException(
                        "partitionBy '"
                                + entry
                                + "' of table "
                                + table
                                + ": column '"
                                + f.column
                                + "' is not a column of the table; columns: "
                                + schema.asStruct().fields().stream()
                                        .map(c -> c.name())
                                        .reduce((a, b) -> a + ", " + b)
                                        .orElse(""));
            }
            try {
                apply(PartitionSpec.builderFor(schema), f)
                        .build(); // attributes errors to the entry
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(
                        "partitionBy '" + entry + "' of table " + table + ": " + e.getMessage(), e);
            }
            apply(spec, f);
        }
        return spec.build();
    }

    private static PartitionSpec.Builder apply(PartitionSpec.Builder spec, Field f) {
        switch (f.transform) {
            case "identity":
                return spec.identity(f.column);
            case "year":
            case "years":
                return spec.year(f.column);
            case "month":
            case "months":
                return spec.month(f.column);
            case "day":
            case "days":
                return spec.day(f.column);
            case "hour":
            case "hours":
                return spec.hour(f.column);
            case "bucket":
                return spec.bucket(f.column, f.argument);
            case "truncate":
                return spec.truncate(f.column, f.argument);
            default:
                throw new IllegalStateException(f.transform);
        }
    }

    private static String unquote(String s) {
        String t = s.trim();
        if (t.length() >= 2
                && ((t.startsWith("`") && t.endsWith("`"))
                        || (t.startsWith("\"") && t.endsWith("\"")))) {
            return t.substring(1, t.length() - 1);
        }
        return t;
    }

    private static IllegalArgumentException invalid(String entry, String why) {
        return new IllegalArgumentException(
                "partitionBy '" + entry + "' is invalid: " + why + "; accepted: " + ACCEPTED);
    }
}
