package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.algorithm.Verdict;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;

/** Turns the verdicts of a caller's limits into the {@link Decision} the store answers. */
final class Decisions {

    private Decisions() {
    }

    /** The decision these verdicts make; a refusal's retry-after is its longest quota's. */
    static Decision of(boolean all, List<Limit> limits, Verdict[] verdicts) {
        Decision.Quota[] quotas = new Decision.Quota[limits.size()];
        int longest = 0;
        for (int i = 0; i < quotas.length; i++) {
            Verdict v = verdicts[i];
            quotas[i] = new Decision.Quota(limits.get(i), v.fits(), v.remaining(), micros(v.resetMicros()),
                    micros(v.retryMicros()), micros(v.nextMicros()));
            if (v.retryMicros() > verdicts[longest].retryMicros()) {
                longest = i;
            }
        }
        return all
                ? new Decision(Decision.Outcome.ALLOWED, List.of(quotas), Duration.ZERO)
                : new Decision(Decision.Outcome.REJECTED, List.of(quotas), quotas[longest].retryAfter());
    }

    static Duration micros(long value) {
        return value == 0 ? Duration.ZERO
                : Math.abs(value) < Long.MAX_VALUE / 1_000 ? Duration.ofNanos(value * 1_000)
                : Duration.of(value, ChronoUnit.MICROS);
    }
}
