package dev.sluice.web.internal;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * The per-application (per-filter) rules about callers that are not HTTP settings: where a
 * request's tier comes from ({@code tier}) and which client networks are never limited
 * ({@code exempt}). Parsed once at start-up by {@link #parse}; in JAX-RS they are the
 * {@code sluice.tier} and {@code sluice.exempt} properties.
 *
 * @param tier   where a request's tier comes from; {@code null}: no tiers
 * @param exempt client networks never limited, never counted and sent no rate-limit headers,
 *               normalised CIDRs; the client address is found as for {@code key=ip}
 */
public record CallerRules(TierSource tier, List<String> exempt) {

    /** No tier source, no exemption. */
    public static final CallerRules NONE = new CallerRules(null, List.of());

    /** Validates and copies the components. */
    public CallerRules {
        exempt = List.copyOf(exempt);
        exempt.forEach(cidr -> Objects.requireNonNull(Cidr.parse(cidr), cidr));
    }

    /**
     * Parses {@code tier} and {@code exempt} from raw values ({@code null} or blank: absent).
     *
     * @throws ParameterException naming the first bad parameter and its value
     */
    public static CallerRules parse(Function<String, String> lookup) {
        return new CallerRules(Parameter.TIER.parse(lookup, TierSource::parse, null),
                Parameter.EXEMPT.parse(lookup, CallerRules::parseExempt, List.of()));
    }

    /** The networks of {@code exempt}, parsed for matching. */
    Cidr[] exemptNetworks() {
        return exempt.stream().map(Cidr::parse).toArray(Cidr[]::new);
    }

    private static List<String> parseExempt(String value) {
        return Cidr.parseList(Parameter.EXEMPT, value);
    }
}
