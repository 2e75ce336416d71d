package dev.changeflow.sources.changes;

import org.apache.flink.annotation.Internal;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;

/**
 * Which flow a record belongs to (semantics.md A5 "Types, routing and table names"): the one rule
 * used by {@link ChangeRecordDecoder} and by {@link SchemaSampler}.
 *
 * <p>A record belongs to the flow one of whose source names equals, in this order of precedence:
 *
 * <ol>
 *   <li>its topic (the Kafka topic or the capture line's {@code topic});
 *   <li>its Debezium {@code source.schema + "." + source.table} (names with exactly one dot);
 *   <li>its {@code source.table};
 *   <li>the last dot-separated segment of its topic.
 * </ol>
 *
 * Otherwise it belongs to the catch-all flow (the one flow with no source names), if there is one;
 * otherwise, when it names neither topic nor table and there is exactly one flow, to that flow;
 * otherwise to none ({@code UNKNOWN_TOPIC}). A decoder with a single catch-all flow routes every
 * record to it without looking.
 *
 * <p>Built once with {@link #builder()}; {@link #route} allocates nothing.
 */
@Internal
final class FlowRouter {
    /** {@link #route}'s answer when no flow claims the record. */
    static final int NONE = -1;

    private final int size;
    private final HashMap<String, Integer> byName;
    private final HashMap<String, HashMap<String, Integer>> bySchemaTable;
    private final int catchAll;
    private final List<String> names;

    private FlowRouter(Builder b) {
        this.size = b.size;
        this.byName = b.byName;
        this.bySchemaTable = b.bySchemaTable;
        this.catchAll = b.catchAll;
        this.names = Collections.unmodifiableList(b.names);
    }

    static Builder builder() {
        return new Builder();
    }

    /**
     * The index of the flow the record belongs to, in the order the flows were added, or {@link
     * #NONE}.
     *
     * @param topic the record's topic, or null
     * @param schema its Debezium {@code source.schema}, or null
     * @param table its Debezium {@code source.table}, or null
     */
    int route(@Nullable String topic, @Nullable String schema, @Nullable String table) {
        if (size == 1 && catchAll == 0) {
            return 0;
        }
        Integer i = null;
        if (topic != null) {
            i = byName.get(topic);
        }
        if (i == null && table != null) {
            if (schema != null && !bySchemaTable.isEmpty()) {
                HashMap<String, Integer> m = bySchemaTable.get(schema);
                if (m != null) {
                    i = m.get(table);
                }
            }
            if (i == null) {
                i = byName.get(table);
            }
        }
        if (i == null && topic != null) {
            int dot = topic.lastIndexOf('.');
            if (dot >= 0) {
                i = byName.get(topic.substring(dot + 1));
            }
        }
        if (i != null) {
            return i;
        }
        if (catchAll >= 0) {
            return catchAll;
        }
        if (topic == null && table == null && size == 1) {
            return 0;
        }
        return NONE;
    }

    /** The {@code UNKNOWN_TOPIC} detail of a record {@link #route} found no flow for. */
    String unrouted(@Nullable String topic, @Nullable String table) {
        return "no flow for "
                + (table != null ? "table '" + table + "'" : "record")
                + (topic != null ? " (topic '" + topic + "')" : " (no topic or source.table)")
                + "; flows read "
                + names;
    }

    /** Adds flows one by one, each checked against those before it. */
    static final class Builder {
        private int size;
        private final HashMap<String, Integer> byName = new HashMap<>();
        private final HashMap<String, HashMap<String, Integer>> bySchemaTable = new HashMap<>();
        private final List<String> ids = new ArrayList<>();
        private final List<String> names = new ArrayList<>();
        private int catchAll = -1;

        private Builder() {}

        /**
         * Adds the next flow (index = number of flows added before).
         *
         * @param flowId the flow's id, for messages
         * @param sourceNames the names it claims; empty = the catch-all
         * @throws IllegalArgumentException when a second flow has no source names, or a name is
         *     claimed by two flows
         */
        Builder add(String flowId, List<String> sourceNames) {
            int index = size++;
            ids.add(flowId);
            if (sourceNames.isEmpty()) {
                if (catchAll >= 0) {
                    throw new IllegalArgumentException(
                            "flows '"
                                    + ids.get(catchAll)
                                    + "' and '"
                                    + flowId
                                    + "' both have no source names; at most one flow may be the catch-all");
                }
                catchAll = index;
            }
            for (String name : sourceNames) {
                Integer prev = byName.put(name, index);
                if (prev != null && prev != index) {
                    throw new IllegalArgumentException(
                            "source name '"
                                    + name
                                    + "' is claimed by flows '"
                                    + ids.get(prev)
                                    + "' and '"
                                    + flowId
                                    + "'");
                }
                int dot = name.indexOf('.');
                if (dot > 0 && dot == name.lastIndexOf('.')) {
                    bySchemaTable
                            .computeIfAbsent(name.substring(0, dot), k -> new HashMap<>())
                            .put(name.substring(dot + 1), index);
                }
            }
            names.addAll(sourceNames);
            return this;
        }

        FlowRouter build() {
            return new FlowRouter(this);
        }
    }
}
