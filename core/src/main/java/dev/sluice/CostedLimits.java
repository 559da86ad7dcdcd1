package dev.sluice;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

/**
 * A limiter's limits for every cost a request may spend, each list built (and validated)
 * once, so a request with its own cost builds nothing. The same cost gets the same
 * list instance, which stores may key on (the stores compile a limit instance once: {@code CompiledLimit}). Small costs
 * sit in an array; larger ones in a small bounded cache, since any cost up to the smallest capacity may be asked for.
 *
 * <p>Thread-safe.
 */
final class CostedLimits {

    /** Costs up to this one are kept in an array. */
    static final int ARRAY_COSTS = 64;
    /** How many larger costs are kept; one evicted is built again when asked for. */
    static final int CACHED_COSTS = 256;

    private final List<Limit> limits;
    private final long smallestCapacity;
    private final AtomicReferenceArray<List<Limit>> small;
    private final Cache<Long, List<Limit>> large;
    private final Function<Long, List<Limit>> builder = this::build;

    CostedLimits(List<Limit> limits) {
        this.limits = List.copyOf(limits);
        this.smallestCapacity = limits.stream().mapToLong(Limit::capacity).min().orElseThrow();
        this.small = new AtomicReferenceArray<>((int) Math.min(smallestCapacity, ARRAY_COSTS) + 1);
        // only limits that can grant more than the array holds need the cache
        this.large = smallestCapacity < small.length() ? null
                : Caffeine.newBuilder().maximumSize(CACHED_COSTS).executor(Runnable::run).build();
    }

    /** The limits as configured. */
    List<Limit> configured() {
        return limits;
    }

    /**
     * The limits with {@code cost}, or {@code null} if some limit can never grant it.
     *
     * @throws IllegalArgumentException if {@code cost} is below 1
     */
    List<Limit> withCost(long cost) {
        if (cost < 1) {
            throw new IllegalArgumentException("'cost' must be at least 1, got '" + cost + "'");
        }
        if (cost > smallestCapacity) {
            return null;
        }
        if (cost < small.length()) {
            int i = (int) cost;
            List<Limit> built = small.get(i);
            if (built == null) {
                // Racing builders build equal lists; the first one stored is the one kept.
                List<Limit> fresh = build(cost);
                List<Limit> witness = small.compareAndExchange(i, null, fresh);
                built = witness != null ? witness : fresh;
            }
            return built;
        }
        return large.get(cost, builder);
    }

    private List<Limit> build(long cost) {
        boolean same = true;
        List<Limit> costed = new ArrayList<>(limits.size());
        for (Limit limit : limits) {
            same &= limit.cost() == cost;
            costed.add(limit.cost() == cost ? limit : limit.withCost(cost));
        }
        if (same) {
            return limits;
        }
        return List.copyOf(costed);
    }
}
