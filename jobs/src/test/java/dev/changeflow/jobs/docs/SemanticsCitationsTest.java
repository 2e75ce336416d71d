package dev.changeflow.jobs.docs;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The repository's specification, {@code docs/semantics.md}, defines every rule id the code cites
 * and mentions every error code the code can raise.
 *
 * <p><b>Where citations are looked for</b>: the comments and string literals (text blocks included)
 * of every {@code *.java} file under a module's {@code src/} folder — never code, so a test
 * constant or a split id built in code is no citation — and the whole of {@code README.md} and
 * {@code docs/design.md}.
 *
 * <p><b>What a citation is</b>: a list of rule ids — a capital letter and a number 1–99 — joined by
 * {@code ,} {@code /} {@code +} {@code and}, or a range joined by {@code -} or {@code –} (which
 * cites every id in between). The list must stand alone: no letter, digit, {@code _}, {@code $},
 * {@code .} or dash right before it, no letter or digit right after (so {@code K8s} and the split
 * id {@code 76-A3} are not ids). Then:
 *
 * <ul>
 *   <li>ids of the specification's families (A, F, G, K, M, S) are citations wherever they stand,
 *       except {@code S3}, which is also the object store: it counts only in an explicit form;
 *   <li>any other letter counts only in an explicit form, so that a citation of a family the
 *       specification does not have fails too while {@code Sink V2} does not;
 *   <li>explicit forms: the list follows {@code semantics.md}, an opening parenthesis, or the word
 *       {@code rule}/{@code rules}.
 * </ul>
 *
 * <p><b>Definitions</b>: a Markdown heading of {@code docs/semantics.md} whose first word is the id
 * ({@code ### A3 — SCD type 1}), or an anchor {@code <a id="A3">}.
 *
 * <p><b>Error codes</b>: the constants of every enum declared in a main {@code *Exception.java}
 * file, and of the enum an exception's {@code code()} returns ({@code QuarantineReason} for {@code
 * ChangeRecordException}); each must appear in {@code docs/semantics.md} as a whole word.
 */
class SemanticsCitationsTest {
    private static final String ID = "[A-Z][1-9][0-9]?";
    private static final Pattern ID_LIST =
            Pattern.compile(
                    "(?<![\\w$.\\-–])"
                            + ID
                            + "(?:\\s*(?:[-–]|,|/|\\+|\\band\\b)\\s*"
                            + ID
                            + ")*(?![\\w])");
    private static final Pattern LIST_PART = Pattern.compile(ID + "|[-–]");
    private static final Pattern EXPLICIT_BEFORE =
            Pattern.compile("(?:semantics\\.md|\\(|\\brules?)\\s*$");
    private static final String FAMILIES = "AFGKMS";
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(" + ID + ")(?![\\w])");
    private static final Pattern ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"(" + ID + ")\"");

    private static Path repo;
    private static String semantics;

    /** Every {@code *.java} under a module's {@code src/}: path relative to the root → text. */
    private static final Map<String, String> JAVA_SOURCES = new TreeMap<>();

    @BeforeAll
    static void load() throws IOException {
        Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        while (p != null && !Files.isDirectory(p.resolve(".mvn"))) {
            p = p.getParent();
        }
        assertThat(p)
                .as(
                        "the repository root (a folder with .mvn) above "
                                + System.getProperty("user.dir"))
                .isNotNull();
        repo = p;
        semantics = Files.readString(repo.resolve("docs/semantics.md"), StandardCharsets.UTF_8);
        for (Path src : modulesSrc()) {
            try (Stream<Path> walk = Files.walk(src)) {
                for (Path f :
                        (Iterable<Path>)
                                walk.filter(f -> f.toString().endsWith(".java"))::iterator) {
                    JAVA_SOURCES.put(
                            repo.relativize(f).toString().replace('\\', '/'),
                            Files.readString(f, StandardCharsets.UTF_8));
                }
            }
        }
    }

    @Test
    void everyCitedRuleIdIsDefinedInSemanticsMd() throws IOException {
        Set<String> defined = definedIds(semantics);
        Map<String, String> scanned = new LinkedHashMap<>();
        JAVA_SOURCES.forEach((file, text) -> scanned.put(file, commentsAndStrings(text)));
        for (String doc : List.of("README.md", "docs/design.md")) {
            if (Files.exists(repo.resolve(doc))) {
                scanned.put(doc, Files.readString(repo.resolve(doc), StandardCharsets.UTF_8));
            }
        }
        Map<String, List<String>> cited = new TreeMap<>();
        scanned.forEach(
                (file, text) -> {
                    for (Citation c : citations(text)) {
                        cited.computeIfAbsent(c.id, k -> new ArrayList<>())
                                .add(file + ":" + c.line);
                    }
                });
        assertThat(cited)
                .as("the scan found the code's citations (is the pattern broken?)")
                .containsKeys("A1", "A3", "F4", "K8");

        Map<String, List<String>> missing = new TreeMap<>(cited);
        missing.keySet().removeAll(defined);
        String report =
                missing.entrySet().stream()
                        .map(
                                e ->
                                        "  "
                                                + e.getKey()
                                                + " cited at "
                                                + String.join(", ", e.getValue()))
                        .collect(Collectors.joining("\n"));
        assertThat(missing.keySet())
                .as(
                        "rule ids cited in the code but not defined by a heading in docs/semantics.md:\n"
                                + report
                                + "\n")
                .isEmpty();
    }

    @Test
    void everyErrorCodeIsDocumentedInSemanticsMd() {
        Map<String, Map<String, String>> enums = errorCodeEnums();
        assertThat(enums)
                .as("error code enums found in the main sources")
                .containsKeys(
                        "AutoCdcException.Code",
                        "CdfException.ErrorCode",
                        "GoldException.Code",
                        "QuarantineReason");

        List<String> missing = new ArrayList<>();
        enums.forEach(
                (name, constants) ->
                        constants.forEach(
                                (constant, location) -> {
                                    if (!Pattern.compile(
                                                    "(?<![A-Za-z0-9_])"
                                                            + constant
                                                            + "(?![A-Za-z0-9_])")
                                            .matcher(semantics)
                                            .find()) {
                                        missing.add(
                                                "  " + name + "." + constant + " (" + location
                                                        + ")");
                                    }
                                }));
        assertThat(missing)
                .as(
                        "error codes not mentioned in docs/semantics.md:\n"
                                + String.join("\n", missing)
                                + "\n")
                .isEmpty();
    }

    /**
     * The pattern on the citation styles the code uses, and on look-alikes that are no citations.
     */
    @Test
    void citationPatternTellsRuleIdsFromLookAlikes() {
        String undefined =
                "Z" + "9"; // built at run time, so this file cites no undefined id itself
        assertThat(ids("see semantics.md A3, A4 and F7")).containsExactly("A3", "A4", "F7");
        assertThat(ids("rows (A2 Decision, K7); ranges (F3/F4/F8)"))
                .containsExactly("A2", "K7", "F3", "F4", "F8");
        assertThat(ids("semantics.md A2-A4 and F1–F3"))
                .containsExactly("A2", "A3", "A4", "F1", "F2", "F3");
        assertThat(ids("K1: an update moving id 1; the A1 rule; sorted, A2-resolved"))
                .containsExactly("K1", "A1", "A2");
        assertThat(
                        ids(
                                "an S3 bucket, on S3, S3-compatible, K8s, Sink V2, signature V2/V4, split 76-A3"))
                .isEmpty();
        assertThat(ids("the schedule rule S3, (S3) and semantics.md S3"))
                .containsExactly("S3", "S3", "S3");
        assertThat(ids("semantics.md " + undefined + ", (" + undefined + ") and rule " + undefined))
                .containsExactly(undefined, undefined, undefined);

        String java =
                "/** Rule (A5). */\nstatic final String A0 = \"1-A1\"; // K5: tombstones\nint x = C1 + 'A'; String s = \"(F2)\";\n";
        assertThat(citations(commentsAndStrings(java)))
                .extracting(c -> c.id + "@" + c.line)
                .containsExactly("A5@1", "K5@2", "F2@3");

        assertThat(
                        definedIds(
                                "# Title\n### A3 — SCD type 1\n## K — cases\n#### K4 x\ntext A4\n<a id=\"F5\"></a>\n"))
                .containsExactlyInAnyOrder("A3", "K4", "F5");
    }

    // ------------------------------------------------------------------------------------ scanning

    static final class Citation {
        final String id;
        final int line;

        Citation(String id, int line) {
            this.id = id;
            this.line = line;
        }
    }

    private static List<String> ids(String text) {
        return citations(text).stream().map(c -> c.id).collect(Collectors.toList());
    }

    /** The rule-id citations in {@code text}, in order, with 1-based line numbers. */
    static List<Citation> citations(String text) {
        List<Citation> out = new ArrayList<>();
        Matcher m = ID_LIST.matcher(text);
        int line = 1;
        int counted = 0;
        while (m.find()) {
            String before = text.substring(Math.max(0, m.start() - 24), m.start());
            boolean explicit = EXPLICIT_BEFORE.matcher(before).find();
            for (; counted < m.start(); counted++) {
                if (text.charAt(counted) == '\n') {
                    line++;
                }
            }
            for (String id : expand(m.group())) {
                boolean family = FAMILIES.indexOf(id.charAt(0)) >= 0;
                boolean cited = family ? (!id.equals("S3") || explicit) : explicit;
                if (cited) {
                    out.add(new Citation(id, line));
                }
            }
        }
        return out;
    }

    /** {@code A2-A4} → A2, A3, A4; {@code F1, F3/F4} → F1, F3, F4. */
    private static List<String> expand(String list) {
        List<String> parts = new ArrayList<>();
        Matcher m = LIST_PART.matcher(list);
        while (m.find()) {
            parts.add(m.group());
        }
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            String part = parts.get(i);
            if (part.equals("-") || part.equals("–")) {
                continue;
            }
            if (i + 2 < parts.size()
                    && (parts.get(i + 1).equals("-") || parts.get(i + 1).equals("–"))
                    && parts.get(i + 2).charAt(0) == part.charAt(0)) {
                int from = Integer.parseInt(part.substring(1));
                int to = Integer.parseInt(parts.get(i + 2).substring(1));
                if (from <= to) {
                    for (int n = from; n <= to; n++) {
                        ids.add(part.charAt(0) + Integer.toString(n));
                    }
                    i += 2;
                    continue;
                }
            }
            ids.add(part);
        }
        return ids;
    }

    /**
     * Java source with everything but comments and string literals blanked out; line breaks stay
     * where they were, so offsets keep their line numbers.
     */
    static String commentsAndStrings(String src) {
        return split(src, true);
    }

    /** Java source with comments, string and character literals blanked out (the code alone). */
    static String codeOnly(String src) {
        return split(src, false);
    }

    /**
     * One pass over Java source keeping either the comments and strings or the code; blanks the
     * rest.
     */
    private static String split(String src, boolean keepCommentsAndStrings) {
        StringBuilder out = new StringBuilder(src.length());
        int i = 0;
        int n = src.length();
        while (i < n) {
            int end;
            boolean text = true; // a comment or a string literal, not a character literal
            if (src.startsWith("//", i)) {
                end = src.indexOf('\n', i);
                end = end < 0 ? n : end;
            } else if (src.startsWith("/*", i)) {
                end = src.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
            } else if (src.startsWith("\"\"\"", i)) {
                end = src.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
            } else if (src.charAt(i) == '"' || src.charAt(i) == '\'') {
                char quote = src.charAt(i);
                end = i + 1;
                while (end < n && src.charAt(end) != quote && src.charAt(end) != '\n') {
                    end += src.charAt(end) == '\\' ? 2 : 1;
                }
                end = Math.min(n, end + 1);
                text = quote == '"';
            } else {
                char c = src.charAt(i);
                out.append(c == '\n' || !keepCommentsAndStrings ? c : ' ');
                i++;
                continue;
            }
            boolean keep = keepCommentsAndStrings && text;
            for (int j = i; j < end; j++) {
                char c = src.charAt(j);
                out.append(keep || c == '\n' ? c : ' ');
            }
            i = end;
        }
        return out.toString();
    }

    /** Ids defined in {@code markdown} by a heading that starts with the id, or by an anchor. */
    static Set<String> definedIds(String markdown) {
        Set<String> ids = new TreeSet<>();
        for (String line : markdown.split("\n")) {
            Matcher h = HEADING.matcher(line);
            if (h.find()) {
                ids.add(h.group(1));
            }
            Matcher a = ANCHOR.matcher(line);
            while (a.find()) {
                ids.add(a.group(1));
            }
        }
        return ids;
    }

    /** {@code <module>/src} of every folder of the root that has a {@code pom.xml}. */
    private static List<Path> modulesSrc() throws IOException {
        try (Stream<Path> children = Files.list(repo)) {
            return children.filter(
                            d ->
                                    Files.isRegularFile(d.resolve("pom.xml"))
                                            && Files.isDirectory(d.resolve("src")))
                    .map(d -> d.resolve("src"))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    // --------------------------------------------------------------------------------- error codes

    private static final Pattern ENUM = Pattern.compile("\\benum\\s+(\\w+)[^{]*\\{");
    private static final Pattern CODE_METHOD =
            Pattern.compile("\\b(\\w+)\\s+code\\s*\\(\\s*\\)\\s*\\{");

    /**
     * Error code enums of the main sources: name (e.g. {@code CdfException.ErrorCode}) → constant →
     * {@code file:line} of the constant.
     */
    private static Map<String, Map<String, String>> errorCodeEnums() {
        Map<String, String> main = new TreeMap<>();
        JAVA_SOURCES.forEach(
                (file, text) -> {
                    if (file.contains("/src/main/java/")) {
                        main.put(file, text);
                    }
                });
        Map<String, Map<String, String>> enums = new TreeMap<>();
        Set<String> referenced = new TreeSet<>();
        main.forEach(
                (file, text) -> {
                    String simpleName =
                            file.substring(
                                    file.lastIndexOf('/') + 1, file.length() - ".java".length());
                    if (!simpleName.endsWith("Exception")) {
                        return;
                    }
                    String code = codeOnly(text);
                    Set<String> nested = new TreeSet<>();
                    Matcher m = ENUM.matcher(code);
                    while (m.find()) {
                        nested.add(m.group(1));
                        enums.put(simpleName + "." + m.group(1), constants(code, m.end(), file));
                    }
                    Matcher c = CODE_METHOD.matcher(code);
                    while (c.find()) {
                        if (!nested.contains(c.group(1))) {
                            referenced.add(c.group(1));
                        }
                    }
                });
        for (String type : referenced) {
            Pattern declaration = Pattern.compile("\\benum\\s+" + type + "\\b[^{]*\\{");
            main.forEach(
                    (file, text) -> {
                        if (text.contains("enum " + type)) {
                            String code = codeOnly(text);
                            Matcher m = declaration.matcher(code);
                            if (m.find()) {
                                enums.put(type, constants(code, m.end(), file));
                            }
                        }
                    });
        }
        return enums;
    }

    /** The constants of the enum body starting at {@code start} (just after its brace). */
    private static Map<String, String> constants(String code, int start, String file) {
        Map<String, String> constants = new LinkedHashMap<>();
        int depth = 0;
        int pieceStart = start;
        for (int i = start; i < code.length(); i++) {
            char ch = code.charAt(i);
            if (ch == '(' || ch == '{') {
                depth++;
            } else if (ch == ')' || (ch == '}' && depth > 0)) {
                depth--;
            } else if (depth == 0 && (ch == ',' || ch == ';' || ch == '}')) {
                String piece =
                        code.substring(pieceStart, i).replaceAll("@\\w+(\\([^)]*\\))?", "").trim();
                Matcher name = Pattern.compile("^([A-Za-z_]\\w*)").matcher(piece);
                if (name.find()) {
                    int at = code.indexOf(name.group(1), pieceStart);
                    int line =
                            1 + (int) code.substring(0, at).chars().filter(c -> c == '\n').count();
                    constants.put(name.group(1), file + ":" + line);
                }
                if (ch != ',') {
                    break;
                }
                pieceStart = i + 1;
            }
        }
        return constants;
    }
}
