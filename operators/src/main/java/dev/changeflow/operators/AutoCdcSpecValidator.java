package dev.changeflow.operators;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.types.logical.RowType;

import java.util.ArrayList;
import java.util.List;

/** Definition-time checks of semantics.md A1 and derivation of the target row type. */
@Internal
final class AutoCdcSpecValidator {
    private AutoCdcSpecValidator() {}

    // TODO(operators helper): every A1 rule with its own code and a message naming the clause.
    static void validate(AutoCdcSpec.Builder b) {
        if (b.keys().isEmpty()) {
            throw new AutoCdcException(AutoCdcException.Code.EMPTY_KEYS, "flow '" + b.name() + "': KEYS must name at least one column");
        }
    }

    static RowType targetType(AutoCdcSpec.Builder b) {
        RowType source = b.sourceType();
        List<String> names = AutoCdcSpec.projectedColumns(source, b.metadataColumns(), b.columns());
        List<RowType.RowField> fields = new ArrayList<>();
        for (String n : names) {
            var t = source.getTypeAt(source.getFieldIndex(n));
            fields.add(new RowType.RowField(n, b.keys().contains(n) ? t.copy(false) : t));
        }
        if (b.scdType() == ScdType.TYPE_2) {
            var seq = AutoCdcSpec.sequenceType(source, b.sequenceBy());
            fields.add(new RowType.RowField(AutoCdcSpec.START_AT, seq.copy(false)));
            fields.add(new RowType.RowField(AutoCdcSpec.END_AT, seq.copy(true)));
        }
        return new RowType(fields);
    }
}
