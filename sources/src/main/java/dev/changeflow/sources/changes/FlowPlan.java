package dev.changeflow.sources.changes;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;

import javax.annotation.Nullable;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * A {@link DecoderFlow} compiled for decoding: the data columns as a {@link RowShape}, the
 * positions of KEYS, SEQUENCE BY and non-key NOT NULL columns in {@link DecoderFlow#sourceType()},
 * and a reusable scratch array of which data columns a record named. One per flow and decoder.
 */
@Internal
final class FlowPlan {
    /** The flow's index among the decoder's flows ({@link DecodeOutput}'s {@code flowIndex}). */
    final int index;

    final DecoderFlow flow;
    final RowShape data;
    final int dataArity;

    /** Arity of {@link DecoderFlow#sourceType()}: data columns, then metadata columns. */
    final int arity;

    final int[] keyIdx;
    final int[] seqIdx;
    final int[] notNullNonKey;
    final boolean debezium;

    /**
     * Whether a data column's conversion depends on the schema wrapper (decimals, temporal units).
     */
    final boolean needsHints;

    /**
     * Debezium: the unavailable-value placeholder ({@link DecoderFlow#unavailablePlaceholder()})
     * and its base64 form (how a BYTES column carries it); null for plain JSON.
     */
    @Nullable final String placeholder;

    @Nullable final String placeholderBase64;

    /** Position of {@link DebeziumMetadata#UNAVAILABLE} in the source row, or -1 (plain JSON). */
    final int unavailableIdx;

    /** Per data column, whether the image being converted has it (scratch, per record). */
    final boolean[] present;

    /**
     * Position in {@link DecoderFlow#sourceType()} of the first sequence-only column (A5), = {@link
     * #arity} when there is none.
     */
    final int firstSequenceOnly;

    /**
     * Per sequence-only column, the {@code source} member it reads, or null for {@code
     * _log_position}.
     */
    final String[] sequenceOnlyMembers;

    /**
     * Whether a record of this flow has had a non-null sequence since this decoder started: until
     * then, a sequence its connector never writes fails the flow instead of quarantining each
     * record (A5 "Default sequence per connector").
     */
    boolean sequenceSeen;

    /** The last schema wrapper {@link RowAssembler#widened} looked at, and its answer (A7). */
    @Nullable ConnectSchema widenedFor;

    List<RowType.RowField> widened = List.of();

    FlowPlan(int index, DecoderFlow flow) {
        this.index = index;
        this.flow = flow;
        this.data = new RowShape(flow.dataType());
        this.dataArity = data.arity();
        this.arity = flow.sourceType().getFieldCount();
        RowType st = flow.sourceType();
        this.keyIdx = flow.keys().stream().mapToInt(st::getFieldIndex).toArray();
        this.seqIdx = flow.sequenceBy().stream().mapToInt(st::getFieldIndex).toArray();
        List<Integer> nn = new ArrayList<>();
        for (int c = 0; c < dataArity; c++) {
            if (!data.columns[c].nullable && !flow.keys().contains(data.names[c])) {
                nn.add(c);
            }
        }
        this.notNullNonKey = nn.stream().mapToInt(Integer::intValue).toArray();
        this.debezium = flow.format() == ChangeRecordFormat.DEBEZIUM_JSON;
        this.needsHints = needsHints(flow.dataType());
        this.present = new boolean[dataArity];
        List<String> extra = flow.sequenceOnlyColumns();
        this.firstSequenceOnly = arity - extra.size();
        this.sequenceOnlyMembers = new String[extra.size()];
        for (int i = 0; i < extra.size(); i++) {
            sequenceOnlyMembers[i] = DebeziumMetadata.sourceMember(extra.get(i));
        }
        this.placeholder = debezium ? flow.unavailablePlaceholder() : null;
        this.placeholderBase64 =
                debezium
                        ? Base64.getEncoder()
                                .encodeToString(placeholder.getBytes(StandardCharsets.UTF_8))
                        : null;
        this.unavailableIdx = debezium ? dataArity + DebeziumMetadata.I_UNAVAILABLE : -1;
    }

    private static boolean needsHints(LogicalType t) {
        switch (t.getTypeRoot()) {
            case DECIMAL:
            case TIME_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                return true;
            case ROW:
                for (RowType.RowField f : ((RowType) t).getFields()) {
                    if (needsHints(f.getType())) {
                        return true;
                    }
                }
                return false;
            case ARRAY:
                return needsHints(((ArrayType) t).getElementType());
            case MAP:
                return needsHints(((MapType) t).getValueType());
            default:
                return false;
        }
    }
}
