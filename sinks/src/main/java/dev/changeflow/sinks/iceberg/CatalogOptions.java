package dev.changeflow.sinks.iceberg;

import dev.changeflow.operators.options.OptionLayer;
import dev.changeflow.operators.options.OptionParsers;
import dev.changeflow.operators.options.OptionSet;
import dev.changeflow.operators.options.OptionSource;
import dev.changeflow.operators.options.OptionsResolver;
import dev.changeflow.operators.options.ResolvedOptions;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The Iceberg catalog properties changeflow itself reads — {@code type}, {@code uri}, {@code
 * warehouse}, {@code catalog-impl}, {@code io-impl} — as one {@link ConfigOption} constant each
 * (keys as Iceberg's {@link CatalogProperties} / {@link CatalogUtil} name them), and {@link
 * #resolve}, the one reader of the catalog properties a flows file's {@code catalog:} block, the
 * SQL front end's {@code SET catalog.KEY = VALUE} and the {@code --catalog KEY=VALUE} flags give.
 *
 * <p>Any other key is an Iceberg catalog property changeflow does not read ({@code credential},
 * {@code s3.endpoint}, {@code header.*}, ...): it is passed through to Iceberg as given, as Iceberg
 * allows any property. Every value is a single text; {@code ${env:NAME}} references are kept as
 * written ({@link CatalogSettings} resolves them when the catalog is loaded). Which combinations
 * are valid ({@code type} or {@code catalog-impl}, a {@code hadoop} catalog's {@code warehouse}) is
 * checked by {@link CatalogSettings#of}.
 */
@PublicEvolving
public final class CatalogOptions {

    /** Accepted values of {@link #TYPE} (any case). */
    public static final String ACCEPTED_TYPES = "hadoop, rest, jdbc, hive, glue, nessie";

    public static final ConfigOption<String> TYPE =
            ConfigOptions.key(CatalogUtil.ICEBERG_CATALOG_TYPE)
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Catalog type: "
                                    + ACCEPTED_TYPES
                                    + " (any case). Exactly one of type and catalog-impl.");

    public static final ConfigOption<String> URI =
            ConfigOptions.key(CatalogProperties.URI)
                    .stringType()
                    .noDefaultValue()
                    .withDescription("The catalog service's URI (REST, JDBC, Hive metastore).");

    public static final ConfigOption<String> WAREHOUSE =
            ConfigOptions.key(CatalogProperties.WAREHOUSE_LOCATION)
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Warehouse location: a folder or URI (required by a hadoop catalog;"
                                    + " sent to a REST server).");

    public static final ConfigOption<String> CATALOG_IMPL =
            ConfigOptions.key(CatalogProperties.CATALOG_IMPL)
                    .stringType()
                    .noDefaultValue()
                    .withDescription("A catalog class name, instead of type.");

    public static final ConfigOption<String> IO_IMPL =
            ConfigOptions.key(CatalogProperties.FILE_IO_IMPL)
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "FileIO class name, e.g. org.apache.iceberg.aws.s3.S3FileIO;"
                                    + " default: the catalog's own.");

    /** The declared catalog options with their parsers. */
    public static final OptionSet SET =
            OptionSet.builder("catalog")
                    .add(
                            TYPE,
                            OptionParsers.parsing(
                                    TYPE.key(),
                                    "one of "
                                            + ACCEPTED_TYPES
                                            + " (or set '"
                                            + CATALOG_IMPL.key()
                                            + "' to a catalog class name)",
                                    CatalogOptions::checkType))
                    .add(URI, OptionParsers.text(URI.key()))
                    .add(WAREHOUSE, OptionParsers.text(WAREHOUSE.key()))
                    .add(CATALOG_IMPL, OptionParsers.text(CATALOG_IMPL.key()))
                    .add(IO_IMPL, OptionParsers.text(IO_IMPL.key()))
                    .build();

    private CatalogOptions() {}

    /**
     * The catalog properties the layers give: the declared options resolved by {@link
     * OptionsResolver} (flag &gt; {@code --set} &gt; definition; the later layer of a source wins),
     * every other key passed through with the value of the strongest layer giving it.
     *
     * @param layers e.g. the flows file's {@code catalog:} block ({@link OptionSource#DEFINITION})
     *     and the {@code --catalog} flags ({@link OptionSource#FLAG})
     * @return the properties in the order their keys first appear, values as given
     * @throws IllegalArgumentException naming the layer, the option, the value and what is allowed,
     *     for a {@code type} that is not one of {@value #ACCEPTED_TYPES} or a value that is not a
     *     single text
     */
    public static Map<String, String> resolve(List<OptionLayer> layers) {
        List<OptionLayer> declared = new ArrayList<>();
        Set<String> order = new LinkedHashSet<>();
        for (OptionLayer layer : layers) {
            Map<String, Object> own = new LinkedHashMap<>();
            for (Map.Entry<String, Object> e : layer.values().entrySet()) {
                order.add(e.getKey());
                if (SET.keys().contains(e.getKey())) {
                    own.put(e.getKey(), e.getValue());
                } else {
                    try {
                        OptionParsers.text(e.getKey()).parse(e.getValue());
                    } catch (IllegalArgumentException notText) {
                        throw new IllegalArgumentException(
                                layer.label() + ": " + notText.getMessage(), notText);
                    }
                }
            }
            declared.add(OptionLayer.of(layer.source(), layer.label(), own));
        }
        ResolvedOptions resolved = OptionsResolver.resolve(SET, declared);
        // pass-through keys: strongest source last, and within a source the later layer last
        List<OptionLayer> weakestFirst = new ArrayList<>(layers);
        weakestFirst.sort(Comparator.comparing(OptionLayer::source, Comparator.reverseOrder()));
        Map<String, String> passThrough = new LinkedHashMap<>();
        for (OptionLayer layer : weakestFirst) {
            layer.values()
                    .forEach(
                            (k, v) -> {
                                if (!SET.keys().contains(k)) {
                                    passThrough.put(k, v == null ? "" : v.toString());
                                }
                            });
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (String key : order) {
            if (SET.keys().contains(key)) {
                ConfigOption<?> option = SET.options().get(key);
                Object value = resolved.get(option);
                out.put(key, value == null ? "" : value.toString());
            } else {
                out.put(key, passThrough.get(key));
            }
        }
        return out;
    }

    /** {@link #resolve} of one layer of {@link OptionSource#FLAG}s ({@code --catalog K=V}). */
    public static Map<String, String> fromFlags(String label, Map<String, String> flags) {
        return resolve(List.of(OptionLayer.of(OptionSource.FLAG, label, flags)));
    }

    /** Whether {@code type} (any case) is one of {@value #ACCEPTED_TYPES}. */
    static boolean isAcceptedType(String type) {
        String t = type.trim().toLowerCase(Locale.ROOT);
        for (String accepted : ACCEPTED_TYPES.split(", ")) {
            if (accepted.equals(t)) {
                return true;
            }
        }
        return false;
    }

    private static String checkType(String type) {
        if (!isAcceptedType(type)) {
            throw new IllegalArgumentException(type);
        }
        return type;
    }
}
