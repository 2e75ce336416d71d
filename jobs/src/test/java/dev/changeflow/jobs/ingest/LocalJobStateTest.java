package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.operators.AutoCdcException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LocalJobStateTest {
    @TempDir Path tmp;

    private IngestPlan plan(String flows) throws Exception {
        IngestConfig cfg = FlowsFile.parse("name: j\nnamespace: ns\n" + flows, "f.yaml");
        return IngestPlanner.plan(cfg, List.of(tmp));
    }

    private static final String ITEMS = "flows:\n  - table: items\n    keys: [id]\n    schema: 'id INT, v INT, ts BIGINT'\n";
    private static final String ORDERS = "  - table: orders\n    keys: [oid]\n    schema: 'oid INT'\n";

    @Test
    void aSecondRunOfTheSameJobIsRefusedWhileTheFirstHoldsTheLock() throws Exception {
        try (LocalJobState first = LocalJobState.lock(tmp.resolve("j.state"), "j")) {
            assertThatThrownBy(() -> LocalJobState.lock(tmp.resolve("j.state"), "j"))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith("another run of job 'j' is using " + tmp.resolve("j.state"));
        }
        LocalJobState.lock(tmp.resolve("j.state"), "j").close();
    }

    @Test
    void aChangedSequenceOrKeyIsRefusedAndARemovedFlowIsReported() throws Exception {
        try (LocalJobState state = LocalJobState.lock(tmp.resolve("j.state"), "j")) {
            state.saveDefinitions(plan(ITEMS + ORDERS));
            assertThat(state.checkDefinitions(plan(ITEMS + ORDERS))).isEmpty();
            assertThat(state.checkDefinitions(plan(ITEMS))).containsExactly("orders");
            assertThatThrownBy(() -> state.checkDefinitions(plan(ITEMS.replace("keys: [id]", "keys: [id]\n    sequence-by: ts"))))
                    .isInstanceOfSatisfying(AutoCdcException.class, e -> assertThat(e.code()).isEqualTo(AutoCdcException.Code.FLOW_CHANGED_FOR_EXISTING_STATE))
                    .hasMessageStartingWith("FLOW_CHANGED_FOR_EXISTING_STATE: flow 'items': sequence-by changed from [\"_source_lsn\"] to [\"ts\"]");
            assertThatThrownBy(() -> state.checkDefinitions(plan(ITEMS.replace("keys: [id]", "keys: [id, v]"))))
                    .hasMessageStartingWith("FLOW_CHANGED_FOR_EXISTING_STATE: flow 'items': keys changed from [\"id\"] to [\"id\",\"v\"]");
            assertThatThrownBy(() -> state.checkDefinitions(plan(ITEMS + "    scd-type: 2\n")))
                    .hasMessageContaining("scd-type changed from \"TYPE_1\" to \"TYPE_2\"");
        }
    }

    @Test
    void aFileThatChangedAfterItWasReadIsReported() throws Exception {
        Path f = tmp.resolve("a.jsonl");
        Files.writeString(f, "{}\n");
        Map<String, String> seen = LocalJobState.fingerprints(List.of(f.toString()));
        Files.writeString(f, "{}\n{}\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LocalJobState.warnChanged(seen, LocalJobState.fingerprints(List.of(f.toString())), new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(out.toString(StandardCharsets.UTF_8))
                .startsWith("WARNING: " + f + " changed since it was read (size and time were 3 ")
                .contains("changeflow reads each file once, by path");
        ByteArrayOutputStream none = new ByteArrayOutputStream();
        LocalJobState.warnChanged(seen, seen, new PrintStream(none, true, StandardCharsets.UTF_8));
        assertThat(none.size()).isZero();
    }
}
