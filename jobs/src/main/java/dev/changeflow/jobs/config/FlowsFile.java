package dev.changeflow.jobs.config;

import dev.changeflow.operators.ColumnSelection;
import dev.changeflow.operators.ScdType;
import dev.changeflow.sources.kafka.KafkaInput;
import dev.changeflow.sources.kafka.StartingOffsets;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a flows file (YAML; keys are the option names) into an {@link IngestConfig}:
 *
 * <pre>
 * name: pgbench                 # checkpoint id; default: the file name without extension
 * format: debezium-json         # or json
 * namespace: public             # default: the Debezium schema
 * catalog: {type: hadoop, warehouse: warehouse}
 * checkpoint-interval: 2s
 * flows:
 *   - table: pgbench_accounts
 *     keys: [aid]
 *     sequence-by: source.lsn   # or [a, b] / "STRUCT(a, b)"
 *     scd-type: 1
 *   - table: pgbench_history
 *     append-only: true
 *     schema: "tid INT, bid INT, aid INT, delta INT, mtime TIMESTAMP(6), filler STRING"
 * </pre>
 *
 * Unknown keys are errors (a typo must not be ignored); every error names the flow and the option.
 */
public final class FlowsFile {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Set<String> TOP_KEYS =
            Set.of(
                    "name",
                    "format",
                    "namespace",
                    "catalog",
                    "checkpoint-interval",
                    "parallelism",
                    "max-record-bytes",
                    "kafka",
                    "flows");
    private static final Set<String> KAFKA_KEYS =
            Set.of(
                    "bootstrap-servers",
                    "topics",
                    "topic-pattern",
                    "group-id",
                    "starting-offsets",
                    "properties",
                    "until-idle");
    private static final Set<String> FLOW_KEYS =
            Set.of(
                    "table",
                    "target",
                    "name",
                    "keys",
                    "sequence-by",
                    "scd-type",
                    "append-only",
                    "columns",
                    "ignore-null-updates",
                    "track-history-on",
                    "schema",
                    "partitioned-by",
                    "apply-as-delete-when",
                    "apply-as-truncate-when",
                    "truncate",
                    "tombstone-gc-threshold",
                    "on-invalid-record",
                    "on-schema-change",
                    "format",
                    "format-version",
                    "apply-buffer-keys",
                    "unavailable-value-placeholder");

    private FlowsFile() {}

    /**
     * The options a flow of a flows file accepts (the README's options table lists exactly these).
     */
    public static Set<String> flowOptionNames() {
        return FLOW_KEYS;
    }

    /** The options the top level of a flows file accepts. */
    public static Set<String> fileOptionNames() {
        return TOP_KEYS;
    }

    /** Reads and validates a flows file. @throws IllegalArgumentException on a bad option */
    public static IngestConfig read(Path file) throws IOException {
        IngestConfig cfg = parse(Files.readString(file), file.toString());
        if (cfg.name == null) {
            String n = file.getFileName().toString();
            cfg.name = n.replaceAll("\\.(ya?ml)$", "");
        }
        return cfg;
    }

    /** Parses flows-file text; {@code where} names it in errors. */
    public static IngestConfig parse(String yaml, String where) throws IOException {
        JsonNode root;
        try {
            root = YAML.readTree(yaml);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            throw new IllegalArgumentException(
                    where
                            + (at == null ? "" : ":" + at.getLineNr() + ":" + at.getColumnNr())
                            + ": not valid YAML: "
                            + e.getOriginalMessage().split("\n")[0]);
        }
        IngestConfig cfg = new IngestConfig();
        if (root == null || root.isMissingNode() || root.isNull()) {
            return cfg;
        }
        if (!root.isObject()) {
            throw new IllegalArgumentException(
                    where + ": a flows file is a YAML mapping with 'flows:'");
        }
        checkKeys(root, TOP_KEYS, where);
        if (root.has("name")) {
            cfg.name = root.get("name").asText();
        }
        if (root.has("format")) {
            cfg.format = format(root.get("format").asText(), where);
        }
        if (root.has("namespace")) {
            cfg.namespace = root.get("namespace").asText();
        }
        if (root.has("catalog")) {
            catalog(root.get("catalog"), cfg, where + ": catalog");
        }
        if (root.has("checkpoint-interval")) {
            cfg.checkpointInterval =
                    duration(
                            root.get("checkpoint-interval").asText(),
                            where + ": checkpoint-interval");
        }
        if (root.has("parallelism")) {
            cfg.parallelism = root.get("parallelism").asInt();
        }
        if (root.has("max-record-bytes")) {
            cfg.maxRecordBytes = root.get("max-record-bytes").asInt();
        }
        if (root.has("kafka")) {
            kafka(root.get("kafka"), cfg, where + ": kafka");
        }
        JsonNode flows = root.path("flows");
        if (!flows.isMissingNode()) {
            if (!flows.isArray()) {
                throw new IllegalArgumentException(where + ": 'flows' must be a list of flows");
            }
            for (JsonNode f : flows) {
                cfg.flows.add(flow(f, where));
            }
        }
        return cfg;
    }

    /**
     * The {@code catalog:} block: Iceberg catalog properties as they are ({@code type}, {@code
     * uri}, {@code warehouse}, {@code io-impl}, {@code s3.endpoint}, ...), each a single value; a
     * value may refer to an environment variable as {@code ${env:NAME}} (resolved when the catalog
     * is loaded, see {@code CatalogSettings}).
     */
    private static void catalog(JsonNode n, IngestConfig cfg, String label) {
        if (!n.isObject()) {
            throw new IllegalArgumentException(
                    label
                            + ": a mapping of Iceberg catalog properties, e.g. {type: rest, uri: 'http://...'}");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isValueNode() || e.getValue().isNull()) {
                throw new IllegalArgumentException(
                        label
                                + ": property '"
                                + e.getKey()
                                + "' must be a single value (Iceberg catalog properties are flat,"
                                + " e.g. 'header.X-Iceberg-Access-Delegation: vended-credentials')");
            }
            cfg.catalog.put(e.getKey(), e.getValue().asText());
        }
    }

    /**
     * The {@code kafka:} block: {@code bootstrap-servers}, {@code topics} (list or comma-separated)
     * or {@code topic-pattern}, {@code group-id}, {@code starting-offsets}, {@code properties} (a
     * mapping of Kafka consumer properties), {@code until-idle} (a duration).
     */
    private static void kafka(JsonNode n, IngestConfig cfg, String label) {
        if (!n.isObject()) {
            throw new IllegalArgumentException(
                    label + ": a mapping with bootstrap-servers and topics or topic-pattern");
        }
        checkKeys(n, KAFKA_KEYS, label);
        KafkaInput k = new KafkaInput();
        k.bootstrapServers = n.path("bootstrap-servers").asText(null);
        if (n.has("topics")) {
            k.topics =
                    n.get("topics").isArray()
                            ? list(n.get("topics"))
                            : splitList(n.get("topics").asText());
        }
        k.topicPattern = n.path("topic-pattern").asText(null);
        k.groupId = n.path("group-id").asText(null);
        if (n.has("starting-offsets")) {
            try {
                k.startingOffsets = StartingOffsets.parse(n.get("starting-offsets").asText());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(label + ": " + e.getMessage());
            }
        }
        if (n.has("properties")) {
            for (Iterator<Map.Entry<String, JsonNode>> it = n.get("properties").fields();
                    it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                k.properties.put(e.getKey(), e.getValue().asText());
            }
        }
        if (n.has("until-idle")) {
            cfg.untilIdle = duration(n.get("until-idle").asText(), label + ": until-idle");
        }
        cfg.kafka = k;
    }

    /** {@code "a, b"} → [a, b] (blank items dropped). */
    public static List<String> splitList(String text) {
        List<String> out = new ArrayList<>();
        for (String s : text.split(",")) {
            if (!s.isBlank()) {
                out.add(s.trim());
            }
        }
        return out;
    }

    private static FlowConfig flow(JsonNode n, String where) {
        if (!n.isObject()) {
            throw new IllegalArgumentException(
                    where + ": each entry of 'flows' is a mapping with 'table:'");
        }
        String label = where + ": flow '" + n.path("table").asText("?") + "'";
        checkKeys(n, FLOW_KEYS, label);
        FlowConfig f = new FlowConfig();
        f.table = n.path("table").asText(null);
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            set(f, e.getKey(), e.getValue(), label);
        }
        f.validate();
        return f;
    }

    /**
     * Sets one option of a flow from YAML or from a command-line {@code option=value} override.
     *
     * @throws IllegalArgumentException for an unknown option or a bad value
     */
    public static void set(FlowConfig f, String key, JsonNode v, String label) {
        String text = v.isValueNode() ? v.asText() : null;
        switch (key) {
            case "table":
                f.table = text;
                break;
            case "target":
                f.target = text;
                break;
            case "name":
                f.name = text;
                break;
            case "keys":
                f.keys = list(v);
                break;
            case "sequence-by":
                f.sequenceBy = sequence(v);
                break;
            case "scd-type":
                try {
                    f.scdType = ScdType.parse(v.asText());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(label + ": " + e.getMessage());
                }
                break;
            case "append-only":
                f.appendOnly = bool(v, label + ": append-only");
                break;
            case "columns":
                f.columns = selection(v, label + ": columns");
                break;
            case "ignore-null-updates":
                if (v.isBoolean()
                        || "true".equalsIgnoreCase(text)
                        || "false".equalsIgnoreCase(text)) {
                    f.ignoreNullUpdates =
                            v.asBoolean() || "true".equalsIgnoreCase(text)
                                    ? ColumnSelection.all()
                                    : null;
                } else {
                    f.ignoreNullUpdates = selection(v, label + ": ignore-null-updates");
                }
                break;
            case "track-history-on":
                f.trackHistoryOn = selection(v, label + ": track-history-on");
                break;
            case "schema":
                f.schema = text;
                break;
            case "partitioned-by":
                f.partitionedBy = list(v);
                break;
            case "apply-as-delete-when":
                f.applyAsDeleteWhen = text;
                break;
            case "apply-as-truncate-when":
                f.applyAsTruncateWhen = text;
                break;
            case "truncate":
                f.truncate = bool(v, label + ": truncate");
                break;
            case "tombstone-gc-threshold":
                f.tombstoneGcThreshold = duration(text, label + ": tombstone-gc-threshold");
                break;
            case "on-invalid-record":
                f.onInvalidRecord = text;
                break;
            case "on-schema-change":
                f.onSchemaChange = text;
                break;
            case "format":
                f.format = format(text, label);
                break;
            case "format-version":
                f.formatVersion = v.asInt();
                f.formatVersionSet = true;
                break;
            case "apply-buffer-keys":
                f.applyBufferKeys = applyBufferKeys(v, label);
                f.applyBufferKeysSet = true;
                break;
            case "unavailable-value-placeholder":
                f.unavailablePlaceholder = text;
                break;
            default:
                throw new IllegalArgumentException(
                        label
                                + ": unknown option '"
                                + key
                                + "' (known: "
                                + String.join(", ", new TreeSet<>(FLOW_KEYS))
                                + ")");
        }
    }

    private static void checkKeys(JsonNode n, Set<String> known, String label) {
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!known.contains(k)) {
                throw new IllegalArgumentException(
                        label
                                + ": unknown option '"
                                + k
                                + "' (known: "
                                + String.join(", ", new TreeSet<>(known))
                                + ")");
            }
        }
    }

    /** Checks a record format name: {@code json} or {@code debezium-json}. */
    public static String format(String s, String label) {
        String f = s.toLowerCase(Locale.ROOT);
        if (!f.equals("json") && !f.equals("debezium-json")) {
            throw new IllegalArgumentException(
                    label + ": 'format' must be json or debezium-json, got '" + s + "'");
        }
        return f;
    }

    private static boolean bool(JsonNode v, String label) {
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        String t = v.asText();
        if (t.equalsIgnoreCase("true") || t.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(t);
        }
        throw new IllegalArgumentException(label + " must be true or false, got '" + t + "'");
    }

    /** A YAML list or a comma-separated string. */
    public static List<String> list(JsonNode v) {
        List<String> out = new ArrayList<>();
        if (v.isArray()) {
            v.forEach(e -> out.add(e.asText().trim()));
        } else if (!v.isNull() && !v.asText().isBlank()) {
            // split at top-level commas: "bid, bucket(16, aid)" is two items
            String text = v.asText();
            int depth = 0;
            int from = 0;
            for (int i = 0; i <= text.length(); i++) {
                char c = i < text.length() ? text.charAt(i) : ',';
                if (c == '(') {
                    depth++;
                } else if (c == ')') {
                    depth--;
                } else if (c == ',' && depth <= 0) {
                    String item = text.substring(from, i).trim();
                    if (!item.isEmpty()) {
                        out.add(item);
                    }
                    from = i + 1;
                }
            }
        }
        return out;
    }

    private static final Pattern STRUCT = Pattern.compile("(?i)^\\s*STRUCT\\s*\\((.*)\\)\\s*$");
    private static final Pattern EXCEPT =
            Pattern.compile("(?i)^\\s*\\*\\s*EXCEPT\\s*\\((.*)\\)\\s*$");

    /** {@code a}, {@code [a, b]} or {@code "STRUCT(a, b)"}. */
    public static List<String> sequence(JsonNode v) {
        if (v.isValueNode()) {
            Matcher m = STRUCT.matcher(v.asText());
            if (m.matches()) {
                return list(new TextNode(m.group(1)));
            }
        }
        return list(v);
    }

    /** {@code [a, b]}, {@code "a, b"}, {@code "*"} or {@code "* EXCEPT (a, b)"}. */
    public static ColumnSelection selection(JsonNode v, String label) {
        if (v.isValueNode()) {
            String t = v.asText().trim();
            if (t.equals("*")) {
                return ColumnSelection.all();
            }
            Matcher m = EXCEPT.matcher(t);
            if (m.matches()) {
                return ColumnSelection.except(list(new TextNode(m.group(1))));
            }
            if (t.isEmpty()) {
                throw new IllegalArgumentException(
                        label + " must list columns, '*' or '* EXCEPT (...)'");
            }
        }
        return ColumnSelection.include(list(v));
    }

    /**
     * {@code 2s}, {@code 500ms}, {@code 10 min}, {@code 2d}, {@code 48h} or ISO-8601 {@code PT2S}.
     */
    /**
     * A whole number of keys from 0 to {@link Integer#MAX_VALUE}, as a YAML number or text ({@code
     * --set}).
     */
    private static int applyBufferKeys(JsonNode v, String label) {
        String t = v == null || v.isNull() ? "" : v.asText().trim();
        if (!t.matches("[0-9]{1,10}") || Long.parseLong(t) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    label
                            + ": apply-buffer-keys must be a whole number of keys per subtask from 0 (no"
                            + " buffering) to "
                            + Integer.MAX_VALUE
                            + ", got "
                            + (t.isEmpty() ? "an empty value" : "'" + t + "'"));
        }
        return Integer.parseInt(t);
    }

    public static Duration duration(String text, String label) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        Matcher m = Pattern.compile("^(\\d+)\\s*(ms|s|sec|m|min|h|d|day|days)?$").matcher(t);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            String u = m.group(2) == null ? "s" : m.group(2);
            switch (u) {
                case "ms":
                    return Duration.ofMillis(n);
                case "s":
                case "sec":
                    return Duration.ofSeconds(n);
                case "m":
                case "min":
                    return Duration.ofMinutes(n);
                case "h":
                    return Duration.ofHours(n);
                default:
                    return Duration.ofDays(n);
            }
        }
        try {
            return Duration.parse(text.trim().toUpperCase(Locale.ROOT));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    label + ": not a duration: '" + text + "' (e.g. 2s, 500ms, 10min, 2d)");
        }
    }
}
