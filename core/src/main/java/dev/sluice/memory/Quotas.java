package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.algorithm.Verdict;

import java.time.Duration;
import java.util.List;

import static dev.sluice.memory.MemoryStore.micros;

/** Turns the verdicts of a caller's limits into the {@link Decision} the store answers. */
final class Quotas {

    private Quotas() {
    }

    /**
     * The decision these verdicts make, one quota per limit. Equal durations share one instance
     * (a refusal's retry-after is its binding quota's), and one limit needs no array.
     */
    static Decision decision(boolean all, List<Limit> limits, Verdict[] verdicts) {
        List<Decision.Quota> quotas;
        Decision.Quota longest;
        if (limits.size() == 1) {
            longest = quota(limits.get(0), verdicts[0]);
            quotas = List.of(longest);
        } else {
            Decision.Quota[] each = new Decision.Quota[limits.size()];
            int at = 0;
            for (int i = 0; i < each.length; i++) {
                each[i] = quota(limits.get(i), verdicts[i]);
                if (verdicts[i].retryMicros() > verdicts[at].retryMicros()) {
                    at = i;
                }
            }
            longest = each[at];
            quotas = List.of(each);
        }
        return all
                ? new Decision(Decision.Outcome.ALLOWED, quotas, Duration.ZERO)
                : new Decision(Decision.Outcome.REJECTED, quotas, longest.retryAfter());
    }

    /** The refusal of one limit's verdict: its retry-after is the quota's. */
    static Decision refusal(Limit limit, Verdict v) {
        Decision.Quota quota = quota(limit, v);
        return new Decision(Decision.Outcome.REJECTED, List.of(quota), quota.retryAfter());
    }

    /** Whether {@code last} is the admission under {@code limit} alone with these numbers. */
    static boolean admits(Decision last, Limit limit, long remaining, Duration reset, Duration retry, Duration next) {
        Decision.Quota q = last.quotas().get(0);
        return q.limit() == limit && q.remaining() == remaining && q.reset().equals(reset)
                && q.retryAfter().equals(retry) && q.nextUnit().equals(next);
    }

    static Decision.Quota quota(Limit limit, Verdict v) {
        return quota(limit, v, micros(v.resetMicros()));
    }

    /** The quota of {@code v}, whose {@code reset} is given; retry and next unit share it when equal. */
    static Decision.Quota quota(Limit limit, Verdict v, Duration reset) {
        Duration retry = retry(v, reset);
        return new Decision.Quota(limit, v.fits(), v.remaining(), reset, retry, next(v, reset, retry));
    }

    /** The retry-after of {@code v}: {@code reset} itself when equal. */
    static Duration retry(Verdict v, Duration reset) {
        return v.retryMicros() == v.resetMicros() ? reset : micros(v.retryMicros());
    }

    /** The next unit of {@code v}: {@code reset} or {@code retry} itself when equal. */
    static Duration next(Verdict v, Duration reset, Duration retry) {
        return v.nextMicros() == v.resetMicros() ? reset : v.nextMicros() == v.retryMicros() ? retry
                : micros(v.nextMicros());
    }
}
