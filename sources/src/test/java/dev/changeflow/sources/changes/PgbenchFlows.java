package dev.changeflow.sources.changes;

import java.util.List;

/** The four pgbench flows over the real capture (shared/data/README.md). */
final class PgbenchFlows {
    private PgbenchFlows() {}

    static final String ACCOUNTS_COLUMNS = "aid INT, bid INT, abalance INT, filler CHAR(84)";
    static final String BRANCHES_COLUMNS = "bid INT, bbalance INT, filler CHAR(88)";
    static final String TELLERS_COLUMNS = "tid INT, bid INT, tbalance INT, filler CHAR(84)";
    static final String HISTORY_COLUMNS =
            "tid INT, bid INT, aid INT, delta INT, mtime TIMESTAMP(6), filler CHAR(22)";

    static List<DecoderFlow> flows() {
        return List.of(
                keyed("accounts", "pgbench_accounts", ACCOUNTS_COLUMNS, "aid"),
                keyed("branches", "pgbench_branches", BRANCHES_COLUMNS, "bid"),
                keyed("tellers", "pgbench_tellers", TELLERS_COLUMNS, "tid"),
                DecoderFlow.builder(
                                "history",
                                ChangeRecordFormat.DEBEZIUM_JSON,
                                SchemaSampler.parseColumns(HISTORY_COLUMNS))
                        .sourceNames("pgbench_history")
                        .appendOnly(true)
                        .sequenceBy("source.lsn")
                        .build());
    }

    private static DecoderFlow keyed(String id, String table, String columns, String key) {
        return DecoderFlow.builder(
                        id, ChangeRecordFormat.DEBEZIUM_JSON, SchemaSampler.parseColumns(columns))
                .sourceNames(table)
                .keys(key)
                .sequenceBy("_source_lsn")
                .build();
    }
}
