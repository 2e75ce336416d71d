package dev.changeflow.sources.files;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A CSV header's names (docs/semantics.md S2): matched to the table's columns ignoring case, so two
 * names of one header that differ only in case are ambiguous — the file has no usable header, and
 * its lines are quarantined as MALFORMED_CSV with this message (issue #13).
 */
class CsvLinesTest {
    private static CsvLines.Header header(String line) {
        return CsvLines.header(
                "in/a.csv", 1, line.getBytes(StandardCharsets.UTF_8), CsvOptions.DEFAULT);
    }

    @Test
    void headerNamesDifferingOnlyInCaseAreAmbiguous() {
        CsvLines.Header ok = header("ID,Name,seq");
        assertThat(ok.names).containsExactly("ID", "Name", "seq");
        assertThat(ok.error).isNull();
        CsvLines.Header ambiguous = header("id,name,ID");
        assertThat(ambiguous.names).isNull();
        assertThat(ambiguous.error)
                .isEqualTo(
                        "the header (line 1) of CSV file in/a.csv names columns 'id' and 'ID',"
                                + " which differ only in case (header names match the table's"
                                + " columns ignoring case)");
        assertThat(header("id,name,id").error)
                .isEqualTo("the header (line 1) of CSV file in/a.csv names column 'id' twice");
    }
}
