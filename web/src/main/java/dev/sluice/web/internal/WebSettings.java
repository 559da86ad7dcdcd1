package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.Durations;
import dev.sluice.internal.Secrets;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * The per-application (per-filter) part of the vocabulary ({@link Parameter.Scope#APPLICATION}):
 * where limits are stored, how long a decision may wait, what responses carry and how the client
 * address is found and which callers are exempt or of which tier ({@link CallerRules}). Parsed once
 * at start-up by {@link #parse}; a filter built around a limiter in Java changes the HTTP ones
 * through the {@code with*} copies.
 *
 * <p>Errors are {@link ParameterException}s naming the parameter and the raw value.
 *
 * @param store           {@code memory}, {@code redis://host:port[/db]}, {@code rediss://...} or {@code redisson:PATH};
 *                        {@link #toString()} shows a password in it as {@code ***}
 * @param timeout         the longest one decision waits on the store, 1 ms to 1 minute
 * @param headers         which rate-limit response headers to send
 * @param callers         how the caller of a request is found and sorted: trusted proxies, the
 *                        forwarding header, the IPv6 prefix, exempt networks, the tier source
 * @param shadow          {@code mode=shadow}: decide and report, but reject nothing
 * @param metrics         {@code metrics=true}: publish to Micrometer when it is on the class path
 * @param partitionKey    {@code partition-key=true}: draft headers carry {@code pk}
 * @param localShare      {@code local-share}: with {@code failure-mode=local}, the share of each limit
 *                        this JVM grants while the store fails, greater than 0 and at most 1
 */
public record WebSettings(String store, Duration timeout, HeaderStyle headers, CallerRules callers, boolean shadow,
                          boolean metrics, boolean partitionKey, double localShare) {

    /**
     * Every default: {@code memory}, {@code 100ms}, {@code legacy}, {@link CallerRules#NONE} (no proxy,
     * {@code x-forwarded-for}, 64, no exemption, no tiers), enforce, metrics, no pk, share 1.
     */
    public static final WebSettings DEFAULTS = new WebSettings("memory", Durations.DEFAULT_TIMEOUT, HeaderStyle.LEGACY,
            CallerRules.NONE, false, true, false, 1.0);

    /** Validates and copies the components. */
    public WebSettings {
        StoreProvider.forStore(Objects.requireNonNull(store, "store"));
        Durations.checkTimeout(timeout);
        Objects.requireNonNull(headers, "headers");
        Objects.requireNonNull(callers, "callers");
        checkLocalShare(localShare, Double.toString(localShare));
    }

    /**
     * Parses the application parameters from raw values ({@code null} or blank: absent); route
     * parameters are ignored. Applies the defaults of {@link #DEFAULTS}.
     *
     * @param lookup the raw values, e.g. {@code filterConfig::getInitParameter}
     * @throws ParameterException naming the first bad parameter and its value
     */
    public static WebSettings parse(Function<String, String> lookup) {
        WebSettings d = DEFAULTS;
        return new WebSettings(
                Parameter.STORE.parse(lookup, WebSettings::parseStore, d.store),
                Parameter.TIMEOUT.parse(lookup, Durations::parseTimeout, d.timeout),
                Parameter.HEADERS.parse(lookup, HeaderStyle::parse, d.headers),
                CallerRules.parse(lookup),
                Parameter.MODE.parse(lookup, WebSettings::parseShadowMode, d.shadow),
                Parameter.METRICS.parse(lookup, v -> parseBoolean(Parameter.METRICS, v), d.metrics),
                Parameter.PARTITION_KEY.parse(lookup, v -> parseBoolean(Parameter.PARTITION_KEY, v), d.partitionKey),
                Parameter.LOCAL_SHARE.parse(lookup, WebSettings::parseLocalShare, d.localShare));
    }

    /** A copy sending {@code headers}. */
    public WebSettings withHeaders(HeaderStyle newHeaders) {
        return new WebSettings(store, timeout, newHeaders, callers, shadow, metrics, partitionKey, localShare);
    }

    /** A copy with {@code partition-key} set. */
    public WebSettings withPartitionKey(boolean newPartitionKey) {
        return new WebSettings(store, timeout, headers, callers, shadow, metrics, newPartitionKey, localShare);
    }

    /** A copy finding and sorting callers by {@code newCallers}. */
    public WebSettings withCallers(CallerRules newCallers) {
        return new WebSettings(store, timeout, headers, newCallers, shadow, metrics, partitionKey, localShare);
    }

    /**
     * A copy trusting {@code cidrs}, in the syntax of {@code trusted-proxies}; empty trusts none.
     *
     * @throws IllegalArgumentException naming the value if it is malformed
     */
    public WebSettings withTrustedProxies(String cidrs) {
        return withCallers(callers.withTrustedProxies(cidrs));
    }

    /**
     * A copy reading {@code header}, in the syntax of {@code forwarded-header}, from trusted proxies.
     *
     * @throws IllegalArgumentException naming the value if it is neither header
     */
    public WebSettings withForwardedHeader(String header) {
        return withCallers(callers.withForwardedHeader(header));
    }

    /** A copy keying IPv6 clients by their network of {@code prefix} bits, 32 to 128. */
    public WebSettings withIpv6Prefix(int prefix) {
        return withCallers(callers.withIpv6Prefix(prefix));
    }

    /**
     * A {@code store} value as logs, messages and {@code toString}s show it: a password in it as
     * {@code ***}, {@code null} as {@code null}.
     */
    public static String shown(String store) {
        return Secrets.redact(store);
    }

    /** The settings, with a password in {@code store} shown as {@code ***}. */
    @Override
    public String toString() {
        return "WebSettings[store=" + Secrets.redact(store) + ", timeout=" + Durations.formatDuration(timeout)
                + ", headers="
                + headers.configName() + ", callers=" + callers + ", shadow=" + shadow + ", metrics=" + metrics
                + ", partitionKey=" + partitionKey + ", localShare=" + localShare + "]";
    }

    /** Checks the form of a {@code store} value; whether the store answers is for the failure mode, not start-up. */
    private static String parseStore(String value) {
        StoreProvider.forStore(value);
        return value;
    }

    /** A decimal fraction such as {@code 0.33}, {@code .5} or {@code 1}; no exponent, sign, NaN or hex. */
    private static double parseLocalShare(String value) {
        double share = value.matches("\\d{1,9}(\\.\\d{1,9})?|\\.\\d{1,9}") ? Double.parseDouble(value) : Double.NaN;
        return checkLocalShare(share, value);
    }

    private static double checkLocalShare(double share, String raw) {
        if (!(share > 0 && share <= 1)) {
            throw new IllegalArgumentException(
                    "'local-share' must be a fraction greater than 0 and at most 1 (e.g. 0.33), "
                    + "got '" + raw + "'");
        }
        return share;
    }

    private static boolean parseShadowMode(String value) {
        String normal = value.toLowerCase(Locale.ROOT);
        if (normal.equals("enforce") || normal.equals("shadow")) {
            return normal.equals("shadow");
        }
        throw new IllegalArgumentException("'mode' must be enforce or shadow, got '" + value + "'");
    }

    private static boolean parseBoolean(Parameter parameter, String value) {
        String normal = value.toLowerCase(Locale.ROOT);
        if (normal.equals("true") || normal.equals("false")) {
            return normal.equals("true");
        }
        throw new IllegalArgumentException("'" + parameter.configName() + "' must be true or false, got '" + value
                + "'");
    }
}
