package dev.changeflow.sources.cdf;

import dev.changeflow.sources.cdf.stream.enumerator.VersionTracker;
import dev.changeflow.sources.cdf.stream.split.ChangeFeedSplit;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The version-completion watermark of the enumerator (design.md "Order and pairing — how"). */
class VersionTrackerTest {

    private static ChangeFeedSplit split(long version, ChangeFeedSplit.Kind kind, int index) {
        return ChangeFeedSplit.of(version, 100 + version, 1000 + version, kind, index, null);
    }

    @Test
    void versionsCompleteInOrderAndEmptyVersionsAdvance() {
        VersionTracker tracker = new VersionTracker(-1);
        tracker.planned(
                3,
                List.of(
                        split(3, ChangeFeedSplit.Kind.REMOVED, 0),
                        split(3, ChangeFeedSplit.Kind.ADDED, 0)),
                true);
        tracker.planned(5, List.of(split(5, ChangeFeedSplit.Kind.ADDED, 0)), true);
        tracker.planned(6, List.of(), true);

        assertThat(tracker.advance(6)).isEqualTo(2);
        tracker.finished("5-A0");
        assertThat(tracker.advance(6)).isEqualTo(2); // 5 waits for 3
        tracker.finished("3-R0");
        assertThat(tracker.advance(6)).isEqualTo(2);
        tracker.finished("3-A0");
        assertThat(tracker.advance(6)).isEqualTo(6); // 3, 5 and the empty 6
        tracker.finished("9-A0"); // unknown (re-reported after a restore): ignored
        assertThat(tracker.advance(6)).isEqualTo(6);
        assertThat(tracker.isEmpty()).isTrue();
    }

    @Test
    void partlyPlannedInitialSnapshotDoesNotComplete() {
        VersionTracker tracker = new VersionTracker(-1);
        tracker.planned(4, List.of(split(4, ChangeFeedSplit.Kind.INITIAL, 0)), false);
        tracker.finished("4-I0");
        assertThat(tracker.advance(3)).isEqualTo(3);
        tracker.planned(4, List.of(split(4, ChangeFeedSplit.Kind.INITIAL, 1)), true);
        tracker.finished("4-I1");
        assertThat(tracker.advance(4)).isEqualTo(4);
    }

    /** A regional failover hands splits back: their versions are outstanding again. */
    @Test
    void reopenedSplitsLowerTheCompletedVersion() {
        VersionTracker tracker = new VersionTracker(-1);
        tracker.planned(7, List.of(split(7, ChangeFeedSplit.Kind.ADDED, 0)), true);
        tracker.planned(8, List.of(split(8, ChangeFeedSplit.Kind.ADDED, 0)), true);
        tracker.finished("7-A0");
        tracker.finished("8-A0");
        assertThat(tracker.advance(8)).isEqualTo(8);

        tracker.reopen(List.of(split(7, ChangeFeedSplit.Kind.ADDED, 0)));

        assertThat(tracker.advance(8)).isEqualTo(6);
        assertThat(tracker.versions()).containsOnlyKeys(7L);
        assertThat(tracker.versions().get(7L).unfinished()).containsExactly("7-A0");
        tracker.finished("7-A0");
        assertThat(tracker.advance(8)).isEqualTo(8);
    }

    @Test
    void restoredBookkeepingContinues() {
        VersionTracker tracker =
                new VersionTracker(
                        4, Map.of(5L, new VersionTracker.VersionProgress(Set.of("5-R0"), true)));
        assertThat(tracker.advance(5)).isEqualTo(4);
        tracker.finished("5-R0");
        assertThat(tracker.advance(5)).isEqualTo(5);
    }
}
