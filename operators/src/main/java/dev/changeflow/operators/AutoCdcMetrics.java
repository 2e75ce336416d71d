package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;

/**
 * Counters of the AUTO CDC operators (design.md "Logs and metrics"). The Flink adapters register
 * them in the operator's metric group under exactly these names: {@code applied}, {@code late},
 * {@code duplicateSequence}, {@code noop}, {@code tombstones}, {@code truncates}.
 */
@Internal
public interface AutoCdcMetrics {
    String APPLIED = "applied";
    String LATE = "late";
    String DUPLICATE_SEQUENCE = "duplicateSequence";
    String NOOP = "noop";
    String TOMBSTONES = "tombstones";
    String TRUNCATES = "truncates";

    /** A record that changed the key's state (and usually emitted rows). */
    void applied();

    /** A record with a sequence lower than the key's highest applied one (A2). */
    void late();

    /** Same key, same sequence, different values or kinds (A2 Decision). */
    void duplicateSequence();

    /**
     * A record that changed nothing visible: exact duplicate or identical values (A3 Decision, K7).
     */
    void noop();

    /** A delete recorded as a tombstone (SCD1) or history delete marker (SCD2). */
    void tombstone();

    /** A truncate record processed by this subtask (A3). */
    void truncate();

    /** Plain counting implementation, for tests and the pure logic without Flink. */
    final class Counting implements AutoCdcMetrics {
        public long applied;
        public long late;
        public long duplicateSequence;
        public long noop;
        public long tombstones;
        public long truncates;

        @Override
        public void applied() {
            applied++;
        }

        @Override
        public void late() {
            late++;
        }

        @Override
        public void duplicateSequence() {
            duplicateSequence++;
        }

        @Override
        public void noop() {
            noop++;
        }

        @Override
        public void tombstone() {
            tombstones++;
        }

        @Override
        public void truncate() {
            truncates++;
        }

        @Override
        public String toString() {
            return "applied="
                    + applied
                    + " late="
                    + late
                    + " duplicateSequence="
                    + duplicateSequence
                    + " noop="
                    + noop
                    + " tombstones="
                    + tombstones
                    + " truncates="
                    + truncates;
        }
    }
}
