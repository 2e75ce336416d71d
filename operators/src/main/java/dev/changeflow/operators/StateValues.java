package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ValueState;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Reads and writes the {@code byte[]} value states of the AUTO CDC operators for the current key,
 * for the logic classes' state interfaces (which do not declare checked exceptions).
 */
@Internal
final class StateValues {
    private StateValues() {}

    /**
     * The current key's value, or null when it has none.
     *
     * @throws UncheckedIOException when the state backend fails to read it
     */
    @Nullable
    static byte[] get(ValueState<byte[]> state) {
        try {
            return state.value();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Sets the current key's value; null clears it.
     *
     * @throws UncheckedIOException when the state backend fails to write it
     */
    static void set(ValueState<byte[]> state, @Nullable byte[] value) {
        if (value == null) {
            state.clear();
            return;
        }
        try {
            state.update(value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
