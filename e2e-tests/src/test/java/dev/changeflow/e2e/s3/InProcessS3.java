package dev.changeflow.e2e.s3;

import org.gaul.s3proxy.AuthenticationType;
import org.gaul.s3proxy.S3Proxy;
import org.jclouds.ContextBuilder;
import org.jclouds.blobstore.BlobStore;
import org.jclouds.blobstore.BlobStoreContext;
import org.jclouds.blobstore.domain.PageSet;
import org.jclouds.blobstore.domain.StorageMetadata;
import org.jclouds.blobstore.options.ListContainerOptions;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * An S3-compatible object store in the test JVM: S3Proxy ({@code org.gaul:s3proxy}) over jclouds'
 * in-memory {@code transient} blob store, listening on {@code 127.0.0.1} at a free port, with AWS
 * signature V2/V4 authentication for one access key. One bucket is created at start. Clients reach
 * it with path-style requests ({@code http://127.0.0.1:<port>/<bucket>/<key>}).
 *
 * <p>The AWS SDK 2.x (Iceberg's {@code S3FileIO}) must send checksums only when S3 requires them
 * ({@code aws.requestChecksumCalculation} / {@code aws.responseChecksumValidation} = {@code
 * when_required}, see {@code ../shared/stack.md}); {@link #awsSdkSystemProperties()} lists them.
 */
public final class InProcessS3 implements AutoCloseable {
    /** Access key id the server accepts (test-only, not a secret). */
    public static final String ACCESS_KEY = "changeflow-test";

    /** Secret key the server accepts (test-only, not a secret). */
    public static final String SECRET_KEY = "changeflow-test-secret";

    /** Region the clients sign for (S3Proxy accepts any). */
    public static final String REGION = "us-east-1";

    private final String bucket;
    private BlobStoreContext context;
    private S3Proxy proxy;

    private InProcessS3(String bucket) {
        this.bucket = bucket;
    }

    /**
     * Starts the server with an empty {@code bucket}.
     *
     * @throws IllegalStateException when it does not reach the started state within 30 s
     */
    public static InProcessS3 start(String bucket) throws Exception {
        InProcessS3 s3 = new InProcessS3(bucket);
        s3.context = ContextBuilder.newBuilder("transient").build(BlobStoreContext.class);
        s3.context.getBlobStore().createContainerInLocation(null, bucket);
        s3.proxy =
                S3Proxy.builder()
                        .blobStore(s3.context.getBlobStore())
                        .endpoint(URI.create("http://127.0.0.1:0"))
                        .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
                        .build();
        s3.proxy.start();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!"STARTED".equals(s3.proxy.getState())) {
            if (System.nanoTime() > deadline) {
                s3.close();
                throw new IllegalStateException("S3Proxy did not start: " + s3.proxy.getState());
            }
            LockSupport.parkNanos(10_000_000L);
        }
        return s3;
    }

    /** {@code http://127.0.0.1:<port>}. */
    public String endpoint() {
        return "http://127.0.0.1:" + proxy.getPort();
    }

    /** The bucket created at start. */
    public String bucket() {
        return bucket;
    }

    /**
     * The AWS SDK 2.x settings (Java system properties) a client of this server needs, besides
     * credentials.
     */
    public static Map<String, String> awsSdkSystemProperties() {
        return Map.of(
                "aws.requestChecksumCalculation", "when_required",
                "aws.responseChecksumValidation", "when_required");
    }

    /** Writes object {@code key} of the bucket with {@code content} (UTF-8). */
    public void put(String key, String content) {
        BlobStore store = context.getBlobStore();
        store.putBlob(
                bucket,
                store.blobBuilder(key)
                        .payload(content.getBytes(java.nio.charset.StandardCharsets.UTF_8))
                        .build());
    }

    /** Names of all objects in the bucket whose key starts with {@code prefix}, in key order. */
    public List<String> keys(String prefix) {
        BlobStore store = context.getBlobStore();
        List<String> out = new ArrayList<>();
        ListContainerOptions options = ListContainerOptions.Builder.prefix(prefix).recursive();
        while (true) {
            PageSet<? extends StorageMetadata> page = store.list(bucket, options);
            page.forEach(m -> out.add(m.getName()));
            if (page.getNextMarker() == null) {
                break;
            }
            options =
                    ListContainerOptions.Builder.prefix(prefix)
                            .recursive()
                            .afterMarker(page.getNextMarker());
        }
        out.sort(null);
        return out;
    }

    @Override
    public void close() throws Exception {
        try {
            if (proxy != null) {
                proxy.stop();
            }
        } finally {
            if (context != null) {
                context.close();
            }
        }
    }
}
