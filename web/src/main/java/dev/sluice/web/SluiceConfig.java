package dev.sluice.web;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.internal.Durations;
import dev.sluice.internal.StoreProviders;


import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one configuration vocabulary of Sluice, and its one parser. The servlet filter's
 * {@code web.xml} init-params, the JAX-RS {@code sluice.*} properties and the
 * {@code @RateLimit} attributes all pass through {@link #parse}, so they cannot drift apart.
 *
 * <table>
 *   <caption>Parameters</caption>
 *   <tr><th>name</th><th>values</th><th>default</th></tr>
 *   <tr><td>{@code policy}</td><td>name of the limit (keys, headers)</td><td>given by the adapter</td></tr>
 *   <tr><td>{@code algorithm}</td><td>{@code token-bucket}, {@code gcra}, {@code sliding-window},
 *       {@code fixed-window}, {@code sliding-log}</td><td>{@code token-bucket}</td></tr>
 *   <tr><td>{@code limit}</td><td>{@code <count>/<period>}: {@code 10/s}, {@code 100/1m}, {@code 20/500ms},
 *       {@code 5000/1h}, {@code 1000/1d}</td><td>required</td></tr>
 *   <tr><td>{@code burst}</td><td>integer &ge; 1 (token-bucket, gcra)</td><td>the count of {@code limit}</td></tr>
 *   <tr><td>{@code key}</td><td>{@code header:NAME}, {@code principal}, {@code param:NAME}, {@code ip},
 *       comma-separated, first present wins</td><td>{@code ip}</td></tr>
 *   <tr><td>{@code cost}</td><td>integer &ge; 1</td><td>1</td></tr>
 *   <tr><td>{@code store}</td><td>{@code memory}, {@code redis://host:port[/db]}, {@code rediss://...},
 *       {@code redisson:PATH}</td><td>{@code memory}</td></tr>
 *   <tr><td>{@code failure-mode}</td><td>{@code open}, {@code closed}</td><td>{@code open}</td></tr>
 *   <tr><td>{@code timeout}</td><td>a duration: {@code 50ms}, {@code 1s}</td><td>{@code 100ms}</td></tr>
 *   <tr><td>{@code headers}</td><td>{@code legacy}, {@code draft-10} (alias {@code draft}), {@code both}
 *       (legacy and draft-10), {@code none}</td><td>{@code legacy}</td></tr>
 *   <tr><td>{@code partition-key}</td><td>{@code true}, {@code false}: send the draft's {@code pk}, a keyed
 *       hash of the caller</td><td>{@code false}</td></tr>
 *   <tr><td>{@code trusted-proxies}</td><td>comma-separated CIDRs or addresses</td><td>none</td></tr>
 *   <tr><td>{@code forwarded-header}</td><td>{@code x-forwarded-for}, {@code forwarded}: the one header a
 *       trusted proxy writes, the other is never read</td><td>{@code x-forwarded-for}</td></tr>
 *   <tr><td>{@code ipv6-prefix}</td><td>integer 32&ndash;128: the IPv6 network {@code ip} keys a client by
 *       (IPv4 clients are keyed per address)</td><td>{@code 64}</td></tr>
 *   <tr><td>{@code mode}</td><td>{@code enforce}, {@code shadow} (decide and report, reject nothing)</td><td>{@code enforce}</td></tr>
 *   <tr><td>{@code metrics}</td><td>{@code true}, {@code false} (Micrometer, when present)</td><td>{@code true}</td></tr>
 * </table>
 *
 * <p>Errors are {@link IllegalArgumentException}s whose message names the parameter and the raw
 * value, e.g. {@code 'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'};
 * adapters prefix where the value came from.
 *
 * @param limit          the limit: policy, algorithm, count per period, burst, cost
 * @param key            where the caller's identity comes from, tried in order
 * @param store          the store: {@code memory}, a Redis URI or {@code redisson:PATH}
 * @param failureMode    what to do when the store fails
 * @param timeout        the longest one decision waits on the store
 * @param headers        which rate-limit response headers to send
 * @param trustedProxies  CIDRs whose forwarding header is believed, normalised
 * @param forwardedHeader the forwarding header read from trusted proxies; the other is ignored
 * @param ipv6Prefix      the prefix length IPv6 clients are keyed by for {@code ip}, 32 to 128
 * @param shadow         {@code mode=shadow}: decide and report, but reject nothing
 * @param metrics        {@code metrics=true}: publish to Micrometer when it is on the class path
 * @param partitionKey   {@code partition-key=true}: draft headers carry {@code pk}
 */
public record SluiceConfig(Limit limit, List<KeySource> key, String store, FailureMode failureMode,
                           Duration timeout, HeaderStyle headers, List<String> trustedProxies,
                           ForwardedHeader forwardedHeader, int ipv6Prefix, boolean shadow, boolean metrics,
                           boolean partitionKey) {

    /** Every parameter name of the vocabulary. */
    public static final Set<String> NAMES = Set.of("policy", "algorithm", "limit", "burst", "key", "cost", "store",
            "failure-mode", "timeout", "headers", "trusted-proxies", "forwarded-header", "ipv6-prefix", "mode",
            "metrics", "partition-key");
    /** The default {@code timeout}. */
    public static final Duration DEFAULT_TIMEOUT = Durations.DEFAULT_TIMEOUT;
    /** The default {@code ipv6-prefix}: a /64, the smallest network an IPv6 client is normally given. */
    public static final int DEFAULT_IPV6_PREFIX = 64;

    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    private static final Pattern PARAM_NAME = Pattern.compile("[^\\s,]+");

    /** Validates and copies the components. */
    public SluiceConfig {
        Objects.requireNonNull(limit, "limit");
        key = List.copyOf(key);
        if (key.isEmpty()) {
            throw new IllegalArgumentException("'key' must name at least one source");
        }
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(failureMode, "failureMode");
        Durations.checkTimeout(timeout);
        Objects.requireNonNull(headers, "headers");
        trustedProxies = List.copyOf(trustedProxies);
        Objects.requireNonNull(forwardedHeader, "forwardedHeader");
        checkIpv6Prefix(ipv6Prefix);
    }

    /** A configuration without {@code partition-key} (false), as before that parameter existed. */
    public SluiceConfig(Limit limit, List<KeySource> key, String store, FailureMode failureMode, Duration timeout,
                        HeaderStyle headers, List<String> trustedProxies, ForwardedHeader forwardedHeader,
                        int ipv6Prefix, boolean shadow, boolean metrics) {
        this(limit, key, store, failureMode, timeout, headers, trustedProxies, forwardedHeader, ipv6Prefix, shadow,
                metrics, false);
    }

    /**
     * A configuration without {@code forwarded-header}, {@code ipv6-prefix} and {@code partition-key}
     * (their defaults: {@code x-forwarded-for}, 64, false), as before those parameters existed.
     */
    public SluiceConfig(Limit limit, List<KeySource> key, String store, FailureMode failureMode, Duration timeout,
                        HeaderStyle headers, List<String> trustedProxies, boolean shadow, boolean metrics) {
        this(limit, key, store, failureMode, timeout, headers, trustedProxies, ForwardedHeader.X_FORWARDED_FOR,
                DEFAULT_IPV6_PREFIX, shadow, metrics, false);
    }


    /**
     * Which rate-limit headers responses carry. The draft form names its revision
     * ({@code draft-10}); {@code draft} is an alias of {@code draft-10} and stays one, so that a
     * later revision added as, say, {@code draft-11} does not change what existing deployments send.
     */
    public enum HeaderStyle {
        /** {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset}. */
        LEGACY,
        /**
         * {@code draft-10}: {@code RateLimit-Policy} and {@code RateLimit} as in
         * draft-ietf-httpapi-ratelimit-headers-10, with its {@code quota-exceeded} problem type.
         */
        DRAFT,
        /** Both {@code legacy} and {@code draft-10}. */
        BOTH,
        /** No rate-limit headers ({@code Retry-After} on rejections still). */
        NONE;

        /** The draft revision the draft headers follow. */
        public static final String DRAFT_REVISION = "draft-ietf-httpapi-ratelimit-headers-10";

        /** The value of the {@code headers} parameter: {@code legacy}, {@code draft-10}, {@code both}, {@code none}. */
        public String configName() {
            return this == DRAFT ? "draft-10" : name().toLowerCase(Locale.ROOT);
        }

        /** Whether the legacy headers are sent. */
        public boolean legacy() {
            return this == LEGACY || this == BOTH;
        }

        /** Whether the draft headers are sent. */
        public boolean draft() {
            return this == DRAFT || this == BOTH;
        }
    }

    /**
     * The forwarding header a trusted proxy writes, {@code forwarded-header}. Only that header is
     * read; the other is ignored entirely, since a client can send it through a proxy that only
     * appends to its own.
     */
    public enum ForwardedHeader {
        /** {@code X-Forwarded-For: client, proxy1, proxy2}: the de-facto standard, the default. */
        X_FORWARDED_FOR("x-forwarded-for", "X-Forwarded-For"),
        /** RFC 7239 {@code Forwarded: for=client, for=proxy1}. */
        FORWARDED("forwarded", "Forwarded");

        private final String configName;
        private final String headerName;

        ForwardedHeader(String configName, String headerName) {
            this.configName = configName;
            this.headerName = headerName;
        }

        /** The value in the vocabulary: {@code x-forwarded-for} or {@code forwarded}. */
        public String configName() {
            return configName;
        }

        /** The HTTP header's name. */
        public String headerName() {
            return headerName;
        }
    }

    /**
     * One source of the caller's identity.
     *
     * @param kind where to look
     * @param name the header or parameter name; empty for {@code principal} and {@code ip}
     */
    public record KeySource(Kind kind, String name) {
        /** Where a key source looks. */
        public enum Kind {
            /** A request header, {@code header:NAME}. */
            HEADER,
            /** The authenticated user's name, {@code principal}. */
            PRINCIPAL,
            /** A query or form parameter, {@code param:NAME}. */
            PARAM,
            /** The client address, {@code ip} (through trusted proxies only). */
            IP
        }

        /** Validates the components. */
        public KeySource {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(name, "name");
        }

        @Override
        public String toString() {
            return switch (kind) {
                case HEADER -> "header:" + name;
                case PARAM -> "param:" + name;
                case PRINCIPAL -> "principal";
                case IP -> "ip";
            };
        }
    }

    /**
     * Parses every parameter, reading raw values from {@code lookup} (which returns {@code null}
     * for an absent one) and applying the defaults.
     *
     * @param lookup        the raw values, e.g. {@code filterConfig::getInitParameter}
     * @param defaultPolicy the policy name when {@code policy} is absent
     * @throws IllegalArgumentException naming the first bad parameter and its value
     */
    public static SluiceConfig parse(Function<String, String> lookup, String defaultPolicy) {
        String limitValue = present(lookup.apply("limit"));
        if (limitValue == null) {
            throw new IllegalArgumentException("'limit' is required, e.g. 100/1m");
        }
        Durations.Rate rate = parseRate(limitValue);
        String policy = present(lookup.apply("policy"));
        Algorithm algorithm = orDefault(lookup, "algorithm", Algorithm::fromConfigName, Algorithm.TOKEN_BUCKET);
        Long burst = orDefault(lookup, "burst", v -> parsePositive("burst", v), null);
        long cost = orDefault(lookup, "cost", v -> parsePositive("cost", v), 1L);
        if (burst != null && !algorithm.hasBurst()) {
            throw new IllegalArgumentException("'burst' applies only to token-bucket and gcra, not to "
                    + algorithm.configName() + ", got '" + lookup.apply("burst") + "'");
        }
        Limit limit = new Limit(policy != null ? policy : defaultPolicy, algorithm, rate.count(), rate.period(),
                burst != null ? burst : rate.count(), cost);
        return new SluiceConfig(limit,
                orDefault(lookup, "key", SluiceConfig::parseKeySources, List.of(new KeySource(KeySource.Kind.IP, ""))),
                orDefault(lookup, "store", SluiceConfig::parseStore, "memory"),
                orDefault(lookup, "failure-mode", FailureMode::fromConfigName, FailureMode.OPEN),
                orDefault(lookup, "timeout", SluiceConfig::parseTimeout, DEFAULT_TIMEOUT),
                orDefault(lookup, "headers", SluiceConfig::parseHeaders, HeaderStyle.LEGACY),
                orDefault(lookup, "trusted-proxies", SluiceConfig::parseTrustedProxies, List.of()),
                orDefault(lookup, "forwarded-header", SluiceConfig::parseForwardedHeader, ForwardedHeader.X_FORWARDED_FOR),
                orDefault(lookup, "ipv6-prefix", SluiceConfig::parseIpv6Prefix, DEFAULT_IPV6_PREFIX),
                orDefault(lookup, "mode", SluiceConfig::parseShadowMode, false),
                orDefault(lookup, "metrics", v -> parseBoolean("metrics", v), true),
                orDefault(lookup, "partition-key", v -> parseBoolean("partition-key", v), false));
    }

    /** Parses {@code mode}: {@code enforce} (false) or {@code shadow} (true). */
    public static boolean parseShadowMode(String value) {
        String normal = value.trim().toLowerCase(Locale.ROOT);
        if (normal.equals("enforce") || normal.equals("shadow")) {
            return normal.equals("shadow");
        }
        throw new IllegalArgumentException("'mode' must be enforce or shadow, got '" + value + "'");
    }

    /** Parses {@code true} or {@code false} (any case). */
    public static boolean parseBoolean(String parameter, String value) {
        String normal = value.trim().toLowerCase(Locale.ROOT);
        if (normal.equals("true") || normal.equals("false")) {
            return normal.equals("true");
        }
        throw new IllegalArgumentException("'" + parameter + "' must be true or false, got '" + value + "'");
    }

    /**
     * Throws for a name outside the vocabulary, so that a typo such as {@code limt} fails start-up
     * instead of being ignored.
     */
    public static void checkName(String name) {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("'" + name + "' is not a Sluice parameter; known: "
                    + String.join(", ", NAMES.stream().sorted().toList()));
        }
    }

    /** Parses {@code <count>/<period>}, such as {@code 10/s}, {@code 100/1m} or {@code 20/500ms}. */
    public static Durations.Rate parseRate(String value) {
        return Durations.parseRate(value);
    }

    /** Parses a {@code timeout}: a duration from 1 ms to 1 minute, such as {@code 50ms}. */
    public static Duration parseTimeout(String value) {
        return Durations.parseTimeout(value);
    }

    /** Parses a comma-separated list of key sources: {@code header:X-API-Key,principal,param:key,ip}. */
    public static List<KeySource> parseKeySources(String value) {
        List<KeySource> sources = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String item = part.trim();
            String lower = item.toLowerCase(Locale.ROOT);
            KeySource source;
            if (lower.equals("ip")) {
                source = new KeySource(KeySource.Kind.IP, "");
            } else if (lower.equals("principal")) {
                source = new KeySource(KeySource.Kind.PRINCIPAL, "");
            } else if (lower.startsWith("header:") && HEADER_NAME.matcher(item.substring(7)).matches()) {
                source = new KeySource(KeySource.Kind.HEADER, item.substring(7));
            } else if (lower.startsWith("param:") && PARAM_NAME.matcher(item.substring(6)).matches()) {
                source = new KeySource(KeySource.Kind.PARAM, item.substring(6));
            } else {
                throw new IllegalArgumentException("'key' must be a comma-separated list of header:NAME, principal, "
                        + "param:NAME or ip, got '" + value + "'");
            }
            sources.add(source);
        }
        return List.copyOf(sources);
    }

    /** Parses {@code legacy}, {@code draft-10} (or its alias {@code draft}), {@code both} or {@code none}. */
    public static HeaderStyle parseHeaders(String value) {
        String normal = value.trim().toLowerCase(Locale.ROOT);
        for (HeaderStyle style : HeaderStyle.values()) {
            if (style.configName().equals(normal) || (style == HeaderStyle.DRAFT && normal.equals("draft"))) {
                return style;
            }
        }
        throw new IllegalArgumentException("'headers' must be legacy, draft-10 (alias draft), both or none, got '"
                + value + "'");
    }

    /**
     * Checks the form of a {@code store} value: {@code memory}, {@code redis://host:port[/db]},
     * {@code rediss://...} or {@code redisson:PATH}. Whether the store answers is a matter for
     * the failure mode, not for start-up.
     */
    public static String parseStore(String value) {
        String trimmed = value.trim();
        StoreProviders.forStore(trimmed);
        return trimmed;
    }

    /** Parses comma-separated CIDRs or addresses, such as {@code 10.0.0.0/8, ::1}; returns them normalised. */
    public static List<String> parseTrustedProxies(String value) {
        List<String> cidrs = new ArrayList<>();
        for (String part : value.split(",")) {
            if (part.isBlank()) {
                continue;
            }
            Cidr cidr = Cidr.parse(part.trim());
            if (cidr == null) {
                throw new IllegalArgumentException("'trusted-proxies' must be comma-separated CIDRs or IP addresses "
                        + "(e.g. 10.0.0.0/8, ::1), got '" + value + "'");
            }
            cidrs.add(cidr.toString());
        }
        return List.copyOf(cidrs);
    }

    /** Parses {@code forwarded-header}: {@code x-forwarded-for} or {@code forwarded} (any case). */
    public static ForwardedHeader parseForwardedHeader(String value) {
        String normal = value.trim().toLowerCase(Locale.ROOT);
        for (ForwardedHeader header : ForwardedHeader.values()) {
            if (header.configName().equals(normal)) {
                return header;
            }
        }
        throw new IllegalArgumentException("'forwarded-header' must be x-forwarded-for or forwarded, got '" + value + "'");
    }

    /** Parses {@code ipv6-prefix}: an integer from 32 to 128. */
    public static int parseIpv6Prefix(String value) {
        String trimmed = value.trim();
        if (trimmed.length() <= 3 && !trimmed.isEmpty() && trimmed.chars().allMatch(c -> c >= '0' && c <= '9')) {
            int prefix = Integer.parseInt(trimmed);
            if (prefix >= 32 && prefix <= 128) {
                return prefix;
            }
        }
        throw ipv6PrefixError(value);
    }

    /** Throws unless {@code prefix} is a valid {@code ipv6-prefix}, from 32 to 128. */
    public static int checkIpv6Prefix(int prefix) {
        if (prefix < 32 || prefix > 128) {
            throw ipv6PrefixError(Integer.toString(prefix));
        }
        return prefix;
    }

    private static IllegalArgumentException ipv6PrefixError(String raw) {
        return new IllegalArgumentException("'ipv6-prefix' must be an integer from 32 to 128, got '" + raw + "'");
    }

    private static long parsePositive(String parameter, String value) {
        try {
            long parsed = Long.parseLong(value.trim());
            if (parsed >= 1) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below with the parameter's name
        }
        throw new IllegalArgumentException("'" + parameter + "' must be an integer of at least 1, got '" + value + "'");
    }

    private static <T> T orDefault(Function<String, String> lookup, String name, Function<String, T> parser, T fallback) {
        String value = present(lookup.apply(name));
        return value == null ? fallback : parser.apply(value);
    }

    private static String present(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }
}
