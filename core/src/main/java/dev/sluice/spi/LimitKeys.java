package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.internal.Keys;

/**
 * The storage key of one limit's state for a caller: {@code sluice:{<tag>}:<policy>:<suffix>}
 * ({@link Keys}), the suffix naming the algorithm ({@code tb}, {@code gcra}, {@code sw},
 * {@code fw}, {@code sl}, {@code cc}). Key names are part of the stored state's format: a renamed
 * key reads as absent, so these never change within a release line.
 *
 * <p>Audience: store authors; a store that keeps state by key uses these names so that its keys
 * read like every other store's.
 */
public final class LimitKeys {

    private LimitKeys() {
    }

    /** The key of {@code limit}'s state for a caller's storage tag ({@link Keys#tag}). */
    public static String key(String tag, Limit limit) {
        return Keys.key(tag, limit.policy(), suffix(limit.algorithm()));
    }

    /** The short suffix of {@code algorithm}'s keys, e.g. {@code tb}. */
    public static String suffix(Algorithm algorithm) {
        return switch (algorithm) {
            case TOKEN_BUCKET -> "tb";
            case GCRA -> "gcra";
            case SLIDING_WINDOW -> "sw";
            case FIXED_WINDOW -> "fw";
            case SLIDING_LOG -> "sl";
            case CONCURRENCY -> "cc";
        };
    }
}
