package dev.changeflow.jobs.ingest;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.operators.AutoCdcException;

import org.assertj.core.api.AbstractThrowableAssert;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
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

    /** Locks the state folder {@code j.state} of job {@code j}. */
    private LocalJobState lockJ() throws IOException {
        return LocalJobState.lock(tmp.resolve("j.state"), "j");
    }

    /**
     * Asserts that {@code call} throws an {@link AutoCdcException} with code {@code
     * FLOW_CHANGED_FOR_EXISTING_STATE} (K8); the message is asserted by the caller.
     */
    private static AbstractThrowableAssert<?, ? extends Throwable> assertThatFlowChanged(
            ThrowingCallable call) {
        return assertThatThrownBy(call)
                .isInstanceOfSatisfying(
                        AutoCdcException.class,
                        e ->
                                assertThat(e.code())
                                        .isEqualTo(
                                                AutoCdcException.Code
                                                        .FLOW_CHANGED_FOR_EXISTING_STATE));
    }

    private static final String ITEMS =
            "flows:\n  - table: items\n    keys: [id]\n    schema: 'id INT, v INT, ts BIGINT'\n";
    private static final String ORDERS =
            "  - table: orders\n    keys: [oid]\n    schema: 'oid INT'\n";

    @Test
    void aSecondRunOfTheSameJobIsRefusedWhileTheFirstHoldsTheLock() throws Exception {
        try (LocalJobState first = lockJ()) {
            assertThatThrownBy(() -> lockJ())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageStartingWith(
                            "another run of job 'j' is using " + tmp.resolve("j.state"));
        }
        lockJ().close();
    }

    @Test
    void aChangedSequenceOrKeyIsRefusedAndARemovedFlowIsReported() throws Exception {
        try (LocalJobState state = lockJ()) {
            state.saveDefinitions(plan(ITEMS + ORDERS));
            assertThat(state.checkDefinitions(plan(ITEMS + ORDERS))).isEmpty();
            assertThat(state.checkDefinitions(plan(ITEMS))).containsExactly("orders");
            assertThatFlowChanged(
                            () ->
                                    state.checkDefinitions(
                                            plan(
                                                    ITEMS.replace(
                                                            "keys: [id]",
                                                            "keys: [id]\n    sequence-by: ts"))))
                    .hasMessageStartingWith(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'items': sequence-by changed from [\"_source_lsn\"] to [\"ts\"]");
            assertThatThrownBy(
                            () ->
                                    state.checkDefinitions(
                                            plan(ITEMS.replace("keys: [id]", "keys: [id, v]"))))
                    .hasMessageStartingWith(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'items': keys changed from [\"id\"] to [\"id\",\"v\"]");
            assertThatThrownBy(() -> state.checkDefinitions(plan(ITEMS + "    scd-type: 2\n")))
                    .hasMessageContaining("scd-type changed from \"TYPE_1\" to \"TYPE_2\"");
        }
    }

    private static final String PAYMENTS =
            "flows:\n  - table: payments\n    replace-using: [booking]\n    sequence-by: seq\n"
                    + "    schema: 'booking STRING, payment STRING, seq BIGINT, at TIMESTAMP(3)'\n";

    private static final String REPLACE_USING_STATE =
            " but the saved state of job 'j' was built with the old definition (each key's applied"
                    + " sequence and rows would be compared with the new ones and rows silently"
                    + " dropped as late or left in the table). Restore the old definition, or"
                    + " rebuild the table from its source with --from-scratch.";

    /** K8 for REPLACE USING (S5): its columns and SEQUENCE BY are part of the saved state. */
    @Test
    void aChangedReplaceUsingDefinitionIsRefused() throws Exception {
        try (LocalJobState state = lockJ()) {
            state.saveDefinitions(plan(PAYMENTS + ORDERS));
            assertThat(state.checkDefinitions(plan(PAYMENTS + ORDERS))).isEmpty();
            assertThat(state.checkDefinitions(plan(PAYMENTS))).containsExactly("orders");
            assertThatFlowChanged(
                            () ->
                                    state.checkDefinitions(
                                            plan(
                                                    PAYMENTS.replace(
                                                            "[booking]", "[booking, payment]"))))
                    .hasMessage(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'payments': replace-using"
                                    + " changed from [\"booking\"] to [\"booking\",\"payment\"]"
                                    + REPLACE_USING_STATE);
            assertThatThrownBy(
                            () ->
                                    state.checkDefinitions(
                                            plan(
                                                    PAYMENTS.replace(
                                                            "sequence-by: seq",
                                                            "sequence-by: at"))))
                    .hasMessage(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'payments': sequence-by changed"
                                    + " from [\"seq\"] to [\"at\"]"
                                    + REPLACE_USING_STATE);
            // the same columns as an AUTO CDC flow: the state is another operator's
            assertThatThrownBy(
                            () ->
                                    state.checkDefinitions(
                                            plan(
                                                    PAYMENTS.replace(
                                                            "replace-using: [booking]",
                                                            "keys: [payment]"))))
                    .hasMessageStartingWith(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'payments': the flow changed"
                                    + " from replace-using to auto-cdc but the saved state of job"
                                    + " 'j' was built with the old definition (its sequences,");
        }
    }

    /** An entry written before kinds were recorded is an AUTO CDC flow's. */
    @Test
    void anEntryWithoutKindIsAnAutoCdcFlows() throws Exception {
        try (LocalJobState state = lockJ()) {
            Files.writeString(
                    tmp.resolve("j.state").resolve("flows.json"),
                    "{\"items\": {\"keys\": [\"id\"], \"sequence-by\": [\"_source_lsn\"],"
                            + " \"sequence-type\": \"BIGINT\", \"scd-type\": \"TYPE_1\"}}");
            assertThat(state.checkDefinitions(plan(ITEMS))).isEmpty();
            assertThatThrownBy(
                            () ->
                                    state.checkDefinitions(
                                            plan(
                                                    ITEMS.replace(
                                                            "keys: [id]",
                                                            "replace-using: [id]\n    sequence-by: ts"))))
                    .hasMessageStartingWith(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'items': the flow changed from"
                                    + " auto-cdc to replace-using but the saved state of job 'j'"
                                    + " was built with the old definition (each key's applied");
        }
    }

    private List<SnapshotJob.Plan> snapshotPlans(String keys, String scdType) throws Exception {
        Path folder = Files.createDirectories(tmp.resolve("snapshots"));
        IngestConfig cfg =
                FlowsFile.parse(
                        "name: j\nnamespace: ns\nflows:\n  - table: cities\n    from-snapshot: '"
                                + folder
                                + "'\n    keys: "
                                + keys
                                + "\n    scd-type: "
                                + scdType
                                + "\n    schema: 'id BIGINT, country STRING, city STRING'\n",
                        "f.yaml");
        return List.of(SnapshotJob.plan(cfg.flows.get(0), "ns"));
    }

    /** K8 for AUTO CDC FROM SNAPSHOT (A6): KEYS and SCD type of a restored run are compared. */
    @Test
    void aChangedSnapshotFlowIsRefusedBeforeItsDefinitionIsRecorded() throws Exception {
        String state =
                " but the saved state of job 'j' was built with the old definition (each key's"
                        + " last values and the applied snapshot version would be compared with"
                        + " the new snapshots and rows silently kept, changed or deleted). Restore"
                        + " the old definition, or rebuild the table from its source with"
                        + " --from-scratch.";
        try (LocalJobState s = lockJ()) {
            java.util.function.Function<String, String> fix = LocalIngest.Options.FROM_SCRATCH_FIX;
            // a run without saved state compares nothing and records the definition
            assertThat(
                            s.checkSnapshotDefinitions(
                                    "j", snapshotPlans("[id, country]", "2"), false, fix))
                    .isEmpty();
            assertThat(
                            s.checkSnapshotDefinitions(
                                    "j", snapshotPlans("[id, country]", "2"), true, fix))
                    .isEmpty();
            assertThatFlowChanged(
                            () ->
                                    s.checkSnapshotDefinitions(
                                            "j", snapshotPlans("[id]", "2"), true, fix))
                    .hasMessage(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'cities': keys changed from"
                                    + " [\"id\",\"country\"] to [\"id\"]"
                                    + state);
            assertThatThrownBy(
                            () ->
                                    s.checkSnapshotDefinitions(
                                            "j", snapshotPlans("[id, country]", "1"), true, fix))
                    .hasMessage(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'cities': scd-type changed from"
                                    + " \"TYPE_2\" to \"TYPE_1\""
                                    + state);
            // the refused definitions were not recorded: the old one still passes
            assertThat(
                            s.checkSnapshotDefinitions(
                                    "j", snapshotPlans("[id, country]", "2"), true, fix))
                    .isEmpty();
            // the saved version source is compared too
            Path flows = tmp.resolve("j.state").resolve("flows.json");
            Files.writeString(
                    flows,
                    Files.readString(flows)
                            .replace("\"snapshot file names\"", "\"table versions\""));
            assertThatThrownBy(
                            () ->
                                    s.checkSnapshotDefinitions(
                                            "j", snapshotPlans("[id, country]", "2"), true, fix))
                    .hasMessage(
                            "FLOW_CHANGED_FOR_EXISTING_STATE: flow 'cities': version-source"
                                    + " changed from \"table versions\" to \"snapshot file"
                                    + " names\""
                                    + state);
        }
    }

    @Test
    void onlyTheSavepointOfACleanStopCountsAsCommittedAndFromScratchForgetsIt() throws Exception {
        Path savepoint =
                tmp.resolve("ck")
                        .resolve("savepoints")
                        .resolve("0123456789abcdef0123456789abcdef")
                        .resolve("savepoint-012345-abc");
        Path checkpoint =
                tmp.resolve("ck")
                        .resolve("checkpoints")
                        .resolve("0123456789abcdef0123456789abcdef")
                        .resolve("chk-7");
        try (LocalJobState state = lockJ()) {
            assertThat(state.committed(savepoint)).isFalse();
            state.markCommitted(savepoint);
            assertThat(state.committed(savepoint)).isTrue();
            assertThat(
                            state.committed(
                                    tmp.resolve(
                                            "ck/savepoints/0123456789abcdef0123456789abcdef/../0123456789abcdef0123456789abcdef/savepoint-012345-abc")))
                    .as("the same folder, spelled otherwise")
                    .isTrue();
            assertThat(state.committed(checkpoint)).isFalse();
            state.clear();
            assertThat(state.committed(savepoint)).isFalse();
        }
    }

    @Test
    void filesDoneListsAreFiledByJobIdAndCheckpointIdAndCleanUpKeepsOnlyTheSavepointsList()
            throws Exception {
        String jobA = "0123456789abcdef0123456789abcdef";
        String jobB = "fedcba9876543210fedcba9876543210";
        Path ck = tmp.resolve("ck");
        Path done = ck.resolve(LocalCheckpoints.FILES_DONE);
        // job B resumed from A's checkpoint 2 and counted on: both have a checkpoint 3, with
        // different lists
        Path a3 = ck.resolve("checkpoints").resolve(jobA).resolve("chk-3");
        Path b3 = ck.resolve("checkpoints").resolve(jobB).resolve("chk-3");
        Path legacy = ck.resolve("savepoints").resolve("savepoint-012345-abcdef");
        Files.createDirectories(done.resolve(jobA));
        Files.createDirectories(done.resolve(jobB));
        Files.write(done.resolve(jobA).resolve("3.txt"), List.of("/in/a.jsonl"));
        Files.write(done.resolve(jobB).resolve("3.txt"), List.of("/in/a.jsonl", "/in/b.jsonl"));
        Files.write(done.resolve("3.txt"), List.of("/in/old.jsonl"));
        assertThat(FileProgressFunction.doneAt(done, a3, 3)).containsExactly("/in/a.jsonl");
        assertThat(FileProgressFunction.doneAt(done, b3, 3))
                .containsExactly("/in/a.jsonl", "/in/b.jsonl");
        assertThat(FileProgressFunction.doneAt(done, b3, 4))
                .as("no list: nothing read completely")
                .isEmpty();
        assertThat(FileProgressFunction.doneAt(done, legacy, 3))
                .as("savepoint of an older release")
                .containsExactly("/in/old.jsonl");
        assertThat(FileProgressFunction.jobIdOf(a3)).isEqualTo(jobA);
        assertThat(FileProgressFunction.jobIdOf(legacy)).isNull();
    }

    @Test
    void aFileThatChangedAfterItWasReadIsReported() throws Exception {
        Path f = tmp.resolve("a.jsonl");
        Files.writeString(f, "{}\n");
        Map<String, String> seen = LocalJobState.fingerprints(List.of(f.toString()));
        Files.writeString(f, "{}\n{}\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        LocalJobState.warnChanged(
                seen,
                LocalJobState.fingerprints(List.of(f.toString())),
                new PrintStream(out, true, StandardCharsets.UTF_8));
        assertThat(out.toString(StandardCharsets.UTF_8))
                .startsWith("WARNING: " + f + " changed since it was read (size and time were 3 ")
                .contains("changeflow reads each file once, by path");
        ByteArrayOutputStream none = new ByteArrayOutputStream();
        LocalJobState.warnChanged(seen, seen, new PrintStream(none, true, StandardCharsets.UTF_8));
        assertThat(none.size()).isZero();
    }
}
