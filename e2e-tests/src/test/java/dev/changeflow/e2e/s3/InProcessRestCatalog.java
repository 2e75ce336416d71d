package dev.changeflow.e2e.s3;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * An Iceberg REST catalog server in the test JVM: Iceberg's own {@link RESTCatalogServlet} / {@link
 * RESTCatalogAdapter} (the reference implementation of the REST catalog protocol, from {@code
 * iceberg-core}'s test jar) on Jetty 12, serving a {@link JdbcCatalog} kept in a SQLite file. It
 * listens on {@code 127.0.0.1} at a free port; clients use {@code type=rest, uri=}{@link #uri()}.
 * Table metadata and data go wherever the backend's {@code warehouse} and {@code io-impl} say (for
 * example {@code s3://bucket/warehouse} with {@code S3FileIO}).
 */
public final class InProcessRestCatalog implements AutoCloseable {
    private final JdbcCatalog backend;
    private final Server server;

    private InProcessRestCatalog(JdbcCatalog backend, Server server) {
        this.backend = backend;
        this.server = server;
    }

    /**
     * Starts the server.
     *
     * @param dir folder for the SQLite database ({@code catalog.db})
     * @param backendProperties Iceberg catalog properties of the backend ({@code warehouse}, {@code
     *     io-impl}, {@code s3.*}, ...); the JDBC {@code uri} is set here
     * @throws Exception when Jetty cannot start
     */
    public static InProcessRestCatalog start(Path dir, Map<String, String> backendProperties)
            throws Exception {
        Map<String, String> props = new HashMap<>(backendProperties);
        props.put(
                CatalogProperties.URI, "jdbc:sqlite:" + dir.resolve("catalog.db").toAbsolutePath());
        props.put("jdbc.schema-version", "V1");
        // parallel commits of several tables queue on SQLite's write lock instead of failing
        props.put("jdbc.busy_timeout", "30000");
        JdbcCatalog backend = new JdbcCatalog();
        backend.setConf(new Configuration());
        backend.initialize("rest_backend", props);

        ServletContextHandler context = new ServletContextHandler();
        context.addServlet(
                new ServletHolder(new RESTCatalogServlet(new RESTCatalogAdapter(backend))), "/*");
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            backend.close();
            throw e;
        }
        return new InProcessRestCatalog(backend, server);
    }

    /** {@code http://127.0.0.1:<port>}, the REST catalog's base URI. */
    public String uri() {
        return "http://127.0.0.1:" + ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    @Override
    public void close() throws Exception {
        try {
            server.stop();
        } finally {
            backend.close();
        }
    }
}
