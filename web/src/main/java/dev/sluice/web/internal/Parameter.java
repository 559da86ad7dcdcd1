package dev.sluice.web.internal;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * The one list of Sluice's configuration parameters: the servlet filter's init-params, the
 * {@code @RateLimit} attributes ({@link Scope#ROUTE}) and the JAX-RS {@code sluice.*} properties
 * ({@link Scope#APPLICATION}) are these names, parsed by {@link RouteSpec#parse} and
 * {@link WebSettings#parse}.
 *
 * <p>Not API: this package may change in any release.
 */
public enum Parameter {
    /** {@code policy}: the limit's name in keys and headers. */
    POLICY("policy", Scope.ROUTE),
    /** {@code algorithm}: how requests are counted. */
    ALGORITHM("algorithm", Scope.ROUTE),
    /** {@code limit}: {@code <count>/<period>}, required. */
    LIMIT("limit", Scope.ROUTE),
    /** {@code burst}: the bucket's capacity. */
    BURST("burst", Scope.ROUTE),
    /** {@code key}: where the caller's identity comes from. */
    KEY("key", Scope.ROUTE),
    /** {@code cost}: units one request spends. */
    COST("cost", Scope.ROUTE),
    /** {@code failure-mode}: {@code open}, {@code closed} or {@code local} when the store fails. */
    FAILURE_MODE("failure-mode", Scope.ROUTE),
    /** {@code charge}: {@code before} the request runs, or {@code after} its response status is known. */
    CHARGE("charge", Scope.ROUTE),
    /**
     * {@code charge-when}: with {@code charge=after}, the statuses that are charged, such as {@code 401,403} or
     * {@code 4xx}.
     */
    CHARGE_WHEN("charge-when", Scope.ROUTE),
    /** {@code lease}: with {@code algorithm=concurrency}, the longest a request holds its place. */
    LEASE("lease", Scope.ROUTE),
    /** {@code store}: {@code memory}, a Redis URI or {@code redisson:PATH}. */
    STORE("store", Scope.APPLICATION),
    /** {@code timeout}: the longest one decision waits on the store. */
    TIMEOUT("timeout", Scope.APPLICATION),
    /** {@code headers}: which rate-limit headers to send. */
    HEADERS("headers", Scope.APPLICATION),
    /** {@code partition-key}: whether draft headers carry {@code pk}. */
    PARTITION_KEY("partition-key", Scope.APPLICATION),
    /** {@code trusted-proxies}: peers whose forwarding header is believed. */
    TRUSTED_PROXIES("trusted-proxies", Scope.APPLICATION),
    /** {@code forwarded-header}: the one forwarding header trusted proxies write. */
    FORWARDED_HEADER("forwarded-header", Scope.APPLICATION),
    /** {@code ipv6-prefix}: the network an IPv6 client is keyed by. */
    IPV6_PREFIX("ipv6-prefix", Scope.APPLICATION),
    /** {@code mode}: {@code enforce} or {@code shadow}. */
    MODE("mode", Scope.APPLICATION),
    /**
     * {@code reject}: how a refusal is answered, {@code problem}, {@code send-error} (servlet) or {@code exception}
     * (JAX-RS).
     */
    REJECT("reject", Scope.APPLICATION),
    /** {@code metrics}: whether to publish to Micrometer. */
    METRICS("metrics", Scope.APPLICATION),
    /** {@code local-share}: the share of each limit {@code failure-mode=local} grants in this JVM. */
    LOCAL_SHARE("local-share", Scope.APPLICATION),
    /** {@code tier}: where a request's tier comes from, {@code role}, {@code attribute:NAME} or {@code header:NAME}. */
    TIER("tier", Scope.APPLICATION),
    /** {@code tier-limits}: named tiers' limits, {@code premium:1000/1h,internal:unlimited}. */
    TIER_LIMITS("tier-limits", Scope.ROUTE),
    /** {@code exempt}: client networks never limited. */
    EXEMPT("exempt", Scope.APPLICATION),
    /** {@code methods}: the HTTP methods limited; default all. */
    METHODS("methods", Scope.ROUTE);

    /** Where a parameter is given in JAX-RS; the servlet filter takes both kinds as init-params. */
    public enum Scope {
        /** Per limited route: a {@code @RateLimit} attribute. */
        ROUTE,
        /** Per application (or filter): a {@code sluice.*} JAX-RS property. */
        APPLICATION
    }

    private final String configName;
    private final Scope scope;

    Parameter(String configName, Scope scope) {
        this.configName = configName;
        this.scope = scope;
    }

    /** The name in {@code web.xml} and, prefixed {@code sluice.}, in JAX-RS properties: {@code failure-mode}. */
    public String configName() {
        return configName;
    }

    /** Whether the parameter is per route or per application. */
    public Scope scope() {
        return scope;
    }

    /** The parameters of one scope, in declaration order. */
    public static List<Parameter> of(Scope scope) {
        return Arrays.stream(values()).filter(p -> p.scope == scope).toList();
    }

    /**
     * The parameter of a name; throws for a name outside the vocabulary, so that a typo such as
     * {@code limt} fails start-up instead of being ignored.
     *
     * @throws IllegalArgumentException naming the name and every known one
     */
    public static Parameter named(String name) {
        for (Parameter parameter : values()) {
            if (parameter.configName.equals(name)) {
                return parameter;
            }
        }
        throw new IllegalArgumentException("'" + name + "' is not a Sluice parameter; known: "
                + String.join(", ", Arrays.stream(values()).map(Parameter::configName).sorted().toList()));
    }

    /** The trimmed raw value of this parameter, or {@code null} if it is absent or blank. */
    String raw(Function<String, String> lookup) {
        String value = lookup.apply(configName);
        return value == null || value.isBlank() ? null : value.trim();
    }

    /**
     * This parameter parsed from {@code lookup}, or {@code fallback} if absent; a parser's error
     * becomes a {@link ParameterException} naming this parameter.
     */
    <T> T parse(Function<String, String> lookup, Function<String, T> parser, T fallback) {
        String value = raw(lookup);
        if (value == null) {
            return fallback;
        }
        try {
            return parser.apply(value);
        } catch (ParameterException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            throw new ParameterException(this, e);
        }
    }
}
