package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.spi.CompiledLimit;

import java.time.Duration;
import java.util.List;

/**
 * A sliced caller's bucket as decide.lua would hold it, without what the slice still holds, so
 * that a request granted from a slice is answered (remaining, reset, next unit) as decide.lua
 * would have answered it. It differs from Redis's once the bucket would have been full: decide.lua
 * loses the refill past the full, while Redis, the slice still counted in it, does not; what the
 * bucket would have lost is charged back when the slice is handed back ({@link #handBack}).
 *
 * <p>Not thread-safe: its {@link Slice}'s lock guards it.
 */
final class TwinBucket {

    /** No time yet (a System.nanoTime reading may be any long, but this one hardly). */
    private static final long NONE = Long.MIN_VALUE;

    private final Limit limit;
    private final TimeSource testTime;
    private final long perToken;
    private final long perMicro;
    private final long capacity;
    /** The units used in Redis after the last call (the whole slice counted), and how far its time was ahead. */
    private long debt;
    private long skew;
    private long takenAtMicros;
    /** The script's time at the last call. */
    private long callNow;
    /** The units used at {@code twinAt} (the bucket's time, on {@link #micros()}). */
    private long twinDebt;
    private long twinAt;
    /** When the last request was granted here, on {@link #micros()}; {@link #NONE} before any. */
    private long lastGrantMicros = NONE;

    /** @param testTime the clock to use instead of the Redis server's, or {@code null} in production */
    TwinBucket(Limit limit, TimeSource testTime) {
        this.limit = limit;
        this.testTime = testTime;
        CompiledLimit compiled = CompiledLimit.of(limit);
        this.perToken = compiled.unitsPerToken();
        this.perMicro = compiled.unitsPerMicro();
        this.capacity = compiled.capacityUnits();
    }

    /** A slice.lua reply that left the slice {@code got} requests: the bucket as of that call. */
    void taken(List<Object> reply, long got) {
        debt = DecideScript.number(reply, 5);
        skew = DecideScript.number(reply, 6);
        twinDebt = debt - got * limit.cost() * perToken;
        callNow = DecideScript.number(reply, 7);
        // the reply's numbers are as of callNow: on the test clock exactly, on this
        // JVM's clock from when the reply came
        takenAtMicros = testTime == null ? micros() : callNow;
        twinAt = takenAtMicros + skew;
    }

    /**
     * What a call giving back {@code give} requests sends besides: when the last request was
     * granted here, on the script's clock (the state is written as of then, as decide.lua left
     * it at that request), and the units the bucket would have lost to the full since the
     * call (charged back, so that lending a slice never leaves the bucket fuller than
     * decide.lua would); '' and 0 when there is nothing to write. Called with no grant
     * possible meanwhile (a call is due, or the slice is dead).
     */
    String[] handBack(long give) {
        if (lastGrantMicros == NONE || (give == 0 && lastGrantMicros <= takenAtMicros)) {
            return new String[] {"", "0"};
        }
        long at = callNow + Math.max(0, lastGrantMicros - takenAtMicros);
        long stamp = takenAtMicros + skew;
        long inRedis = Math.max(0, drained(debt, Math.max(0, twinAt - stamp)) - give * limit.cost() * perToken);
        return new String[] {Long.toString(at), Long.toString(Math.max(0, twinDebt - inRedis))};
    }

    /**
     * The answer to one request granted from the slice, as decide.lua answers it: from this
     * bucket, refilled to now, with the request spent.
     */
    Decision grant() {
        long now = micros();
        long t = Math.max(now, twinAt);
        twinDebt = drained(twinDebt, t - twinAt) + limit.cost() * perToken;
        twinAt = t;
        lastGrantMicros = now;
        long ahead = t - now;
        long remaining = Math.floorDiv(capacity - twinDebt, perToken);
        long reset = ahead + ceilDiv(twinDebt, perMicro);
        long next = ahead + ceilDiv(twinDebt + (remaining + 1) * perToken - capacity, perMicro);
        Decision.Quota quota = DecideScript.quota(limit, true, remaining, DecideScript.micros(reset), Duration.ZERO,
                DecideScript.micros(next));
        return new Decision(Decision.Outcome.ALLOWED, List.of(quota), Duration.ZERO);
    }

    /** The refusal of the requests a call found no budget for: nothing of theirs was spent. */
    Decision rejected(List<Object> reply) {
        Duration retry = DecideScript.micros(DecideScript.number(reply, 3));
        Decision.Quota quota = DecideScript.quota(limit, false, DecideScript.number(reply, 1),
                DecideScript.micros(DecideScript.number(reply, 2)), retry,
                DecideScript.micros(DecideScript.number(reply, 4)));
        return new Decision(Decision.Outcome.REJECTED, List.of(quota), retry);
    }

    /** The clock a slice's decisions count down on: the store's (the test clock in tests). */
    private long micros() {
        return testTime == null ? System.nanoTime() / 1_000 : testTime.nowMicros();
    }

    /** Units used, {@code micros} of refill later (none left once it covers them all). */
    private long drained(long units, long micros) {
        return units <= 0 || micros >= ceilDiv(units, perMicro) ? 0 : units - micros * perMicro;
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
