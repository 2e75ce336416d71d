package dev.changeflow.sources.changes;

import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Debezium's unavailable-value placeholder (PostgreSQL TOAST, semantics.md A3, A4, A5): the decoder
 * nulls the column and marks it in {@code _unavailable_columns}, for strings, JSON, bytes and
 * arrays, with and without the schema wrapper, with the default and a configured placeholder.
 */
class UnavailableValueDecodeTest {
    private static final String TOAST = "__debezium_unavailable_value";
    private static final String TOAST_BASE64 =
            Base64.getEncoder().encodeToString(TOAST.getBytes(StandardCharsets.UTF_8));
    private static final long NOW = 1_700_000_000_000L;

    /** id INT, body STRING, doc STRING (io.debezium.data.Json), blob BYTES, tags ARRAY<STRING>. */
    private static final String COLUMNS =
            "id INT, body STRING NOT NULL, doc STRING, blob BYTES, tags ARRAY<STRING>";

    private static final String SCHEMA =
            "{'type':'struct','name':'pg.public.docs.Envelope','fields':["
                    + "{'type':'struct','field':'before','optional':true,'fields':[]},"
                    + "{'type':'struct','field':'after','optional':true,'fields':["
                    + "{'type':'int32','field':'id','optional':false},"
                    + "{'type':'string','field':'body','optional':false},"
                    + "{'type':'string','field':'doc','optional':true,'name':'io.debezium.data.Json'},"
                    + "{'type':'bytes','field':'blob','optional':true},"
                    + "{'type':'array','field':'tags','optional':true,'items':{'type':'string'}}]}]}";

    private final Collected out = new Collected();

    private static DecoderFlow.Builder docs() {
        return DecoderFlow.builder(
                        "docs",
                        ChangeRecordFormat.DEBEZIUM_JSON,
                        SchemaSampler.parseColumns(COLUMNS))
                .sourceNames("docs")
                .keys("id");
    }

    private static String q(String s) {
        return s.replace('\'', '"');
    }

    private static String update(String after) {
        return q(
                "{'before':null,'after':"
                        + after
                        + ",'source':{'connector':'postgresql','db':'db','schema':'public',"
                        + "'table':'docs','txId':7,'lsn':90,'ts_ms':1000},'op':'u','ts_ms':2000}");
    }

    private static String wrapped(String envelope) {
        return q("{'schema':" + SCHEMA + ",'payload':") + envelope + "}";
    }

    private void decode(DecoderFlow flow, String line) {
        new ChangeRecordDecoder(List.of(flow))
                .decode(line.getBytes(StandardCharsets.UTF_8), "docs.jsonl", null, 1, NOW, out);
    }

    /** The expected row: 5 data columns, then the metadata of {@link #update}, then the mask. */
    private static GenericRowData row(Object[] data, byte[] mask) {
        GenericRowData r = new GenericRowData(RowKind.INSERT, 5 + 12);
        for (int i = 0; i < data.length; i++) {
            r.setField(i, data[i]);
        }
        Object[] meta = {
            StringData.fromString("u"),
            2000L,
            90L,
            1000L,
            7L,
            null,
            StringData.fromString("db"),
            StringData.fromString("public"),
            StringData.fromString("docs"),
            null,
            null,
            mask
        };
        for (int i = 0; i < meta.length; i++) {
            r.setField(5 + i, meta[i]);
        }
        return r;
    }

    @Test
    void everyPlaceholderFormIsNullAndMarkedWithAndWithoutSchemaWrapper() {
        String envelope =
                update(
                        "{'id':1,'body':'"
                                + TOAST
                                + "','doc':'"
                                + TOAST
                                + "','blob':'"
                                + TOAST_BASE64
                                + "','tags':['"
                                + TOAST
                                + "']}");
        decode(docs().build(), envelope);
        decode(docs().build(), wrapped(envelope));
        // columns 1..4 unavailable: bits 1, 2, 3, 4 of byte 0; body is NOT NULL but not a mismatch
        GenericRowData expected = row(new Object[] {1, null, null, null, null}, new byte[] {30});
        assertThat(out.quarantined).isEmpty();
        assertThat(out.changes).containsExactly(expected, expected);
    }

    @Test
    void aRowWithoutPlaceholderHasNoMask() {
        decode(
                docs().build(),
                update("{'id':1,'body':'b','doc':'{}','blob':'AQI=','tags':['x','y']}"));
        assertThat(out.changes)
                .containsExactly(
                        row(
                                new Object[] {
                                    1,
                                    StringData.fromString("b"),
                                    StringData.fromString("{}"),
                                    new byte[] {1, 2},
                                    new GenericArrayData(
                                            new Object[] {
                                                StringData.fromString("x"),
                                                StringData.fromString("y")
                                            })
                                },
                                null));
    }

    @Test
    void onlyTheColumnsCarryingThePlaceholderAreMarked() {
        decode(
                docs().build(),
                update("{'id':1,'body':'b','doc':null,'blob':null,'tags':['" + TOAST + "']}"));
        assertThat(out.changes)
                .containsExactly(
                        row(
                                new Object[] {1, StringData.fromString("b"), null, null, null},
                                new byte[] {16}));
    }

    @Test
    void aConfiguredPlaceholderReplacesTheDefault() {
        DecoderFlow flow = docs().unavailablePlaceholder("~toast~").build();
        decode(
                flow,
                update("{'id':1,'body':'~toast~','doc':'" + TOAST + "','blob':null,'tags':null}"));
        assertThat(out.changes)
                .containsExactly(
                        row(
                                new Object[] {1, null, StringData.fromString(TOAST), null, null},
                                new byte[] {2}));
    }

    @Test
    void aPlaceholderInsideALongerArrayIsAnOrdinaryElement() {
        decode(
                docs().build(),
                update("{'id':1,'body':'b','doc':null,'blob':null,'tags':['" + TOAST + "','x']}"));
        assertThat(out.changes)
                .containsExactly(
                        row(
                                new Object[] {
                                    1,
                                    StringData.fromString("b"),
                                    null,
                                    null,
                                    new GenericArrayData(
                                            new Object[] {
                                                StringData.fromString(TOAST),
                                                StringData.fromString("x")
                                            })
                                },
                                null));
    }
}
