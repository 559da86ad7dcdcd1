package dev.sluice.redis;

import dev.sluice.Limit;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;

import java.util.List;

/**
 * One caller's state under one set of limits, as a decision addresses it: the caller's storage tag
 * ({@link Keys#tag}), the limits, and the Redis key of each limit. Built once per decision, where
 * the store is entered, and handed down to the local rejections, the hot-key slices, the
 * coalescer (whose unit of batching it is) and the scripts, none of which builds it again.
 *
 * <p>Equal keys are the same caller under equal limits. The hash and the Redis keys are computed
 * on first need, once: a rejection repeated locally needs neither, a decision sent alone no hash.
 */
final class StorageKey {

    /** The caller's storage tag: the hash tag of every key below. */
    final String tag;
    final List<Limit> limits;
    // Racy on purpose, as String's hash: every thread computes the same hash, the same immutable list.
    private int hash;
    private List<Object> keys;

    /** The key of the caller whose storage tag is {@code tag}. */
    StorageKey(String tag, List<Limit> limits) {
        this.tag = tag;
        this.limits = limits;
    }

    /** The key of {@code caller} (an identity, not yet a tag) under {@code limits}. */
    static StorageKey of(String caller, List<Limit> limits) {
        return new StorageKey(Keys.tag(caller), limits);
    }

    /** The Redis key of each limit's state, in the limits' order. */
    List<Object> keys() {
        List<Object> built = keys;
        if (built == null) {
            Object[] each = new Object[limits.size()];
            for (int i = 0; i < each.length; i++) {
                each[i] = LimitKeys.key(tag, limits.get(i));
            }
            built = List.of(each);
            keys = built;
        }
        return built;
    }

    /**
     * The Redis key of each limit's state, then of each limit's returned slots (a token bucket's or
     * GCRA's slots given up inside its schedule; see {@code algorithms/bucket.lua}), in the limits' order:
     * for a reservation, a give-back, a pause and a reset, never for a decision.
     */
    List<Object> keysWithSlots() {
        List<Object> state = keys();
        Object[] each = new Object[2 * state.size()];
        for (int i = 0; i < state.size(); i++) {
            each[i] = state.get(i);
            each[state.size() + i] = slotsKey((String) state.get(i));
        }
        return List.of(each);
    }

    /** The key of the returned slots of the limit whose state is at {@code stateKey}. */
    static String slotsKey(String stateKey) {
        return stateKey + ":slots";
    }

    /** Whether {@code other} is under the same limits (usually the very list the limiter holds). */
    boolean sameLimits(StorageKey other) {
        return limits == other.limits || limits.equals(other.limits);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof StorageKey key && hashCode() == key.hashCode() && tag.equals(key.tag)
                && sameLimits(key);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {
            h = 31 * tag.hashCode() + limits.hashCode();
            hash = h;
        }
        return h;
    }
}
