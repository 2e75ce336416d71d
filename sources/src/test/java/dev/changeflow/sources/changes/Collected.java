package dev.changeflow.sources.changes;

import org.apache.flink.table.data.RowData;

import java.util.ArrayList;
import java.util.List;

/** A {@link DecodeOutput} that keeps everything, for assertions. */
final class Collected implements DecodeOutput {
    final List<Integer> changeFlows = new ArrayList<>();
    final List<RowData> changes = new ArrayList<>();
    final List<Integer> truncateFlows = new ArrayList<>();
    final List<RowData> truncates = new ArrayList<>();
    final List<RowData> quarantined = new ArrayList<>();

    @Override
    public void upsertOrDelete(int flowIndex, RowData row) {
        changeFlows.add(flowIndex);
        changes.add(row);
    }

    @Override
    public void truncate(int flowIndex, RowData row) {
        truncateFlows.add(flowIndex);
        truncates.add(row);
    }

    @Override
    public void quarantine(RowData row) {
        quarantined.add(row);
    }

    int total() {
        return changes.size() + truncates.size() + quarantined.size();
    }
}
