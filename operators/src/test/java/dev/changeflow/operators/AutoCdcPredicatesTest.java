package dev.changeflow.operators;

import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link AutoCdcPredicates#validate} inside a cluster context (a test MiniCluster, like a job
 * planned in application mode), where Flink refuses a local environment.
 */
class AutoCdcPredicatesTest {
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    @Test
    void validPredicatesPlanInsideAClusterContext() {
        AutoCdcSpec spec = TestFlows.scd1().deleteWhen("_op = 'd'").truncateWhen("v < 0").build();
        assertThatCode(() -> AutoCdcPredicates.validate(spec)).doesNotThrowAnyException();
    }

    @Test
    void unknownColumnInPredicateIsAClearError() {
        AutoCdcSpec spec = TestFlows.scd1().deleteWhen("no_such_column = 'd'").build();
        assertThatThrownBy(() -> AutoCdcPredicates.validate(spec))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "flow 't': APPLY AS DELETE WHEN 'no_such_column = 'd'' / APPLY AS"
                                + " TRUNCATE WHEN (none) is not a valid Flink SQL predicate over"
                                + " the columns [id, name, v, _source_lsn, _op]: ")
                .hasMessageContaining("no_such_column");
    }

    @Test
    void flowWithoutPredicatesNeedsNoPlanning() {
        assertThatCode(() -> AutoCdcPredicates.validate(TestFlows.scd1().build()))
                .doesNotThrowAnyException();
    }
}
