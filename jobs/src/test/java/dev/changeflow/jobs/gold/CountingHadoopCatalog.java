package dev.changeflow.jobs.gold;

import org.apache.iceberg.hadoop.HadoopCatalog;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test catalog ({@code catalog-impl}): Iceberg's Hadoop catalog that counts how many instances
 * were initialized and how many closed, so a test can show that a session closes what it opened.
 */
public class CountingHadoopCatalog extends HadoopCatalog {
    static final AtomicInteger OPENED = new AtomicInteger();
    static final AtomicInteger CLOSED = new AtomicInteger();

    @Override
    public void initialize(String name, Map<String, String> properties) {
        super.initialize(name, properties);
        OPENED.incrementAndGet();
    }

    @Override
    public void close() throws IOException {
        CLOSED.incrementAndGet();
        super.close();
    }
}
