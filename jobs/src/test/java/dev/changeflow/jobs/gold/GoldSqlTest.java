package dev.changeflow.jobs.gold;

import dev.changeflow.jobs.CapturedOutput;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.jobs.sql.SqlException;
import dev.changeflow.jobs.sql.SqlException.Code;
import dev.changeflow.jobs.sql.SqlScript;
import dev.changeflow.sinks.iceberg.CatalogSettings;
import dev.changeflow.sinks.iceberg.TableMaintenanceOptions;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link GoldSql}: splitting and checking a Gold file, and the errors found when its statements are
 * planned over a real Hadoop catalog on disk (docs/semantics.md G2). Nothing here runs a job.
 */
class GoldSqlTest {

    @TempDir Path warehouse;

    private static final Schema SILVER =
            new Schema(
                    java.util.List.of(
                            Types.NestedField.required(1, "id", Types.LongType.get()),
                            Types.NestedField.optional(2, "grp", Types.StringType.get()),
                            Types.NestedField.optional(3, "amount", Types.LongType.get())),
                    Set.of(1));

    @Test
    void splitsAtSemicolonsOutsideLiteralsAndCommentsAndFindsTargets() {
        GoldSql.File f =
                GoldSql.parse(
                        "SET 'parallelism.default' = '1';\n"
                                + "-- a comment; not a statement\n"
                                + "CREATE TABLE IF NOT EXISTS gold.t (g STRING, n BIGINT,"
                                + " PRIMARY KEY (g) NOT ENFORCED);;\n"
                                + "INSERT INTO `gold`.`t` SELECT grp, COUNT(*) FROM silver.`s$changelog`"
                                + " /*+ OPTIONS('starting-version'='2') */ WHERE grp <> ';' GROUP BY grp;\n"
                                + "insert into changeflow.gold.u SELECT 1",
                        "g.sql");
        assertThat(f.name()).isEqualTo("g");
        assertThat(f.statements()).hasSize(4);
        assertThat(f.statements().get(2).text())
                .isEqualTo(
                        "INSERT INTO `gold`.`t` SELECT grp, COUNT(*) FROM silver.`s$changelog`"
                                + " /*+ OPTIONS('starting-version'='2') */ WHERE grp <> ';' GROUP BY grp");
        assertThat(f.statements().get(2).position().line()).isEqualTo(4);
        assertThat(f.inserts())
                .extracting(SqlScript.Statement::target)
                .containsExactly(
                        java.util.List.of("gold", "t"),
                        java.util.List.of("changeflow", "gold", "u"));
    }

    @Test
    void aFileWithoutInsertIsNoInsert() {
        assertThatThrownBy(
                        () ->
                                GoldSql.parse(
                                        "CREATE TABLE gold.t (a INT, PRIMARY KEY (a) NOT ENFORCED);",
                                        "g.sql"))
                .isInstanceOfSatisfying(
                        SqlException.class, e -> assertThat(e.code()).isEqualTo(Code.NO_INSERT))
                .hasMessageStartingWith("g.sql:1:1: NO_INSERT: ");
        assertThatThrownBy(() -> GoldSql.parse("-- nothing\n", "g.sql"))
                .isInstanceOfSatisfying(
                        SqlException.class, e -> assertThat(e.code()).isEqualTo(Code.NO_INSERT));
    }

    @Test
    void queriesOverwriteAndStatementSetBlocksAreUnsupported() {
        assertThatThrownBy(() -> GoldSql.parse("INSERT INTO g.t SELECT 1;\nSELECT 1", "g.sql"))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.UNSUPPORTED_STATEMENT))
                .hasMessageStartingWith("g.sql:2:1: UNSUPPORTED_STATEMENT: SELECT: ");
        assertThatThrownBy(() -> GoldSql.parse("INSERT OVERWRITE g.t SELECT 1", "g.sql"))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.UNSUPPORTED_STATEMENT));
        assertThatThrownBy(
                        () ->
                                GoldSql.parse(
                                        "EXECUTE STATEMENT SET BEGIN INSERT INTO g.t SELECT 1; END",
                                        "g.sql"))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.UNSUPPORTED_STATEMENT))
                .hasMessageContaining("one statement set");
        assertThatThrownBy(() -> GoldSql.parse("SET a = b;\nINSERT INTO g.t SELECT 1", "g.sql"))
                .isInstanceOfSatisfying(
                        SqlException.class, e -> assertThat(e.code()).isEqualTo(Code.SYNTAX_ERROR))
                .hasMessageContaining("SET 'key' = 'value'");
        assertThatThrownBy(() -> GoldSql.parse("INSERT INTO (SELECT 1)", "g.sql"))
                .isInstanceOfSatisfying(
                        SqlException.class, e -> assertThat(e.code()).isEqualTo(Code.SYNTAX_ERROR));
        assertThatThrownBy(() -> GoldSql.parse("INSERT INTO g.t SELECT 'open", "g.sql"))
                .isInstanceOfSatisfying(
                        SqlException.class, e -> assertThat(e.code()).isEqualTo(Code.SYNTAX_ERROR));
    }

    /** Plans {@code text} over the warehouse (Silver table silver.s with key id). */
    private void plan(String text) {
        StreamTableEnvironment tEnv =
                StreamTableEnvironment.create(
                        StreamExecutionEnvironment.getExecutionEnvironment(),
                        EnvironmentSettings.inStreamingMode());
        GoldSql.plan(
                GoldSql.parse(text, "g.sql"),
                tEnv,
                settings(),
                true,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    }

    private CatalogSettings settings() {
        return CatalogSettings.localHadoop(warehouse.toAbsolutePath());
    }

    private Catalog silver() {
        Catalog catalog = settings().open();
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("silver"));
        ((SupportsNamespaces) catalog).createNamespace(Namespace.of("gold"));
        catalog.createTable(
                TableIdentifier.of("silver", "s"),
                SILVER,
                PartitionSpec.unpartitioned(),
                Map.of(TableProperties.FORMAT_VERSION, "2"));
        return catalog;
    }

    @Test
    void unknownSourceAndTargetTablesAreNamed() {
        silver();
        assertThatThrownBy(
                        () ->
                                plan(
                                        "CREATE TABLE gold.t (g STRING, n BIGINT, PRIMARY KEY (g) NOT ENFORCED);\n"
                                                + "INSERT INTO gold.t SELECT grp, COUNT(*) FROM silver.`nope$changelog` GROUP BY grp"))
                .isInstanceOfSatisfying(
                        SqlException.class, e -> assertThat(e.code()).isEqualTo(Code.UNKNOWN_TABLE))
                .hasMessageStartingWith("g.sql:2:1: UNKNOWN_TABLE: ")
                .hasMessageContaining("nope$changelog");
        assertThatThrownBy(
                        () ->
                                plan(
                                        "INSERT INTO gold.missing SELECT grp, COUNT(*) FROM silver.`s$changelog` GROUP BY grp"))
                .isInstanceOfSatisfying(
                        SqlException.class, e -> assertThat(e.code()).isEqualTo(Code.UNKNOWN_TABLE))
                .hasMessageContaining("changeflow.gold.missing");
    }

    @Test
    void anUpdateStreamIntoATableWithoutKeyIsRefused() {
        silver();
        assertThatThrownBy(
                        () ->
                                plan(
                                        "CREATE TABLE gold.t (g STRING, n BIGINT);\n"
                                                + "INSERT INTO gold.t SELECT grp, COUNT(*) FROM silver.`s$changelog` GROUP BY grp"))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.UPDATES_WITHOUT_PRIMARY_KEY))
                .hasMessageStartingWith(
                        "g.sql:2:1: UPDATES_WITHOUT_PRIMARY_KEY: INSERT INTO changeflow.gold.t");
    }

    @Test
    void anInsertOnlyQueryIntoATableWithoutKeyIsAccepted() {
        Catalog catalog = silver();
        // a plain (append) read of the Iceberg table is insert-only
        plan(
                "CREATE TABLE gold.t (id BIGINT, grp STRING);\n"
                        + "INSERT INTO gold.t SELECT id, grp FROM silver.s");
        assertThat(catalog.loadTable(TableIdentifier.of("gold", "t")).properties())
                .doesNotContainKey(TableProperties.UPSERT_ENABLED);
    }

    @Test
    void aTargetWithPrimaryKeyBecomesAnUpsertTableOfFormatTwoOrLater() {
        Catalog catalog = silver();
        plan(
                "CREATE TABLE gold.t (g STRING, n BIGINT, PRIMARY KEY (g) NOT ENFORCED)"
                        + " WITH ('format-version'='1');\n"
                        + "INSERT INTO gold.t SELECT grp, COUNT(*) FROM silver.`s$changelog` GROUP BY grp");
        Table gold = catalog.loadTable(TableIdentifier.of("gold", "t"));
        assertThat(gold.properties()).containsEntry(TableProperties.UPSERT_ENABLED, "true");
        assertThat(TableUtil.formatVersion(gold)).isEqualTo(2);
        assertThat(gold.schema().identifierFieldNames()).containsExactly("g");
    }

    /**
     * The flag form's definition flags with a file and {@code --bounded} without a file are refused
     * before anything runs.
     */
    @Test
    void theCommandRefusesDefinitionFlagsWithAFile() throws Exception {
        Path file = warehouse.resolve("g.sql");
        Files.writeString(file, "INSERT INTO gold.t SELECT 1");
        assertThat(
                        Main.execute(
                                "gold",
                                "--warehouse",
                                warehouse.toString(),
                                file.toString(),
                                "--source",
                                "silver.s"))
                .isNotZero();
        assertThat(Main.execute("gold", "--warehouse", warehouse.toString())).isNotZero();
        assertThat(
                        Main.execute(
                                "gold",
                                "--warehouse",
                                warehouse.toString(),
                                "--bounded",
                                "--source",
                                "silver.s",
                                "--upsert-table",
                                "gold.t"))
                .isNotZero();
        // nothing was created or run
        assertThat(Files.exists(warehouse.resolve("gold"))).isFalse();
    }

    /**
     * {@code gold FILE.sql --cluster} without {@code --catalog}, or with {@code --bounded}, is
     * refused with a message before anything is read or run.
     */
    @Test
    void theClusterFormRefusesNoCatalogAndBounded() throws Exception {
        Path file = warehouse.resolve("g.sql");
        Files.writeString(file, "CREATE DATABASE IF NOT EXISTS gold;\nINSERT INTO gold.t SELECT 1");
        assertThat(
                        errorOf(
                                "gold",
                                "--warehouse",
                                warehouse.toString(),
                                "--cluster",
                                file.toString()))
                // coded since issue #16 (expectation changed on purpose: every flag error of
                // gold carries a code)
                .isEqualTo(
                        "error: INVALID_OPTION: --cluster needs an Iceberg catalog (--catalog"
                                + " type=rest --catalog uri=...)");
        assertThat(
                        errorOf(
                                "gold",
                                "--cluster",
                                "--bounded",
                                "--catalog",
                                "type=hadoop",
                                "--catalog",
                                "warehouse=" + warehouse.toUri(),
                                file.toString()))
                .isEqualTo(
                        "error: INVALID_OPTION: --bounded is for local runs: a --cluster run reads"
                                + " Silver until it is stopped");
        assertThat(Files.exists(warehouse.resolve("gold"))).isFalse();
    }

    /**
     * The cluster form refuses, before planning, a cluster without {@code
     * execution.checkpointing.dir} (where the reads record their Silver versions), a bounded run
     * and a negative starting version.
     */
    @Test
    void submitClusterNeedsACheckpointDirAndAnUnboundedStart() throws Exception {
        GoldSql.File file =
                GoldSql.parse(
                        "CREATE DATABASE IF NOT EXISTS gold;\nINSERT INTO gold.t SELECT 1",
                        "g.sql");
        GoldSql.Options o = new GoldSql.Options();
        ThrowingCallable submit =
                () ->
                        GoldSql.submitCluster(
                                file,
                                StreamExecutionEnvironment.getExecutionEnvironment(),
                                settings(),
                                o);
        assertThatThrownBy(submit)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--cluster with FILE.sql needs the cluster's execution.checkpointing.dir (a"
                                + " shared file system: the changelog reads record there which"
                                + " Silver version each checkpoint holds, for the Gold commits)");
        o.bounded = true;
        assertThatThrownBy(submit)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "--bounded is for local runs: a --cluster run reads Silver until it is"
                                + " stopped");
        o.bounded = false;
        o.startingVersion = -2L;
        assertThatThrownBy(submit)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--starting-version must be >= 0, got -2");
        assertThat(Files.exists(warehouse.resolve("gold"))).isFalse();
    }

    /**
     * M1, lock rule: maintenance with the embedded SQLite lock on a warehouse that is not a local
     * folder (here {@code s3://}, a REST catalog nobody listens to) is {@code INVALID_OPTION} at
     * the file's {@code SET 'changeflow.maintenance'}, on a cluster and locally alike, before the
     * catalog is reached or anything created; the same file with a lock URI passes the check (and
     * then fails reaching the catalog, a different error).
     */
    @Test
    void maintenanceOnAWarehouseThatIsNotLocalNeedsALockUri() {
        CatalogSettings s3 =
                CatalogSettings.of(
                        GoldSql.CATALOG,
                        Map.of(
                                "type", "rest",
                                "uri", "http://127.0.0.1:1/catalog",
                                "warehouse", "s3://bucket/wh"));
        String sql =
                String.join(
                        "\n",
                        "SET 'changeflow.maintenance-commit-count' = '5';",
                        "SET 'changeflow.maintenance' = 'true';",
                        "CREATE DATABASE IF NOT EXISTS gold;",
                        "INSERT INTO gold.t SELECT 1");
        String expected =
                "g.sql:2:1: INVALID_OPTION: in-job maintenance of the Gold tables needs a lock"
                        + " shared by every job that maintains them: the embedded SQLite lock"
                        + " works only for a local warehouse folder, and the warehouse of catalog"
                        + " 'changeflow' is 's3://bucket/wh'; add SET"
                        + " 'changeflow.maintenance-lock-jdbc-uri' = 'jdbc:...' (a JDBC database"
                        + " every TaskManager reaches, e.g. jdbc:postgresql://host/db)";
        org.apache.flink.configuration.Configuration conf =
                new org.apache.flink.configuration.Configuration();
        conf.set(
                org.apache.flink.configuration.CheckpointingOptions.CHECKPOINTS_DIRECTORY,
                warehouse.resolve("ck").toUri().toString());
        GoldSql.Options o = new GoldSql.Options();
        o.out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        o.warehouse = warehouse;
        GoldSql.File file = GoldSql.parse(sql, "g.sql");
        assertThatThrownBy(
                        () ->
                                GoldSql.submitCluster(
                                        file,
                                        StreamExecutionEnvironment.getExecutionEnvironment(conf),
                                        s3,
                                        o))
                .isInstanceOfSatisfying(
                        SqlException.class,
                        e -> assertThat(e.code()).isEqualTo(Code.INVALID_OPTION))
                .hasMessage(expected);
        assertThatThrownBy(() -> GoldSql.runLocal(file, s3, o))
                .isInstanceOf(SqlException.class)
                .hasMessage(expected);

        GoldSql.File withLock =
                GoldSql.parse(
                        "SET 'changeflow.maintenance-lock-jdbc-uri' = 'jdbc:sqlite:"
                                + warehouse.resolve("locks.db")
                                + "';\n"
                                + sql,
                        "g.sql");
        assertThatThrownBy(
                        () ->
                                GoldSql.submitCluster(
                                        withLock,
                                        StreamExecutionEnvironment.getExecutionEnvironment(conf),
                                        s3,
                                        o))
                .isNotInstanceOf(SqlException.class);
        assertThat(Files.exists(warehouse.resolve("gold"))).isFalse();
    }

    /**
     * G3 on a cluster: the Gold tables are emptied only for a start without state — not when the
     * configuration restores a savepoint, nor when a Gold table was already emptied for the same
     * fixed job id (the program running again for a job its JobManager recovers).
     */
    @Test
    void onAClusterOnlyAStartWithoutStateEmptiesGold() {
        Catalog catalog = silver();
        Table gold =
                catalog.createTable(
                        TableIdentifier.of("gold", "g"),
                        SILVER,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        Map<String, Table> tables = Map.of("gold.g", gold);
        org.apache.flink.configuration.Configuration fresh =
                new org.apache.flink.configuration.Configuration();
        assertThat(GoldSql.startsWithoutState(fresh, tables)).isTrue();
        org.apache.flink.configuration.Configuration savepoint = fresh.clone();
        savepoint.set(
                org.apache.flink.configuration.StateRecoveryOptions.SAVEPOINT_PATH,
                "s3://lake/savepoints/sp-1");
        assertThat(GoldSql.startsWithoutState(savepoint, tables)).isFalse();
        org.apache.flink.configuration.Configuration job = fresh.clone();
        job.set(
                org.apache.flink.configuration.PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID,
                "00000000000000000000000000000001");
        assertThat(GoldSql.startsWithoutState(job, tables)).isTrue();
        // the first run of that job empties the (new, snapshot-less) table and marks it
        assertThat(
                        GoldSqlStart.reset(
                                gold, Map.of("silver.s", 1L), "00000000000000000000000000000001"))
                .isTrue();
        gold.refresh();
        assertThat(gold.currentSnapshot().summary())
                .containsEntry(GoldSqlStart.RESET_JOB_ID, "00000000000000000000000000000001")
                .containsEntry(GoldSqlStart.RESET_PREFIX + "silver.s", "1");
        assertThat(GoldSql.startsWithoutState(job, tables)).isFalse();
        org.apache.flink.configuration.Configuration other = fresh.clone();
        other.set(
                org.apache.flink.configuration.PipelineOptionsInternal.PIPELINE_FIXED_JOB_ID,
                "00000000000000000000000000000002");
        assertThat(GoldSql.startsWithoutState(other, tables)).isTrue();
    }

    /** What {@link Main#execute} prints on stderr (its first line); asserts exit code 2. */
    private static String errorOf(String... args) {
        CapturedOutput.MainRun run = CapturedOutput.main(args);
        assertThat(run.code()).isEqualTo(2);
        return run.stderr().lines().findFirst().orElse("");
    }

    /** A negative --starting-version with a file is refused before anything runs (G3). */
    @Test
    void aNegativeStartingVersionIsRefused() throws Exception {
        Path file = warehouse.resolve("g.sql");
        Files.writeString(file, "CREATE DATABASE IF NOT EXISTS gold;\nINSERT INTO gold.t SELECT 1");
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.startingVersion = -1L;
        assertThatThrownBy(() -> GoldSql.runLocal(GoldSql.read(file), settings(), o))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--starting-version must be >= 0, got -1");
        assertThat(
                        Main.execute(
                                "gold",
                                "--warehouse",
                                warehouse.toString(),
                                "--starting-version",
                                "-1",
                                file.toString()))
                .isEqualTo(2);
        assertThat(Files.exists(warehouse.resolve("gold"))).isFalse();
    }

    /**
     * M1, M2: {@code SET 'changeflow.maintenance...'} gives the Gold tables' maintenance, read by
     * the flows file's parsers; later SETs win, RESET removes; off without any.
     */
    @Test
    void maintenanceSetsAreReadAsTheFlowOptions() {
        assertThat(GoldSql.maintenance(GoldSql.parse("INSERT INTO g.t SELECT 1", "g.sql")))
                .isEqualTo(TableMaintenanceOptions.off());
        TableMaintenanceOptions on =
                GoldSql.maintenance(
                        GoldSql.parse(
                                String.join(
                                        "\n",
                                        "SET 'changeflow.maintenance' = 'true';",
                                        "SET 'changeflow.maintenance-commit-count' = '3';",
                                        "SET 'changeflow.maintenance-expire-older-than' = '2d';",
                                        "SET 'changeflow.maintenance-manifest-count' = '7';",
                                        "SET 'changeflow.maintenance-manifest-count' = '9';",
                                        "SET 'changeflow.maintenance-orphans-older-than' = '5d';",
                                        "RESET 'changeflow.maintenance-orphans-older-than';",
                                        "SET 'parallelism.default' = '1';",
                                        "INSERT INTO g.t SELECT 1"),
                                "g.sql"));
        assertThat(on)
                .isEqualTo(
                        TableMaintenanceOptions.builder()
                                .enabled(true)
                                .commitCount(3)
                                .expireOlderThan(Duration.ofDays(2))
                                .manifestCount(9)
                                .build());
        assertThat(on.orphansOlderThan()).isEqualTo(Duration.ofDays(3));
    }

    /** M1: maintenance options set without {@code 'changeflow.maintenance'} would do nothing. */
    @Test
    void maintenanceSetsWithoutTheSwitchAreRefused() {
        assertThatThrownBy(
                        () ->
                                GoldSql.maintenance(
                                        GoldSql.parse(
                                                "SET 'changeflow.maintenance-commit-count' = '5';\n"
                                                        + "INSERT INTO g.t SELECT 1",
                                                "g.sql")))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "g.sql:1:1: INVALID_OPTION: SET 'changeflow.maintenance...':"
                                + " 'maintenance-commit-count' tunes in-job maintenance, which is"
                                + " off unless turned on (docs/semantics.md M1); add SET"
                                + " 'changeflow.maintenance' = 'true'");
    }

    @Test
    void badMaintenanceSetsAreInvalidOptionAtTheirStatement() {
        assertThatThrownBy(
                        () ->
                                GoldSql.maintenance(
                                        GoldSql.parse(
                                                "SET 'changeflow.maintenance' = 'yes';\n"
                                                        + "INSERT INTO g.t SELECT 1",
                                                "g.sql")))
                .isInstanceOf(SqlException.class)
                .hasMessage(
                        "g.sql:1:1: INVALID_OPTION: SET 'changeflow.maintenance': maintenance"
                                + " must be true or false, got 'yes'");
        assertThatThrownBy(
                        () ->
                                GoldSql.maintenance(
                                        GoldSql.parse(
                                                "SET 'changeflow.maintenance' = 'true';\n"
                                                        + "SET 'changeflow.maintenance-expire-olderthan'"
                                                        + " = '1d';\nINSERT INTO g.t SELECT 1",
                                                "g.sql")))
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith("g.sql:2:1: INVALID_OPTION: ")
                .hasMessageContaining("unknown maintenance option 'maintenance-expire-olderthan'");
        assertThatThrownBy(
                        () ->
                                GoldSql.maintenance(
                                        GoldSql.parse(
                                                "SET 'changeflow.maintenance-orphans-older-than'"
                                                        + " = '10min';\nINSERT INTO g.t SELECT 1",
                                                "g.sql")))
                .hasMessage(
                        "g.sql:1:1: INVALID_OPTION: SET"
                                + " 'changeflow.maintenance-orphans-older-than':"
                                + " maintenance-orphans-older-than must be 0 (off) or at least 1h"
                                + " (the job's files not committed yet are younger and must stay),"
                                + " got '10min'");
        assertThatThrownBy(
                        () ->
                                GoldSql.maintenance(
                                        GoldSql.parse(
                                                String.join(
                                                        "\n",
                                                        "SET 'changeflow.maintenance' = 'true';",
                                                        "SET 'changeflow.maintenance-commit-count' = '0';",
                                                        "SET 'changeflow.maintenance-data-file-count' = '0';",
                                                        "SET 'changeflow.maintenance-delete-file-count' = '0';",
                                                        "SET 'changeflow.maintenance-interval' = '0';",
                                                        "INSERT INTO g.t SELECT 1"),
                                                "g.sql")))
                .isInstanceOf(SqlException.class)
                .hasMessageStartingWith("g.sql:5:1: INVALID_OPTION: ")
                .hasMessageContaining("maintenance is on but every trigger is off");
    }

    /**
     * An unbounded local run (no maintenance) whose job is cancelled ends {@code runLocal}
     * normally, as {@link GoldSql.Options#onStart} promises, with the "Stopped" line (before, the
     * cancellation came out of {@code TableResult.await} as a failure).
     */
    @Test
    void aCancelledUnboundedRunEndsNormally() throws Exception {
        silver();
        Path file = warehouse.resolve("g.sql");
        Files.writeString(
                file,
                "CREATE TABLE gold.t (g STRING, n BIGINT, PRIMARY KEY (g) NOT ENFORCED);\n"
                        + "INSERT INTO gold.t SELECT grp, COUNT(*) FROM silver.`s$changelog`"
                        + " GROUP BY grp;\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.parallelism = 1;
        o.out = new PrintStream(out, true, StandardCharsets.UTF_8);
        o.onStart = job -> job.cancel();
        GoldSql.runLocal(GoldSql.read(file), settings(), o);
        assertThat(out.toString(StandardCharsets.UTF_8))
                .endsWith("Stopped: the Gold tables hold what the last checkpoint committed.\n");
    }

    /** Maintenance keeps the job running, so it cannot go with --bounded; nothing is written. */
    @Test
    void maintenanceWithBoundedIsRefused() throws Exception {
        Path file = warehouse.resolve("g.sql");
        Files.writeString(
                file,
                "SET 'changeflow.maintenance' = 'true';\nCREATE DATABASE IF NOT EXISTS gold;\n"
                        + "INSERT INTO gold.t SELECT 1");
        GoldSql.Options o = new GoldSql.Options();
        o.warehouse = warehouse;
        o.bounded = true;
        assertThatThrownBy(() -> GoldSql.runLocal(GoldSql.read(file), settings(), o))
                .isInstanceOf(SqlException.class)
                .hasMessageContaining("INVALID_OPTION")
                .hasMessageContaining("--bounded");
        assertThat(Files.exists(warehouse.resolve("gold"))).isFalse();
    }

    /**
     * G3: a bad INSERT is found when the file is planned, before the run empties the Gold tables
     * for their rebuild: {@code gold FILE.sql} exits with {@code INVALID_QUERY} at the statement
     * (at the column Flink names), and every Gold table keeps its rows and snapshots, the good
     * INSERT's table too.
     */
    @Test
    void aBadInsertFailsBeforeAnyGoldTableIsEmptied() throws Exception {
        Catalog catalog = silver();
        java.util.List<Table> gold = new java.util.ArrayList<>();
        for (String name : java.util.List.of("good", "bad")) {
            gold.add(goldTableWithOneRow(catalog, name));
        }
        String good =
                "INSERT INTO gold.good SELECT grp, COUNT(*), MAX(amount) FROM silver.`s$changelog`"
                        + " GROUP BY grp;\n";
        Map<String, String> bad =
                Map.of(
                        // MAX(grp) is a STRING, the column top a BIGINT
                        "types",
                        "INSERT INTO gold.bad SELECT grp, COUNT(*), MAX(grp)\n"
                                + "  FROM silver.`s$changelog` GROUP BY grp;\n",
                        "column",
                        "INSERT INTO gold.bad SELECT grp, COUNT(*), MAX(amout)\n"
                                + "  FROM silver.`s$changelog` GROUP BY grp;\n",
                        // a target without primary key is planned first (UPDATES_WITHOUT_...)
                        "keyless",
                        "CREATE TABLE gold.plain (g STRING, n BIGINT);\n"
                                + "INSERT INTO gold.plain SELECT grp, amout FROM silver.s;\n");
        Map<String, String> expected =
                Map.of(
                        "types",
                        ":2:1: INVALID_QUERY: INSERT INTO changeflow.gold.bad: Flink cannot plan"
                                + " it, so nothing was run and no Gold table was changed: Column"
                                + " types of query result and sink for 'changeflow.gold.bad' do"
                                + " not match.",
                        "column",
                        ":2:48: INVALID_QUERY: INSERT INTO changeflow.gold.bad: Flink cannot plan"
                                + " it, so nothing was run and no Gold table was changed: SQL"
                                + " validation failed. From line 1, column 48 to line 1, column"
                                + " 52: Column 'amout' not found in any table",
                        "keyless",
                        ":3:36: INVALID_QUERY: INSERT INTO changeflow.gold.plain: Flink cannot"
                                + " plan it, so nothing was run and no Gold table was changed: SQL"
                                + " validation failed. From line 1, column 36 to line 1, column"
                                + " 40: Column 'amout' not found in any table");
        for (String kind : java.util.List.of("types", "column", "keyless")) {
            java.util.List<java.util.List<Long>> before = new java.util.ArrayList<>();
            gold.forEach(t -> before.add(snapshotIds(catalog, t)));
            Path file = warehouse.resolve(kind + ".sql");
            Files.writeString(file, good + bad.get(kind));
            CapturedOutput.MainRun run =
                    CapturedOutput.main(
                            "gold",
                            "--warehouse",
                            warehouse.toString(),
                            "--bounded",
                            file.toString());
            for (int i = 0; i < gold.size(); i++) {
                Table t = catalog.loadTable(TableIdentifier.of("gold", i == 0 ? "good" : "bad"));
                assertThat(snapshotIds(catalog, t)).as(kind).isEqualTo(before.get(i));
                assertThat(dev.changeflow.sinks.iceberg.TableRows.toCsvLines(t))
                        .as(kind)
                        .containsExactly("x,2,9");
            }
            assertThat(run.stderr()).as(kind).startsWith("error: " + file + expected.get(kind));
            assertThat(run.code()).as(kind).isEqualTo(2);
        }
    }

    /**
     * Issue #16: a file that fails validation writes nothing. The tables and the database its own
     * CREATE statements made are dropped again; a Gold table that existed keeps its rows, its
     * snapshots and its properties (it is not made an upsert table); the database that existed
     * stays.
     */
    @Test
    void aFileThatFailsValidationLeavesNothingItCreated() throws Exception {
        Catalog catalog = silver();
        Table kept = goldTableWithOneRow(catalog, "kept");
        java.util.List<Long> before = snapshotIds(catalog, kept);
        Map<String, String> properties = Map.copyOf(kept.properties());
        Path file = warehouse.resolve("bad.sql");
        Files.writeString(
                file,
                "CREATE DATABASE IF NOT EXISTS fresh;\n"
                        + "CREATE TABLE fresh.counts (g STRING, n BIGINT, PRIMARY KEY (g) NOT ENFORCED);\n"
                        + "CREATE TABLE gold.made (g STRING, n BIGINT, top BIGINT,"
                        + " PRIMARY KEY (g) NOT ENFORCED);\n"
                        + "INSERT INTO fresh.counts SELECT grp, COUNT(*) FROM silver.`s$changelog`"
                        + " GROUP BY grp;\n"
                        + "INSERT INTO gold.kept SELECT grp, COUNT(*), MAX(amount)"
                        + " FROM silver.`s$changelog` GROUP BY grp;\n"
                        + "INSERT INTO gold.made SELECT grp, COUNT(*), MAX(amout)"
                        + " FROM silver.`s$changelog` GROUP BY grp;\n");
        CapturedOutput.MainRun run =
                CapturedOutput.main(
                        "gold", "--warehouse", warehouse.toString(), "--bounded", file.toString());
        assertThat(run.stderr())
                .startsWith(
                        "error: "
                                + file
                                + ":6:49: INVALID_QUERY: INSERT INTO changeflow.gold.made: Flink"
                                + " cannot plan it, so nothing was run and no Gold table was"
                                + " changed: SQL validation failed. From line 1, column 49 to line"
                                + " 1, column 53: Column 'amout' not found in any table");
        assertThat(run.code()).isEqualTo(2);
        Catalog after = settings().open();
        assertThat(after.tableExists(TableIdentifier.of("fresh", "counts"))).isFalse();
        assertThat(after.tableExists(TableIdentifier.of("gold", "made"))).isFalse();
        assertThat(((SupportsNamespaces) after).namespaceExists(Namespace.of("fresh"))).isFalse();
        assertThat(((SupportsNamespaces) after).namespaceExists(Namespace.of("gold"))).isTrue();
        kept = after.loadTable(TableIdentifier.of("gold", "kept"));
        assertThat(snapshotIds(after, kept)).isEqualTo(before);
        assertThat(kept.properties()).isEqualTo(properties);
        assertThat(kept.properties()).doesNotContainKey(TableProperties.UPSERT_ENABLED);
        assertThat(dev.changeflow.sinks.iceberg.TableRows.toCsvLines(kept))
                .containsExactly("x,2,9");
    }

    /**
     * M1, G3: a lock database that cannot be opened (here a JDBC URI no driver takes) is found when
     * the maintenance graphs are attached, after the file is planned and before the run empties the
     * Gold tables: {@code INVALID_OPTION} at the {@code SET
     * 'changeflow.maintenance-lock-jdbc-uri'}, exit code 2, and the Gold table keeps its row and
     * snapshots.
     */
    @Test
    void aLockDatabaseThatCannotBeOpenedFailsBeforeAnyGoldTableIsEmptied() throws Exception {
        Catalog catalog = silver();
        Table good = goldTableWithOneRow(catalog, "good");
        java.util.List<Long> before = snapshotIds(catalog, good);
        Path file = warehouse.resolve("locked.sql");
        Files.writeString(
                file,
                "SET 'changeflow.maintenance' = 'true';\n"
                        + "SET 'changeflow.maintenance-lock-jdbc-uri' = 'jdbc:nosuchdb://host/locks';\n"
                        + "INSERT INTO gold.good SELECT grp, COUNT(*), MAX(amount)"
                        + " FROM silver.`s$changelog` GROUP BY grp;\n");
        CapturedOutput.MainRun run =
                CapturedOutput.main("gold", "--warehouse", warehouse.toString(), file.toString());
        assertThat(run.stderr())
                .startsWith(
                        "error: "
                                + file
                                + ":2:1: INVALID_OPTION: cannot open the maintenance lock database"
                                + " jdbc:nosuchdb://host/locks for gold.good: ")
                .contains("; nothing was run and no Gold table was changed");
        assertThat(run.code()).isEqualTo(2);
        assertThat(snapshotIds(catalog, good)).isEqualTo(before);
        assertThat(dev.changeflow.sinks.iceberg.TableRows.toCsvLines(good))
                .containsExactly("x,2,9");
    }

    /** A Gold table {@code gold.<name>} (g STRING key, n BIGINT, top BIGINT) holding x,2,9. */
    private static Table goldTableWithOneRow(Catalog catalog, String name) throws IOException {
        Schema goldSchema =
                new Schema(
                        java.util.List.of(
                                Types.NestedField.required(1, "g", Types.StringType.get()),
                                Types.NestedField.optional(2, "n", Types.LongType.get()),
                                Types.NestedField.optional(3, "top", Types.LongType.get())),
                        Set.of(1));
        Table t =
                catalog.createTable(
                        TableIdentifier.of("gold", name),
                        goldSchema,
                        PartitionSpec.unpartitioned(),
                        Map.of(TableProperties.FORMAT_VERSION, "2"));
        org.apache.iceberg.data.Record r = org.apache.iceberg.data.GenericRecord.create(goldSchema);
        r.setField("g", "x");
        r.setField("n", 2L);
        r.setField("top", 9L);
        org.apache.iceberg.io.DataWriter<org.apache.iceberg.data.Record> writer =
                new org.apache.iceberg.data.GenericFileWriterFactory.Builder(t)
                        .build()
                        .newDataWriter(
                                org.apache.iceberg.io.OutputFileFactory.builderFor(t, 1, 1)
                                        .format(org.apache.iceberg.FileFormat.PARQUET)
                                        .build()
                                        .newOutputFile(t.spec(), null),
                                t.spec(),
                                null);
        try (writer) {
            writer.write(r);
        }
        t.newAppend().appendFile(writer.toDataFile()).commit();
        return t;
    }

    private static java.util.List<Long> snapshotIds(Catalog catalog, Table t) {
        java.util.List<Long> ids = new java.util.ArrayList<>();
        t.refresh();
        t.snapshots().forEach(snap -> ids.add(snap.snapshotId()));
        return ids;
    }
}
