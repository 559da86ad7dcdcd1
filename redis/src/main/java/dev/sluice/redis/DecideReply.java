package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

import static dev.sluice.redis.DecideScript.BATCH_PER_LIMIT;
import static dev.sluice.redis.DecideScript.VALUES_PER_LIMIT;
import static dev.sluice.redis.DecideScript.micros;
import static dev.sluice.redis.DecideScript.number;
import static dev.sluice.redis.DecideScript.quota;

/**
 * Reads one batch's reply of {@code decide.lua} (its layout: {@link DecideScript}) into the decision
 * of each of its requests: the admitted ones each after their own number of admissions, every
 * refused one the same answer.
 */
final class DecideReply {

    private DecideReply() {
    }

    /** Request {@code i}'s decision from one batch's reply. */
    static IntFunction<Decision> decisions(List<Object> values, List<Limit> limits) {
        // every refused request of a batch gets the same answer: decoded once, shared (immutable)
        Decision[] refused = new Decision[1];
        return request -> {
            if (request < number(values, 0)) {
                return decision(values, request, limits);
            }
            if (refused[0] == null) {
                refused[0] = decision(values, request, limits);
            }
            return refused[0];
        };
    }

    /**
     * The decision of request number {@code request} (from 0, in arrival order) in a reply: one
     * of the first {@code admitted} is allowed after {@code request + 1} admissions, with its own
     * remaining, reset and next unit; every later one is refused as the state after the batch says.
     */
    static Decision decision(List<Object> reply, int request, List<Limit> limits) {
        try {
            long admitted = number(reply, 0);
            int n = limits.size();
            List<Decision.Quota> quotas = new ArrayList<>(n);
            if (request < admitted) {
                long m = request + 1L;
                for (int i = 0; i < n; i++) {
                    int base = 1 + BATCH_PER_LIMIT * i;
                    long remaining = number(reply, base) - m * limits.get(i).cost();
                    quotas.add(quota(limits.get(i), true, remaining, micros(after(reply, base + 1, m)),
                            Duration.ZERO, micros(after(reply, base + 6, m))));
                }
                return new Decision(Decision.Outcome.ALLOWED, quotas, Duration.ZERO);
            }
            Duration retry = Duration.ZERO;
            for (int i = 0; i < n; i++) {
                int base = 1 + BATCH_PER_LIMIT * n + VALUES_PER_LIMIT * i;
                Duration limitRetry = micros(number(reply, base + 3));
                quotas.add(quota(limits.get(i), number(reply, base) == 1, number(reply, base + 1),
                        micros(number(reply, base + 2)), limitRetry, micros(number(reply, base + 4))));
                if (limitRetry.compareTo(retry) > 0) {
                    retry = limitRetry;
                }
            }
            return new Decision(Decision.Outcome.REJECTED, quotas, retry);
        } catch (RuntimeException e) {
            throw new IllegalStateException("unreadable reply from decide.lua: " + e, e);
        }
    }

    /**
     * {@code a + ceil((b + m c) / (d + m e))} from the five values at {@code index}:
     * the time after {@code m} admissions.
     */
    private static long after(List<Object> reply, int index, long m) {
        long divisor = number(reply, index + 3) + m * number(reply, index + 4);
        long dividend = number(reply, index + 1) + m * number(reply, index + 2);
        return number(reply, index) - Math.floorDiv(-dividend, divisor);
    }
}
