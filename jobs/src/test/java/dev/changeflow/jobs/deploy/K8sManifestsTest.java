package dev.changeflow.jobs.deploy;

import dev.changeflow.jobs.cli.GoldCommand;
import dev.changeflow.jobs.cli.IngestCommand;
import dev.changeflow.jobs.cli.Main;
import dev.changeflow.jobs.config.FlowsFile;
import dev.changeflow.jobs.config.IngestConfig;
import dev.changeflow.jobs.gold.GoldFlags;
import dev.changeflow.jobs.gold.GoldSql;
import dev.changeflow.jobs.sql.SqlScript;
import dev.changeflow.sinks.iceberg.CatalogSettings;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import com.networknt.schema.Error;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.FallbackKey;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Offline checks of {@code deploy/k8s} (no cluster here): every FlinkDeployment — in the base and
 * in the {@code dev} / {@code prod} overlays assembled by {@code kubectl kustomize} — validates
 * against the Flink Kubernetes Operator's CRD schema with every object closed to unknown fields (a
 * typo fails), every {@code flinkConfiguration} key is a Flink 2.1 {@link ConfigOption} read from
 * the Flink jars, and the Dockerfile builds on Flink 2.1.1 / Java 17 with the S3, GCS and Azure
 * file-system plugins and the jar the {@code cluster-jar} profile builds.
 */
class K8sManifestsTest {
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path repo;
    private static Schema flinkDeployment;
    private static TreeSet<String> flinkKeys;

    @BeforeAll
    static void load() throws Exception {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        repo = p;
        Path crd =
                repo.resolveSibling("shared")
                        .resolve("k8s-crds")
                        .resolve("flinkdeployments.flink.apache.org-v1.yml");
        if (!Files.exists(crd)) {
            String msg =
                    "needs the operator's CRD at " + crd + " (../shared/k8s-crds beside the clone)";
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException(msg);
            }
            Assumptions.abort(msg);
        }
        JsonNode schema = null;
        for (JsonNode version : YAML.readTree(crd.toFile()).path("spec").path("versions")) {
            if (version.path("name").asText().equals("v1beta1")) {
                schema = version.path("schema").path("openAPIV3Schema");
            }
        }
        assertThat(schema).as("v1beta1 schema in the CRD").isNotNull();
        // Kubernetes adds these to every object; the CRD schema leaves them out
        ObjectNode props = (ObjectNode) schema.path("properties");
        props.putObject("apiVersion")
                .put("type", "string")
                .putArray("enum")
                .add("flink.apache.org/v1beta1");
        props.putObject("kind").put("type", "string").putArray("enum").add("FlinkDeployment");
        props.putObject("metadata").put("type", "object");
        close((ObjectNode) schema);
        flinkDeployment =
                SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_4)
                        .getSchema(JSON.writeValueAsString(schema));
        flinkKeys = flinkConfigKeys();
    }

    /** Closes every object schema to unknown fields unless it says it keeps them. */
    static void close(ObjectNode node) {
        if (node.has("properties")
                && !node.has("additionalProperties")
                && !node.path("x-kubernetes-preserve-unknown-fields").asBoolean(false)) {
            node.put("additionalProperties", false);
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            JsonNode child = it.next().getValue();
            if (child.isObject()) {
                close((ObjectNode) child);
            } else if (child.isArray()) {
                child.forEach(
                        c -> {
                            if (c.isObject()) {
                                close((ObjectNode) c);
                            }
                        });
            }
        }
    }

    /**
     * Keys (and fallback keys) of every public static ConfigOption in Flink's *Options classes on
     * the classpath.
     */
    static TreeSet<String> flinkConfigKeys() throws Exception {
        TreeSet<String> keys = new TreeSet<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.contains("flink-") || !entry.endsWith(".jar")) {
                continue;
            }
            try (JarFile jar = new JarFile(entry)) {
                for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                    String name = e.nextElement().getName();
                    if (!name.startsWith("org/apache/flink/")
                            || !name.endsWith("Options.class")
                            || name.contains("$")) {
                        continue;
                    }
                    Class<?> c;
                    try {
                        c =
                                Class.forName(
                                        name.replace('/', '.').replace(".class", ""),
                                        false,
                                        K8sManifestsTest.class.getClassLoader());
                    } catch (Throwable t) {
                        continue;
                    }
                    for (Field f : c.getFields()) {
                        if (Modifier.isStatic(f.getModifiers())
                                && ConfigOption.class.isAssignableFrom(f.getType())) {
                            try {
                                ConfigOption<?> o = (ConfigOption<?>) f.get(null);
                                keys.add(o.key());
                                for (FallbackKey k : o.fallbackKeys()) {
                                    keys.add(k.getKey());
                                }
                            } catch (Throwable ignored) {
                                // a class whose static init needs what this classpath lacks
                            }
                        }
                    }
                }
            }
        }
        return keys;
    }

    static List<JsonNode> documents(String yaml) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (YAMLParser parser = new YAMLFactory().createParser(yaml)) {
            for (Iterator<JsonNode> it = YAML.readValues(parser, JsonNode.class); it.hasNext(); ) {
                JsonNode n = it.next();
                if (n != null && !n.isNull()) {
                    docs.add(n);
                }
            }
        }
        return docs;
    }

    static List<String> problems(JsonNode deployment) {
        List<String> out = new ArrayList<>();
        for (Error e : flinkDeployment.validate(deployment)) {
            out.add(e.toString());
        }
        deployment
                .path("spec")
                .path("flinkConfiguration")
                .fieldNames()
                .forEachRemaining(
                        k -> {
                            if (!flinkKeys.contains(k)) {
                                out.add(
                                        "flinkConfiguration key '"
                                                + k
                                                + "' is not a Flink 2.1 option");
                            }
                        });
        return out;
    }

    static List<JsonNode> deployments(List<JsonNode> docs) {
        List<JsonNode> out = new ArrayList<>();
        docs.stream()
                .filter(d -> d.path("kind").asText().equals("FlinkDeployment"))
                .forEach(out::add);
        return out;
    }

    @Test
    void baseManifestsValidate() throws Exception {
        List<JsonNode> found = new ArrayList<>();
        try (var files = Files.list(repo.resolve("deploy/k8s/base"))) {
            for (Path f : (Iterable<Path>) files.sorted()::iterator) {
                if (f.getFileName().toString().equals("kustomization.yaml")) {
                    continue;
                }
                found.addAll(deployments(documents(Files.readString(f))));
            }
        }
        assertThat(found)
                .extracting(d -> d.path("metadata").path("name").asText())
                .containsExactly("changeflow-gold", "changeflow-gold-sql", "changeflow-ingest");
        for (JsonNode d : found) {
            assertThat(problems(d)).as(d.path("metadata").path("name").asText()).isEmpty();
            assertThat(d.path("spec").path("flinkVersion").asText()).isEqualTo("v2_1");
            assertThat(d.path("spec").path("job").path("upgradeMode").asText())
                    .isEqualTo("savepoint");
            assertThat(
                            d.path("spec")
                                    .path("flinkConfiguration")
                                    .path("state.backend.type")
                                    .asText())
                    .isEqualTo("rocksdb");
        }
    }

    @Test
    void overlaysAssembledByKustomizeValidate() throws Exception {
        for (String overlay : List.of("dev", "prod")) {
            String out = kustomize(repo.resolve("deploy/k8s/overlays").resolve(overlay));
            List<JsonNode> found = deployments(documents(out));
            assertThat(found)
                    .as(overlay)
                    .extracting(d -> d.path("metadata").path("name").asText())
                    .containsExactlyInAnyOrder(
                            "changeflow-ingest", "changeflow-gold", "changeflow-gold-sql");
            for (JsonNode d : found) {
                assertThat(problems(d)).as(overlay).isEmpty();
            }
        }
    }

    @Test
    void aTypoFailsTheCheck() throws Exception {
        JsonNode d = baseDeployment("ingest-flinkdeployment.yaml");
        ObjectNode typo = d.deepCopy();
        ((ObjectNode) typo.path("spec").path("job")).put("upgradMode", "savepoint");
        assertThat(problems(typo)).anySatisfy(p -> assertThat(p).contains("upgradMode"));
        ObjectNode badKey = d.deepCopy();
        ((ObjectNode) badKey.path("spec").path("flinkConfiguration"))
                .put("state.backend.typ", "rocksdb");
        assertThat(problems(badKey))
                .containsExactly(
                        "flinkConfiguration key 'state.backend.typ' is not a Flink 2.1 option");
        ObjectNode badEnum = d.deepCopy();
        ((ObjectNode) badEnum.path("spec")).put("flinkVersion", "v2_9");
        assertThat(problems(badEnum)).isNotEmpty();
    }

    @Test
    void dockerfileBuildsOnFlink211Java17WithTheObjectStorePluginsAndTheClusterJar()
            throws Exception {
        String docker = Files.readString(repo.resolve("deploy/k8s/Dockerfile"));
        assertThat(docker).contains("\nFROM flink:2.1.1-java17\n");
        for (String plugin : List.of("s3-fs-hadoop", "gs-fs-hadoop", "azure-fs-hadoop")) {
            assertThat(docker)
                    .contains(
                            "/opt/flink/opt/flink-"
                                    + plugin
                                    + "-2.1.1.jar /opt/flink/plugins/"
                                    + plugin
                                    + "/");
        }
        String version = System.getProperty("changeflow.version");
        assertThat(version).as("project version passed by surefire").isNotBlank();
        assertThat(docker)
                .contains(
                        "COPY jobs/target/changeflow-jobs-"
                                + version
                                + "-cluster.jar /opt/flink/usrlib/changeflow.jar");
        String pom = Files.readString(repo.resolve("jobs/pom.xml"));
        assertThat(pom).contains("<shadedClassifierName>cluster</shadedClassifierName>");
        JsonNode d = baseDeployment("ingest-flinkdeployment.yaml");
        assertThat(d.path("spec").path("job").path("jarURI").asText())
                .isEqualTo("local:///opt/flink/usrlib/changeflow.jar");
    }

    @Test
    void jobArgumentsParseWithTheLaunchersOwnParser() throws Exception {
        JsonNode config = baseConfig();
        JsonNode d = baseDeployment("ingest-flinkdeployment.yaml");
        assertThat(d.path("spec").path("job").path("entryClass").asText())
                .isEqualTo(Main.class.getName());
        picocli.CommandLine.ParseResult parsed = parseJobArgs(d, config);
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("ingest");
        IngestCommand ingest = (IngestCommand) parsed.subcommand().commandSpec().userObject();
        IngestConfig cfg =
                FlowsFile.parse(config.path("flows.yaml").asText(), "changeflow-config/flows.yaml");
        ingest.applyOverrides(cfg);
        assertThat(cfg.kafka.bootstrapServers).isEqualTo("kafka-bootstrap.kafka.svc:9092");
        assertThat(cfg.kafka.topicPattern).isEqualTo("pgbench\\.public\\..*");
        assertThat(cfg.catalog)
                .containsEntry("type", "rest")
                .containsEntry("uri", "http://iceberg-rest.lakehouse.svc:8181");
        assertThat(cfg.flows)
                .extracting(f -> f.table)
                .containsExactly(
                        "pgbench_accounts",
                        "pgbench_branches",
                        "pgbench_tellers",
                        "pgbench_history");
    }

    /** The first FlinkDeployment of {@code deploy/k8s/base/<file>}. */
    private static JsonNode baseDeployment(String file) throws IOException {
        return deployments(documents(Files.readString(repo.resolve("deploy/k8s/base/" + file))))
                .get(0);
    }

    /** The {@code data} of the base ConfigMap ({@code deploy/k8s/base/changeflow-config.yaml}). */
    private static JsonNode baseConfig() throws IOException {
        return documents(Files.readString(repo.resolve("deploy/k8s/base/changeflow-config.yaml")))
                .get(0)
                .path("data");
    }

    /** {@code deployment}'s job arguments, expanded from {@code config}, parsed by the launcher. */
    private static picocli.CommandLine.ParseResult parseJobArgs(
            JsonNode deployment, JsonNode config) {
        return new picocli.CommandLine(new Main())
                .parseArgs(expandedArgs(deployment, config).toArray(new String[0]));
    }

    /**
     * The job arguments as the container sees them: Kubernetes expands $(VAR) from the ConfigMap.
     */
    private static List<String> expandedArgs(JsonNode deployment, JsonNode config) {
        List<String> args = new ArrayList<>();
        for (JsonNode a : deployment.path("spec").path("job").path("args")) {
            Matcher m = Pattern.compile("\\$\\(([A-Z_]+)\\)").matcher(a.asText());
            StringBuilder out = new StringBuilder();
            while (m.find()) {
                assertThat(config.has(m.group(1))).as("ConfigMap key " + m.group(1)).isTrue();
                m.appendReplacement(
                        out, Matcher.quoteReplacement(config.path(m.group(1)).asText()));
            }
            m.appendTail(out);
            args.add(out.toString());
        }
        return args;
    }

    @Test
    void goldJobArgumentsParseWithTheLaunchersOwnParser() throws Exception {
        JsonNode config = baseConfig();
        JsonNode d = baseDeployment("gold-flinkdeployment.yaml");
        assertThat(d.path("spec").path("job").path("entryClass").asText())
                .isEqualTo(Main.class.getName());
        picocli.CommandLine.ParseResult parsed = parseJobArgs(d, config);
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("gold");
        GoldCommand gold = (GoldCommand) parsed.subcommand().commandSpec().userObject();
        // the flag form compiles to Gold SQL (GoldFlags): its definition as the flags give it
        GoldFlags spec = gold.definition();
        assertThat(spec.name()).isEqualTo("gold-pgbench_accounts");
        assertThat(spec.source().toString()).isEqualTo("public.pgbench_accounts");
        assertThat(spec.upsert().target().toString()).isEqualTo("gold.accounts");
        assertThat(spec.upsert().columns()).isEqualTo("aid, bid, abalance");
        assertThat(spec.upsert().where()).isEqualTo("abalance <> 0");
        assertThat(spec.aggregate().groupBy()).containsExactly("bid");
        assertThat(spec.aggregate().aggregates())
                .extracting(Object::toString)
                .containsExactly("balance_total=SUM(abalance)", "account_count=COUNT(*)");
        assertThat(d.path("spec").path("job").path("upgradeMode").asText()).isEqualTo("savepoint");
    }

    /**
     * The Gold SQL deployment runs {@code gold FILE.sql --cluster} on the file the ConfigMap's
     * {@code gold.sql} is mounted as: its arguments parse with the launcher's own parser, the file
     * argument is the mounted path, and the mounted SQL is a valid Gold file (G2).
     */
    @Test
    void goldSqlJobArgumentsParseAndNameTheMountedFile(@TempDir Path tmp) throws Exception {
        JsonNode config = baseConfig();
        JsonNode d = baseDeployment("gold-sql-flinkdeployment.yaml");
        assertThat(d.path("spec").path("job").path("entryClass").asText())
                .isEqualTo(Main.class.getName());
        picocli.CommandLine.ParseResult parsed = parseJobArgs(d, config);
        picocli.CommandLine.ParseResult gold = parsed.subcommand();
        assertThat(gold.commandSpec().name()).isEqualTo("gold");
        assertThat(gold.commandSpec().userObject()).isInstanceOf(GoldCommand.class);
        Path file = gold.matchedPositional(0).getValue();
        assertThat(file).isEqualTo(Path.of("/opt/changeflow/sql/gold.sql"));
        assertThat(gold.hasMatchedOption("--cluster")).isTrue();
        assertThat(gold.hasMatchedOption("--bounded")).isFalse();
        assertThat(gold.hasMatchedOption("--source")).isFalse();
        Map<String, String> catalog = gold.matchedOptionValue("--catalog", Map.of());
        assertThat(catalog)
                .containsEntry("type", "rest")
                .containsEntry("uri", "http://iceberg-rest.lakehouse.svc:8181")
                .containsEntry("warehouse", "s3://lakehouse/warehouse")
                .containsEntry("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
        // the file argument is where the pods see the ConfigMap's gold.sql
        JsonNode pod = d.path("spec").path("podTemplate").path("spec");
        JsonNode mount = pod.path("containers").get(0).path("volumeMounts").get(0);
        JsonNode volume = pod.path("volumes").get(0);
        assertThat(volume.path("name").asText()).isEqualTo(mount.path("name").asText());
        assertThat(volume.path("configMap").path("name").asText()).isEqualTo("changeflow-config");
        JsonNode item = volume.path("configMap").path("items").get(0);
        assertThat(Path.of(mount.path("mountPath").asText()).resolve(item.path("path").asText()))
                .isEqualTo(file);
        String sql = config.path(item.path("key").asText()).asText();
        GoldSql.File parsedSql = GoldSql.parse(sql, "changeflow-config/gold.sql");
        assertThat(parsedSql.inserts())
                .extracting(SqlScript.Statement::target)
                .containsExactly(
                        List.of("gold", "branch_balances"), List.of("gold", "teller_branches"));
        // and it plans over Silver tables of the pgbench shape (as ingest writes them)
        Catalog silver = CatalogSettings.localHadoop(tmp.toAbsolutePath()).open();
        ((SupportsNamespaces) silver).createNamespace(Namespace.of("public"));
        Map<String, org.apache.iceberg.Schema> pgbench =
                Map.of(
                        "pgbench_accounts", pgbenchSchema("aid", "bid", "abalance"),
                        "pgbench_branches", pgbenchSchema("bid", "bbalance"),
                        "pgbench_tellers", pgbenchSchema("tid", "bid", "tbalance"));
        pgbench.forEach(
                (name, schema) ->
                        silver.createTable(
                                TableIdentifier.of("public", name),
                                schema,
                                PartitionSpec.unpartitioned(),
                                Map.of(TableProperties.FORMAT_VERSION, "2")));
        GoldSql.plan(
                parsedSql,
                StreamTableEnvironment.create(
                        StreamExecutionEnvironment.getExecutionEnvironment(),
                        EnvironmentSettings.inStreamingMode()),
                CatalogSettings.localHadoop(tmp.toAbsolutePath()),
                false,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertThat(silver.loadTable(TableIdentifier.of("gold", "branch_balances")).properties())
                .containsEntry(TableProperties.UPSERT_ENABLED, "true");
        // a cluster run needs a checkpoint dir (the source version log) and restores savepoints
        assertThat(
                        d.path("spec")
                                .path("flinkConfiguration")
                                .path("execution.checkpointing.dir")
                                .asText())
                .isEqualTo("s3://lakehouse/flink/checkpoints/changeflow-gold-sql");
        assertThat(d.path("spec").path("job").path("upgradeMode").asText()).isEqualTo("savepoint");
    }

    /**
     * A pgbench table's schema as ingest writes it: {@code key} (INT, required, the identifier
     * field, id 1), then {@code intColumns} (nullable INT, ids 2…), then {@code filler} (nullable
     * STRING).
     */
    private static org.apache.iceberg.Schema pgbenchSchema(String key, String... intColumns) {
        List<Types.NestedField> fields = new ArrayList<>();
        fields.add(Types.NestedField.required(1, key, Types.IntegerType.get()));
        for (String column : intColumns) {
            fields.add(
                    Types.NestedField.optional(fields.size() + 1, column, Types.IntegerType.get()));
        }
        fields.add(Types.NestedField.optional(fields.size() + 1, "filler", Types.StringType.get()));
        return new org.apache.iceberg.Schema(fields, Set.of(1));
    }

    @Test
    void deployPrintRendersAValidDeploymentWhoseArgumentsParse() throws Exception {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        int code;
        try {
            System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
            code =
                    Main.execute(
                            "deploy",
                            "--print",
                            "--flows",
                            repo.resolve("examples/pgbench-flows.yaml").toString(),
                            "--name",
                            "pgbench-ingest",
                            "--namespace",
                            "data",
                            "--image",
                            "registry.example.com/changeflow:0.1.0",
                            "--state-dir",
                            "s3://lake/flink/",
                            "--kafka-bootstrap",
                            "kafka:9092",
                            "--topic-pattern",
                            "pgbench\\.public\\..*",
                            "--catalog",
                            "type=rest",
                            "--catalog",
                            "uri=http://rest:8181",
                            "--flink-conf",
                            "execution.checkpointing.interval=1min");
        } finally {
            System.setOut(stdout);
        }
        assertThat(code).isZero();
        List<JsonNode> docs = documents(buf.toString(StandardCharsets.UTF_8));
        assertThat(docs)
                .extracting(n -> n.path("kind").asText())
                .containsExactly("ConfigMap", "FlinkDeployment");
        assertThat(docs.get(0).path("data").path("flows.yaml").asText())
                .isEqualTo(Files.readString(repo.resolve("examples/pgbench-flows.yaml")));
        JsonNode d = docs.get(1);
        assertThat(problems(d)).isEmpty();
        JsonNode conf = d.path("spec").path("flinkConfiguration");
        assertThat(conf.path("execution.checkpointing.dir").asText())
                .isEqualTo("s3://lake/flink/checkpoints/pgbench-ingest");
        assertThat(conf.path("execution.checkpointing.savepoint-dir").asText())
                .isEqualTo("s3://lake/flink/savepoints/pgbench-ingest");
        assertThat(conf.path("execution.checkpointing.interval").asText()).isEqualTo("1min");
        List<String> args = new ArrayList<>();
        d.path("spec").path("job").path("args").forEach(a -> args.add(a.asText()));
        assertThat(args)
                .containsExactly(
                        "ingest",
                        "--cluster",
                        "--flows",
                        "/opt/changeflow/flows/flows.yaml",
                        "--kafka-bootstrap",
                        "kafka:9092",
                        "--topic-pattern",
                        "pgbench\\.public\\..*",
                        "--catalog",
                        "type=rest",
                        "--catalog",
                        "uri=http://rest:8181");
        picocli.CommandLine.ParseResult parsed =
                new picocli.CommandLine(new Main()).parseArgs(args.toArray(new String[0]));
        IngestCommand ingest = (IngestCommand) parsed.subcommand().commandSpec().userObject();
        IngestConfig cfg =
                FlowsFile.parse(docs.get(0).path("data").path("flows.yaml").asText(), "flows.yaml");
        ingest.applyOverrides(cfg);
        assertThat(cfg.kafka.topicPattern).isEqualTo("pgbench\\.public\\..*");
    }

    @Test
    void deployPrintNamesWhatIsMissing() {
        assertThat(
                        Main.execute(
                                "deploy",
                                "--print",
                                "--flows",
                                repo.resolve("examples/pgbench-flows.yaml").toString(),
                                "--state-dir",
                                "s3://lake/flink",
                                "--kafka-bootstrap",
                                "kafka:9092",
                                "--catalog",
                                "type=rest"))
                .isEqualTo(2);
    }

    private static String kustomize(Path dir) throws Exception {
        Process p;
        try {
            p =
                    new ProcessBuilder("kubectl", "kustomize", dir.toString())
                            .redirectErrorStream(true)
                            .start();
        } catch (IOException e) {
            String msg = "needs kubectl (kubectl kustomize) to assemble the overlays";
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException(msg, e);
            }
            Assumptions.abort(msg);
            return "";
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }
}
