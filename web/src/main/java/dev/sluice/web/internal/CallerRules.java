package dev.sluice.web.internal;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * How an application (a filter, a JAX-RS feature, Spring MVC) finds and sorts the callers of its
 * requests, parsed once at start-up by {@link #parse} into the values the per-request path
 * matches against: which socket peers are proxies whose forwarding header is believed
 * ({@code trusted-proxies}, {@code forwarded-header}), the network an IPv6 client is keyed by
 * ({@code ipv6-prefix}), the client networks never limited ({@code exempt}) and where a request's
 * tier comes from ({@code tier}). In JAX-RS they are the {@code sluice.*} properties of the same
 * names. Immutable.
 *
 * @param trustedProxies  networks whose forwarding header is believed
 * @param forwardedHeader the forwarding header read from trusted proxies; the other is ignored
 * @param ipv6Prefix      the prefix length IPv6 clients are keyed by for {@code ip}, 32 to 128
 * @param exempt          client networks never limited, never counted and sent no rate-limit
 *                        headers; the client address is found as for {@code key=ip}
 * @param tier            where a request's tier comes from; {@code null}: no tiers
 */
public record CallerRules(List<Cidr> trustedProxies, ForwardedHeader forwardedHeader, int ipv6Prefix,
                          List<Cidr> exempt, TierSource tier) {

    /** Every default: no proxy, {@code x-forwarded-for}, 64, no exemption, no tier source. */
    public static final CallerRules NONE = new CallerRules(List.of(), ForwardedHeader.X_FORWARDED_FOR, 64, List.of(),
            null);

    /** Validates and copies the components. */
    public CallerRules {
        trustedProxies = List.copyOf(trustedProxies);
        Objects.requireNonNull(forwardedHeader, "forwardedHeader");
        checkIpv6Prefix(ipv6Prefix);
        exempt = List.copyOf(exempt);
    }

    /**
     * Parses {@code trusted-proxies}, {@code forwarded-header}, {@code ipv6-prefix}, {@code tier}
     * and {@code exempt} from raw values ({@code null} or blank: absent), applying the defaults of
     * {@link #NONE}.
     *
     * @throws ParameterException naming the first bad parameter and its value
     */
    public static CallerRules parse(Function<String, String> lookup) {
        CallerRules d = NONE;
        List<Cidr> trusted = Parameter.TRUSTED_PROXIES.parse(lookup,
                v -> Cidr.parseList(Parameter.TRUSTED_PROXIES, v), d.trustedProxies);
        ForwardedHeader header = Parameter.FORWARDED_HEADER.parse(lookup, ForwardedHeader::parse, d.forwardedHeader);
        int prefix = Parameter.IPV6_PREFIX.parse(lookup, CallerRules::parseIpv6Prefix, d.ipv6Prefix);
        TierSource tier = Parameter.TIER.parse(lookup, TierSource::parse, d.tier);
        List<Cidr> exempt = Parameter.EXEMPT.parse(lookup, v -> Cidr.parseList(Parameter.EXEMPT, v), d.exempt);
        return new CallerRules(trusted, header, prefix, exempt, tier);
    }

    /**
     * A copy trusting {@code cidrs}, in the syntax of {@code trusted-proxies}; empty trusts none.
     *
     * @throws IllegalArgumentException naming the value if it is malformed
     */
    public CallerRules withTrustedProxies(String cidrs) {
        return new CallerRules(Cidr.parseList(Parameter.TRUSTED_PROXIES, Objects.requireNonNull(cidrs, "cidrs")),
                forwardedHeader, ipv6Prefix, exempt, tier);
    }

    /**
     * A copy reading {@code header}, in the syntax of {@code forwarded-header}, from trusted proxies.
     *
     * @throws IllegalArgumentException naming the value if it is neither header
     */
    public CallerRules withForwardedHeader(String header) {
        return new CallerRules(trustedProxies, ForwardedHeader.parse(Objects.requireNonNull(header, "header")),
                ipv6Prefix, exempt, tier);
    }

    /** A copy keying IPv6 clients by their network of {@code prefix} bits, 32 to 128. */
    public CallerRules withIpv6Prefix(int prefix) {
        return new CallerRules(trustedProxies, forwardedHeader, prefix, exempt, tier);
    }

    private static int parseIpv6Prefix(String value) {
        if (value.length() <= 3 && value.chars().allMatch(c -> c >= '0' && c <= '9')) {
            int prefix = Integer.parseInt(value);
            if (prefix >= 32 && prefix <= 128) {
                return prefix;
            }
        }
        throw ipv6PrefixError(value);
    }

    /** Throws unless {@code prefix} is a valid {@code ipv6-prefix}, from 32 to 128. */
    private static void checkIpv6Prefix(int prefix) {
        if (prefix < 32 || prefix > 128) {
            throw ipv6PrefixError(Integer.toString(prefix));
        }
    }

    private static IllegalArgumentException ipv6PrefixError(String raw) {
        return new IllegalArgumentException("'ipv6-prefix' must be an integer from 32 to 128, got '" + raw + "'");
    }
}
