package dev.changeflow.e2e;

import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.ingest.IngestPlan;
import dev.changeflow.jobs.ingest.IngestPlanner;
import dev.changeflow.jobs.ingest.LocalIngest;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableRows;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plain JSON change records whose operation and sequence are ordinary columns: APPLY AS DELETE WHEN
 * and APPLY AS TRUNCATE WHEN evaluated by Flink SQL before the keyBy (A5), SEQUENCE BY a data
 * column with late records (A2), COLUMNS * EXCEPT (A1), tombstones and the table-wide truncate
 * tombstone (A3); a record with a null key that is no truncate is quarantined (NULL_KEY).
 */
class PlainJsonPredicatesITCase {
    @TempDir Path tmp;

    @Test
    void deleteAndTruncatePredicatesApplyInSequenceOrder() throws Exception {
        String flows =
                String.join(
                        "\n",
                        "name: orders",
                        "format: json",
                        "namespace: shop",
                        "flows:",
                        "  - table: orders",
                        "    keys: [id]",
                        "    sequence-by: seq",
                        "    schema: 'id INT, status STRING, amount INT, op STRING, seq BIGINT'",
                        "    columns: '* EXCEPT (op)'",
                        "    apply-as-delete-when: \"op = 'DELETE'\"",
                        "    apply-as-truncate-when: \"op = 'TRUNCATE'\"");
        List<String> lines =
                List.of(
                        "{\"id\":1,\"status\":\"new\",\"amount\":10,\"op\":\"INSERT\",\"seq\":1}",
                        "{\"id\":2,\"status\":\"new\",\"amount\":20,\"op\":\"INSERT\",\"seq\":2}",
                        "{\"id\":1,\"status\":\"paid\",\"amount\":10,\"op\":\"UPDATE\",\"seq\":5}",
                        "{\"id\":1,\"status\":\"shipped\",\"amount\":10,\"op\":\"UPDATE\",\"seq\":4}",
                        "{\"id\":2,\"op\":\"DELETE\",\"seq\":6}",
                        "{\"id\":2,\"status\":\"new\",\"amount\":25,\"op\":\"INSERT\",\"seq\":3}",
                        "{\"id\":3,\"status\":\"new\",\"amount\":30,\"op\":\"INSERT\",\"seq\":7}",
                        "{\"op\":\"TRUNCATE\",\"seq\":8}",
                        "{\"id\":4,\"status\":\"new\",\"amount\":40,\"op\":\"INSERT\",\"seq\":9}",
                        "{\"id\":5,\"status\":\"old\",\"amount\":50,\"op\":\"INSERT\",\"seq\":2}",
                        "{\"id\":null,\"status\":\"lost\",\"amount\":60,\"op\":\"INSERT\",\"seq\":10}",
                        "{\"id\":6,\"status\":\"x\",\"amount\":60,\"op\":null,\"seq\":11}");
        Path input = tmp.resolve("in");
        Files.createDirectories(input);
        Files.write(input.resolve("orders.jsonl"), lines);
        Path warehouse = tmp.resolve("warehouse");
        IngestPlan plan = IngestPlanner.plan(FlowsFile.parse(flows, "flows.yaml"), List.of(input));
        LocalIngest.run(plan, List.of(input), KeysCasesITCase.quiet(warehouse));

        Catalog cat = CatalogSettings.localHadoop(warehouse.toAbsolutePath()).open();
        assertThat(TableRows.header(cat.loadTable(TableIdentifier.of("shop", "orders")).schema()))
                .isEqualTo("id,status,amount,seq");
        // id 1 and 3 removed by the truncate at 8, id 2 deleted at 6 (the late insert at 3 loses),
        // id 5 (seq 2) is older than the truncate; a NULL predicate value is an upsert (id 6)
        assertThat(TableRows.toCsvLines(cat.loadTable(TableIdentifier.of("shop", "orders"))))
                .containsExactly("4,new,40,9", "6,x,60,11");
        List<String> quarantined = new ArrayList<>();
        for (Record r :
                TableRows.read(
                        cat.loadTable(TableIdentifier.of("shop", "changeflow_quarantine")))) {
            quarantined.add(r.getField("reason") + ": " + r.getField("detail"));
        }
        assertThat(quarantined)
                .containsExactly(
                        "NULL_KEY: key column 'id' is null and APPLY AS TRUNCATE WHEN did not match");
    }
}
