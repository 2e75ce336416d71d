package dev.changeflow.jobs.config;

import dev.changeflow.jobs.sql.SqlPosition;
import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.operators.options.ResolvedOptions;
import dev.changeflow.sinks.iceberg.CatalogOptions;
import dev.changeflow.sources.kafka.KafkaInput;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

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
 *   - name: branch_totals       # REPLACE WHERE (docs/semantics.md S4): no 'table'
 *     target: gold.branch_totals
 *     replace-where: "bid <= 10"
 *     query: "SELECT bid, SUM(abalance) AS total FROM public.pgbench_accounts GROUP BY bid"
 * </pre>
 *
 * Unknown keys are errors (a typo must not be ignored); every error names the flow and the option.
 * An unknown key of the top level or of a flow is reported at its place, {@code file:line:column:
 * flow 't': unknown option 'sequence-bi' (did you mean 'sequence-by'?)}, with the closest known
 * option by edit distance (else the known options). REPLACE WHERE flows go to {@link
 * IngestConfig#replaceWheres}, the others to {@link IngestConfig#flows}; the places of their {@code
 * replace-where} and {@code query} values are kept for the errors of S4 ({@code file:line:column}).
 */
public final class FlowsFile {
    /** Duplicate keys fail (YAML leaves them to the reader; the last one would silently win). */
    private static final ObjectMapper YAML =
            new ObjectMapper(
                    YAMLFactory.builder()
                            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                            .build());

    /** The flow options whose values' places in the file are kept (errors of S4 point there). */
    private static final Set<String> POSITIONED =
            Set.of(FlowOptions.QUERY.key(), FlowOptions.REPLACE_WHERE.key());

    /** The blocks of the top level, besides the scalar {@link IngestOptions}. */
    private static final Set<String> TOP_BLOCKS = Set.of("catalog", "kafka", "flows");

    /** The block of the {@code kafka:} block, besides the scalar {@link KafkaOptions}. */
    private static final Set<String> KAFKA_BLOCKS = Set.of("properties");

    private FlowsFile() {}

    /**
     * The options a flow of a flows file accepts (the README's options table lists exactly these).
     */
    public static Set<String> flowOptionNames() {
        return FlowOptions.SET.keys();
    }

    /** The options the top level of a flows file accepts. */
    public static Set<String> fileOptionNames() {
        return union(IngestOptions.SET.keys(), TOP_BLOCKS);
    }

    /** Reads and validates a flows file. @throws IllegalArgumentException on a bad option */
    public static IngestConfig read(Path file) throws IOException {
        IngestConfig cfg = parse(Files.readString(file), file.toString());
        if (cfg.name == null) {
            String n = file.getFileName().toString();
            cfg.name = IngestOptions.jobNameOf(n.replaceAll("\\.(ya?ml)$", ""));
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
        KeyPlaces places = keyPlaces(yaml);
        checkKeys(root, fileOptionNames(), where, where, places.root());
        cfg.apply(
                OptionsResolver.resolve(
                        IngestOptions.SET, List.of(layer(root, IngestOptions.SET.keys(), where))));
        if (root.has("catalog")) {
            catalog(root.get("catalog"), cfg, where + ": catalog");
        }
        if (root.has("kafka")) {
            kafka(root.get("kafka"), cfg, where + ": kafka");
        }
        if (cfg.kafka != null && !cfg.includeExistingFiles) {
            throw new IllegalArgumentException(
                    where
                            + ": include-existing-files applies to files; a kafka: input chooses"
                            + " where it starts with starting-offsets (latest skips what is"
                            + " already in the topics)");
        }
        if (cfg.kafka != null && root.has(IngestOptions.FILE_READERS.key())) {
            throw new IllegalArgumentException(
                    where
                            + ": file-readers applies to files; a kafka: input sets its readers"
                            + " with kafka-readers");
        }
        JsonNode flows = root.path("flows");
        if (!flows.isMissingNode()) {
            if (!flows.isArray()) {
                throw new IllegalArgumentException(where + ": 'flows' must be a list of flows");
            }
            List<Map<String, SqlPosition>> positions = valuePositions(yaml, where);
            int i = 0;
            for (JsonNode f : flows) {
                FlowConfig flow =
                        flow(
                                f,
                                where,
                                i < positions.size() ? positions.get(i) : Map.of(),
                                i < places.flows().size() ? places.flows().get(i) : Map.of());
                i++;
                if (flow.isReplaceWhere()) {
                    for (FlowConfig other : cfg.replaceWheres) {
                        if (other.flowName().equalsIgnoreCase(flow.flowName())) {
                            throw new IllegalArgumentException(
                                    where
                                            + ": two REPLACE WHERE flows are named '"
                                            + flow.flowName()
                                            + "' (a flow without 'name' is named after its"
                                            + " target): give one a 'name'");
                        }
                    }
                    cfg.replaceWheres.add(flow);
                } else {
                    cfg.flows.add(flow);
                }
            }
        }
        return cfg;
    }

    /**
     * Where the values of {@link #POSITIONED} options of each entry of {@code flows:} start in the
     * file: line and column of the value's first character (after an opening quote; for a block
     * scalar {@code |} or {@code >}, the first character of its next line). Errors about a REPLACE
     * WHERE predicate or query point there (S4); a position inside a value is exact on its first
     * line (and on later lines of a block scalar up to its indentation).
     */
    private static List<Map<String, SqlPosition>> valuePositions(String yaml, String where)
            throws IOException {
        List<Map<String, SqlPosition>> out = new ArrayList<>();
        String[] lines = yaml.split("\n", -1);
        try (JsonParser p = YAML.getFactory().createParser(yaml)) {
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                if (t != JsonToken.VALUE_STRING) {
                    continue;
                }
                JsonStreamContext entry = p.getParsingContext();
                JsonStreamContext list = entry.getParent();
                JsonStreamContext top = list == null ? null : list.getParent();
                if (!entry.inObject()
                        || !POSITIONED.contains(entry.getCurrentName())
                        || list == null
                        || !list.inArray()
                        || top == null
                        || !top.inObject()
                        || !"flows".equals(top.getCurrentName())
                        || top.getParent() == null
                        || !top.getParent().inRoot()) {
                    continue;
                }
                int index = list.getCurrentIndex();
                while (out.size() <= index) {
                    out.add(new LinkedHashMap<>());
                }
                JsonLocation at = p.getTokenLocation();
                int line = at.getLineNr();
                int column = at.getColumnNr();
                char c =
                        line >= 1
                                        && line <= lines.length
                                        && column >= 1
                                        && column <= lines[line - 1].length()
                                ? lines[line - 1].charAt(column - 1)
                                : ' ';
                if (c == '"' || c == '\'') {
                    column++;
                } else if ((c == '|' || c == '>') && line < lines.length) {
                    String next = lines[line];
                    line++;
                    column = next.length() - next.stripLeading().length() + 1;
                }
                out.get(index).put(entry.getCurrentName(), new SqlPosition(where, line, column));
            }
        }
        return out;
    }

    /**
     * The {@code catalog:} block: Iceberg catalog properties as they are ({@code type}, {@code
     * uri}, {@code warehouse}, {@code io-impl}, {@code s3.endpoint}, ...), each a single value; a
     * value may refer to an environment variable as {@code ${env:NAME}} (resolved when the catalog
     * is loaded, see {@code CatalogSettings}); read by {@link CatalogOptions#resolve}.
     */
    private static void catalog(JsonNode n, IngestConfig cfg, String label) {
        if (!n.isObject()) {
            throw new IllegalArgumentException(
                    label
                            + ": a mapping of Iceberg catalog properties, e.g. {type: rest, uri: 'http://...'}");
        }
        Map<String, Object> properties = new LinkedHashMap<>();
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
            properties.put(e.getKey(), e.getValue().asText());
        }
        cfg.catalog.putAll(
                CatalogOptions.resolve(
                        List.of(OptionLayer.of(OptionSource.DEFINITION, label, properties))));
    }

    /**
     * The {@code kafka:} block: the {@link KafkaOptions} and {@code properties} (a mapping of Kafka
     * consumer properties).
     */
    private static void kafka(JsonNode n, IngestConfig cfg, String label) {
        if (!n.isObject()) {
            throw new IllegalArgumentException(
                    label + ": a mapping with bootstrap-servers and topics or topic-pattern");
        }
        checkKeys(n, union(KafkaOptions.SET.keys(), KAFKA_BLOCKS), label);
        ResolvedOptions r =
                OptionsResolver.resolve(
                        KafkaOptions.SET, List.of(layer(n, KafkaOptions.SET.keys(), label)));
        KafkaInput k = new KafkaInput();
        KafkaOptions.apply(r, k);
        if (n.has("properties")) {
            for (Iterator<Map.Entry<String, JsonNode>> it = n.get("properties").fields();
                    it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                k.properties.put(e.getKey(), e.getValue().asText());
            }
        }
        cfg.untilIdle = r.get(KafkaOptions.UNTIL_IDLE);
        cfg.kafka = k;
    }

    private static FlowConfig flow(
            JsonNode n,
            String where,
            Map<String, SqlPosition> positions,
            Map<String, SqlPosition> keys) {
        if (!n.isObject()) {
            throw new IllegalArgumentException(
                    where
                            + ": each entry of 'flows' is a mapping with 'table:' (or, for a"
                            + " REPLACE WHERE flow, 'target:', 'replace-where:' and 'query:')");
        }
        String id =
                n.has("table")
                        ? n.path("table").asText("?")
                        : n.has("name") ? n.path("name").asText("?") : n.path("target").asText("?");
        String label = where + ": flow '" + id + "'";
        checkKeys(n, flowOptionNames(), where, "flow '" + id + "'", keys);
        FlowConfig f =
                new FlowConfig()
                        .apply(
                                OptionsResolver.resolve(
                                        FlowOptions.SET, List.of(layer(n, null, label))));
        if (f.query != null) {
            f.queryPosition = positions.get(FlowOptions.QUERY.key());
        }
        if (f.replaceWhere != null) {
            f.replaceWherePosition = positions.get(FlowOptions.REPLACE_WHERE.key());
        }
        f.validate();
        return f;
    }

    /**
     * The definition layer of a YAML mapping: scalars as text (null for an empty value), sequences
     * as lists of texts.
     *
     * @param only the keys to take (the others are blocks read elsewhere); null for all
     */
    private static OptionLayer layer(JsonNode n, Set<String> only, String label) {
        Map<String, Object> values = new LinkedHashMap<>();
        Map<String, Object> properties = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (only == null || only.contains(e.getKey())) {
                values.put(e.getKey(), raw(e.getValue()));
            }
        }
        return OptionLayer.of(OptionSource.DEFINITION, label, values);
    }

    /**
     * An option's value as the option parsers take it: text, a list of texts, or — for a list of
     * mappings such as {@code expectations} (S8) — a list of maps of texts.
     */
    private static Object raw(JsonNode v) {
        if (v.isArray()) {
            List<Object> items = new ArrayList<>();
            v.forEach(e -> items.add(e.isObject() ? texts(e) : e.asText()));
            return items;
        }
        if (v.isNull() || v.isMissingNode()) {
            return null;
        }
        return v.isValueNode() ? v.asText() : v.toString();
    }

    private static Map<String, String> texts(JsonNode object) {
        Map<String, String> out = new LinkedHashMap<>();
        object.fields()
                .forEachRemaining(
                        f ->
                                out.put(
                                        f.getKey(),
                                        f.getValue().isNull() ? null : f.getValue().asText()));
        return out;
    }

    /**
     * Where the keys of the top level and of each entry of {@code flows:} are written: line and
     * column of the key's first character.
     */
    private record KeyPlaces(Map<String, SqlPosition> root, List<Map<String, SqlPosition>> flows) {}

    private static KeyPlaces keyPlaces(String yaml) throws IOException {
        Map<String, SqlPosition> root = new LinkedHashMap<>();
        List<Map<String, SqlPosition>> flows = new ArrayList<>();
        try (JsonParser p = YAML.getFactory().createParser(yaml)) {
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                if (t != JsonToken.FIELD_NAME) {
                    continue;
                }
                JsonStreamContext object = p.getParsingContext();
                JsonStreamContext parent = object.getParent();
                JsonLocation at = p.getTokenLocation();
                SqlPosition place = new SqlPosition("", at.getLineNr(), at.getColumnNr());
                if (parent != null && parent.inRoot()) {
                    root.putIfAbsent(object.getCurrentName(), place);
                    continue;
                }
                JsonStreamContext top = parent == null ? null : parent.getParent();
                if (parent != null
                        && parent.inArray()
                        && top != null
                        && top.inObject()
                        && "flows".equals(top.getCurrentName())
                        && top.getParent() != null
                        && top.getParent().inRoot()) {
                    int index = parent.getCurrentIndex();
                    while (flows.size() <= index) {
                        flows.add(new LinkedHashMap<>());
                    }
                    flows.get(index).putIfAbsent(object.getCurrentName(), place);
                }
            }
        }
        return new KeyPlaces(root, flows);
    }

    /**
     * Fails on the first key of {@code n} that is not {@code known}: {@code <file>:<line>:<col>:
     * <what>: unknown option 'k' (did you mean 'key'?)} at the key, with the closest known option
     * (edit distance at most 2, or a third of the key's length) as the hint, else the list of known
     * options.
     *
     * @param what the mapping ({@code flow 't'}), or the file itself for the top level
     * @param places where each key is written (line and column; the file name comes from where)
     */
    private static void checkKeys(
            JsonNode n,
            Set<String> known,
            String where,
            String what,
            Map<String, SqlPosition> places) {
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (known.contains(k)) {
                continue;
            }
            SqlPosition at = places.get(k);
            String near = closest(k, known);
            throw new IllegalArgumentException(
                    where
                            + (at == null ? "" : ":" + at.line() + ":" + at.column())
                            + (what.equals(where) ? "" : ": " + what)
                            + ": unknown option '"
                            + k
                            + "'"
                            + (near != null
                                    ? " (did you mean '" + near + "'?)"
                                    : " (known: " + String.join(", ", new TreeSet<>(known)) + ")"));
        }
    }

    /**
     * The known option closest to {@code key} by edit distance (insertions, deletions,
     * substitutions), when at most 2 or a third of the key's length; the first in alphabetical
     * order on a tie; null when none is that close.
     */
    static String closest(String key, Set<String> known) {
        String best = null;
        int bestDistance = Math.max(2, key.length() / 3) + 1;
        for (String option : new TreeSet<>(known)) {
            int d = editDistance(key, option);
            if (d < bestDistance) {
                best = option;
                bestDistance = d;
            }
        }
        return best;
    }

    private static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
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

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> out = new LinkedHashSet<>(a);
        out.addAll(b);
        return out;
    }
}
