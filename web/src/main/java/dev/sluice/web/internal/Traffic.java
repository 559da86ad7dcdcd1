package dev.sluice.web.internal;

import dev.sluice.Decision;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one route decided, for the operator's console: counts by outcome since start, allowed and
 * refused per second over the last {@value #SECONDS} seconds (a ring of one slot per second), and
 * the callers refused most often lately (a bounded Space-Saving sketch of {@value #SKETCH}
 * counters, halved every minute so that it shows who is refused now). Memory is fixed whatever
 * the traffic. A decision costs one counter increment and, per second, one slot turnover; only a
 * refusal touches the sketch, under its lock.
 *
 * <p>Thread-safe. The per-second counts are approximate at slot boundaries (a decision racing a
 * turnover may land in the new second), which a chart does not show.
 */
final class Traffic {

    /** How many seconds the per-second series covers. */
    static final int SECONDS = 300;
    /** How many distinct refused callers the sketch follows. */
    static final int SKETCH = 64;
    private static final long HALVING_MILLIS = 60_000;

    private final LongAdder[] outcomes = new LongAdder[Decision.Outcome.values().length];
    /** Per slot: the epoch second it counts, allowed, refused. */
    private final AtomicLongArray slots = new AtomicLongArray(SECONDS * 3);
    private final Map<String, Refused> sketch = new HashMap<>();
    private long sketchHalved = System.currentTimeMillis();

    Traffic() {
        for (int i = 0; i < outcomes.length; i++) {
            outcomes[i] = new LongAdder();
        }
    }

    /** One caller refused lately: its identity, its partition key, an estimate of how often. */
    record Refused(String identity, String partition, long count) {
    }

    /** Counts one decision of {@code caller} (whose partition key is {@code partition}). */
    void record(Decision.Outcome outcome, String caller, String partition) {
        outcomes[outcome.ordinal()].increment();
        boolean refused = outcome == Decision.Outcome.REJECTED || outcome == Decision.Outcome.LOCAL_REJECTED
                || outcome == Decision.Outcome.FAILED_CLOSED || outcome == Decision.Outcome.UNSATISFIABLE;
        long second = System.currentTimeMillis() / 1000;
        int slot = (int) (second % SECONDS) * 3;
        long stamp = slots.get(slot);
        if (stamp != second && slots.compareAndSet(slot, stamp, second)) {
            slots.set(slot + 1, 0);
            slots.set(slot + 2, 0);
        }
        slots.incrementAndGet(slot + (refused ? 2 : 1));
        if (refused) {
            refuse(caller, partition);
        }
    }

    private synchronized void refuse(String caller, String partition) {
        Refused known = sketch.get(caller);
        if (known != null) {
            sketch.put(caller, new Refused(caller, partition, known.count + 1));
        } else if (sketch.size() < SKETCH) {
            sketch.put(caller, new Refused(caller, partition, 1));
        } else {
            // Space-Saving: the newcomer takes the least counted place and its count, plus one.
            Refused least = sketch.values().stream().min(Comparator.comparingLong(Refused::count)).orElseThrow();
            sketch.remove(least.identity);
            sketch.put(caller, new Refused(caller, partition, least.count + 1));
        }
    }

    /** The decisions of each outcome since start, by the outcome's lower-case name. */
    Map<String, Long> counts() {
        Map<String, Long> out = new java.util.LinkedHashMap<>();
        for (Decision.Outcome outcome : Decision.Outcome.values()) {
            out.put(outcome.name().toLowerCase(java.util.Locale.ROOT), outcomes[outcome.ordinal()].sum());
        }
        return out;
    }

    /**
     * Allowed ({@code [0]}) and refused ({@code [1]}) decisions of each of the last {@code seconds}
     * whole seconds, oldest first, the current (incomplete) second excluded.
     */
    long[][] perSecond(int seconds) {
        int n = Math.min(seconds, SECONDS - 1);
        long now = System.currentTimeMillis() / 1000;
        long[][] out = new long[2][n];
        for (int i = 0; i < n; i++) {
            long second = now - n + i;
            int slot = (int) (second % SECONDS) * 3;
            if (slots.get(slot) == second) {
                out[0][i] = slots.get(slot + 1);
                out[1][i] = slots.get(slot + 2);
            }
        }
        return out;
    }

    /** The {@code n} callers refused most often lately, most first. */
    synchronized List<Refused> topRefused(int n) {
        long now = System.currentTimeMillis();
        while (now - sketchHalved >= HALVING_MILLIS) {
            sketchHalved += HALVING_MILLIS;
            sketch.replaceAll((caller, refused) -> new Refused(caller, refused.partition, refused.count / 2));
            sketch.values().removeIf(refused -> refused.count == 0);
        }
        List<Refused> out = new ArrayList<>(sketch.values());
        out.sort(Comparator.comparingLong(Refused::count).reversed());
        return List.copyOf(out.subList(0, Math.min(n, out.size())));
    }

    /** Forgets {@code caller} in the sketch, once it was reset. */
    synchronized void forget(String caller) {
        sketch.remove(caller);
    }
}
