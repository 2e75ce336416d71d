package dev.changeflow.jobs.ingest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LocalIngest#readersChangeRefused}: a resumed job's reader count may change between counts
 * above 1 (the readers' state rescales), not from 1 to more or back (the Iceberg committer behind
 * an append-only flow's writer then no longer restores).
 */
class ReaderCountChangeTest {
    @Test
    void onlyAChangeFromOrToOneIsRefused() {
        assertThat(LocalIngest.readersChangeRefused(1, 1)).isFalse();
        assertThat(LocalIngest.readersChangeRefused(2, 2)).isFalse();
        assertThat(LocalIngest.readersChangeRefused(2, 3)).isFalse();
        assertThat(LocalIngest.readersChangeRefused(4, 2)).isFalse();
        assertThat(LocalIngest.readersChangeRefused(1, 2)).isTrue();
        assertThat(LocalIngest.readersChangeRefused(2, 1)).isTrue();
        assertThat(LocalIngest.readersChangeRefused(8, 1)).isTrue();
    }
}
