package dev.changeflow.sources.changes;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The routing rule on its own (semantics.md A5 "Types, routing and table names"). */
class FlowRouterTest {

    private static FlowRouter router(List<?>... flows) {
        FlowRouter.Builder b = FlowRouter.builder();
        for (int i = 0; i < flows.length; i++) {
            @SuppressWarnings("unchecked")
            List<String> names = (List<String>) flows[i];
            b.add("f" + i, names);
        }
        return b.build();
    }

    @Test
    void topicThenSchemaTableThenTableThenLastTopicSegment() {
        FlowRouter r =
                router(
                        List.of("pg.public.items"),
                        List.of("public.items"),
                        List.of("items"),
                        List.of("orders"));
        assertThat(r.route("pg.public.items", "public", "items")).isEqualTo(0);
        assertThat(r.route("other.topic", "public", "items")).isEqualTo(1);
        assertThat(r.route("other.topic", "sales", "items")).isEqualTo(2);
        assertThat(r.route(null, null, "items")).isEqualTo(2);
        assertThat(r.route("pg.public.orders", "public", "nope")).isEqualTo(3);
        assertThat(r.route("pg.public.nope", "public", "nope")).isEqualTo(FlowRouter.NONE);
        assertThat(r.unrouted("pg.public.nope", "nope"))
                .isEqualTo(
                        "no flow for table 'nope' (topic 'pg.public.nope'); flows read [pg.public.items, public.items, items, orders]");
        assertThat(r.unrouted(null, null))
                .isEqualTo(
                        "no flow for record (no topic or source.table); flows read [pg.public.items, public.items, items, orders]");
    }

    @Test
    void theCatchAllTakesWhatNoOtherFlowClaims() {
        FlowRouter r = router(List.of("items"), List.of());
        assertThat(r.route("x.items", null, null)).isEqualTo(0);
        assertThat(r.route("x.other", null, "other")).isEqualTo(1);
        assertThat(r.route(null, null, null)).isEqualTo(1);
        assertThat(router(List.of()).route("anything", "s", "t")).isEqualTo(0);
    }

    @Test
    void aRecordNamingNeitherTopicNorTableBelongsToTheOnlyFlow() {
        assertThat(router(List.of("items")).route(null, null, null)).isEqualTo(0);
        assertThat(router(List.of("items")).route("x.other", null, null))
                .isEqualTo(FlowRouter.NONE);
        assertThat(router(List.of("items"), List.of("orders")).route(null, null, null))
                .isEqualTo(FlowRouter.NONE);
        assertThat(router().route(null, null, null)).isEqualTo(FlowRouter.NONE);
    }

    @Test
    void aNameBelongsToOneFlowAndThereIsOneCatchAll() {
        assertThatThrownBy(() -> router(List.of("a", "b"), List.of("b")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("source name 'b' is claimed by flows 'f0' and 'f1'");
        assertThatThrownBy(() -> router(List.of(), List.of("a"), List.of()))
                .hasMessage(
                        "flows 'f0' and 'f2' both have no source names; at most one flow may be the catch-all");
    }
}
