package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.redis.LettuceStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.redis.ScriptBatches;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import dev.sluice.tck.RateLimitStoreKit;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Random traces of (time step, caller, cost) must get the same decisions from the Lua script in
 * Redis as from its Java twin in memory; and GCRA must admit exactly what the token bucket admits.
 * Twice in each trace the limits change (same policies, random counts, periods and bursts), so
 * that both stores also read state written under other parameters alike.
 *
 * <p>Batches too: decide.lua decides a coalesced batch of identical requests arithmetically, in
 * one read and one write per limit; the Java twin decides the same requests one by one, and every
 * request's decision must be the same.
 *
 * <p>Periods are long (a minute or more) so that real-time TTLs in Redis cannot expire a key
 * during a trace driven by the injected clock; rates are chosen so that one token is a
 * fractional number of microseconds, exercising the fixed-point arithmetic.
 */
class TwinTest {

    private static final long[] PERIOD_SECONDS = {60, 97, 3_600, 86_400};
    private static final int TRACES = 12;
    private static final int STEPS = 150;
    /** The steps from which the limits change: a redeploy with other counts, periods and bursts. */
    private static final int[] CHANGES = {50, 100};

    private static StatefulRedisConnection<String, String> lettuce;

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void redisScriptAndJavaTwinDecideAlike(Algorithm algorithm) {
        twinsAgree(algorithm, false);
    }

    /** The same traces with a refund (refund.lua, RateAlgorithm.refund) before about a third of the decisions. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void redisScriptAndJavaTwinRefundAlike(Algorithm algorithm) {
        twinsAgree(algorithm, true);
    }

    /**
     * The same traces with reservations (reserve.lua, memory.Reservation) and
     * pauses (pause.lua, RateAlgorithm.pause) before
     * about a third of the decisions, each of a random longest wait, and some given up by their
     * waiters (giveback.lua, RateAlgorithm.giveBack), the last one booked or an earlier one (whose
     * slot a bucket keeps for a later reservation to take): every reservation, where it ends each
     * schedule, and every decision after them must be the same.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void redisScriptAndJavaTwinReserveAlike(Algorithm algorithm) {
        twinsAgree(algorithm, true, true);
    }

    /**
     * The same traces, with refunds and reservations, on a Redis store that decides every caller
     * from slices of its budget (a hot-key threshold of one decision a second): each decision
     * granted from a slice, or by the call that takes the next one, must be the one decide.lua
     * gives, wherever the injected clock has moved since the slice was taken.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void callersDecidedFromSlicesGetTheJavaTwinsDecisions(Algorithm algorithm) {
        Function<TimeSource, RateLimitStore> sliced = time -> RedisStore.builder().client(Stores.client())
                .timeSourceForTesting(time).localRejections(0).hotKeyThreshold(1).build();
        twinsAgree(algorithm, false, false, sliced);
        twinsAgree(algorithm, true, false, sliced);
        twinsAgree(algorithm, true, true, sliced);
    }

    /**
     * The same traces, with refunds and reservations, on the Lettuce store: one Lua source and one
     * Java side of it, whichever client sends the scripts.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void onLettuceTheScriptsAndTheJavaTwinDecideAlike(Algorithm algorithm) {
        Function<TimeSource, RateLimitStore> lettuce = time -> LettuceStore.builder().connection(lettuce())
                .timeSourceForTesting(time).localRejections(0).build();
        twinsAgree(algorithm, false, false, lettuce);
        twinsAgree(algorithm, true, true, lettuce);
    }

    /** One Lettuce connection the Lettuce stores of these traces borrow (one per test JVM). */
    private static synchronized StatefulRedisConnection<String, String> lettuce() {
        if (lettuce == null) {
            RedisClient client = RedisClient.create(TestRedis.shared().url());
            lettuce = client.connect(StringCodec.UTF8);
            Runtime.getRuntime().addShutdownHook(new Thread(client::shutdown));
        }
        return lettuce;
    }

    private static void twinsAgree(Algorithm algorithm, boolean refunds) {
        twinsAgree(algorithm, refunds, false);
    }

    private static void twinsAgree(Algorithm algorithm, boolean refunds, boolean reservations) {
        // the script itself, without the local cache of rejections that sits in front of it
        twinsAgree(algorithm, refunds, reservations, time -> RedisStore.builder().client(Stores.client())
                .timeSourceForTesting(time).localRejections(0).build());
    }

    private static void twinsAgree(Algorithm algorithm, boolean refunds, boolean reservations,
                                   Function<TimeSource, RateLimitStore> redisStore) {
        for (int trace = 0; trace < TRACES; trace++) {
            long seed = algorithm.ordinal() * 1_000L + trace;
            List<List<Limit>> limits = randomChanges(new SplittableRandom(seed), algorithm);
            List<String> memoryEnds = new ArrayList<>();
            List<String> redisEnds = new ArrayList<>();
            List<Decision> memory = play(Stores.MEMORY::create, limits, seed, refunds, reservations, memoryEnds);
            List<Decision> redis = play(redisStore, limits, seed, refunds, reservations, redisEnds);
            for (int i = 0; i < memory.size(); i++) {
                assertThat(redis.get(i)).as("seed %d%s%s step %d, limits %s", seed, refunds ? " with refunds" : "",
                        reservations ? " and reservations" : "", i, limits).isEqualTo(memory.get(i));
            }
            assertThat(redisEnds).as("seed %d: where the reservations end each schedule, limits %s", seed, limits)
                    .isEqualTo(memoryEnds);
        }
    }

    /**
     * Traces of reservations queued far ahead on a bucket (alone, or with a fixed window beside
     * it), many given up from the middle of the schedule, with decisions and clock steps between
     * them: reserve.lua and giveback.lua must keep and take the returned slots
     * (the bucket's {@code :slots} key) exactly as memory.Reservation and RateAlgorithm.giveBack do,
     * and
     * the traces must take some.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void returnedSlotsAreKeptAndTakenAlike(Algorithm algorithm) {
        long taken = 0;
        for (int trace = 0; trace < TRACES / 2; trace++) {
            long seed = 90_000L + algorithm.ordinal() * 1_000L + trace;
            List<Object> memory = givenUpTrace(Stores.MEMORY::create, algorithm, seed);
            List<Object> redis = givenUpTrace(time -> RedisStore.builder().client(Stores.client())
                    .timeSourceForTesting(time).localRejections(0).build(), algorithm, seed);
            assertThat(redis).as("seed %d", seed).isEqualTo(memory);
            // a reservation that took a returned slot ends the bucket's schedule at "slot, -1"
            taken += memory.stream().filter(step -> step.toString().contains(", -1, ")).count();
        }
        assertThat(taken).as("reservations that took a returned slot, in all traces of " + algorithm).isPositive();
    }

    /** One trace of {@link #returnedSlotsAreKeptAndTakenAlike}: each decision, and each booking's ends. */
    private static List<Object> givenUpTrace(Function<TimeSource, RateLimitStore> store, Algorithm algorithm,
            long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        ManualClock clock = new ManualClock(ManualClock.ALIGNED_START + random.nextLong(1_000_000_000L));
        RateLimitStore shared = store.apply(clock);
        String caller = "returned-" + UUID.randomUUID();
        // an interval of at least 30 s: real-time TTLs in Redis outlive the trace
        Limit bucket = Limit.of("returned-bucket", 1 + random.nextInt(20),
                Duration.ofSeconds(600 + random.nextInt(3_000)))
                .withBurst(1 + random.nextInt(3)).withAlgorithm(algorithm);
        Limit window = Limit.of("returned-window", 20 + random.nextInt(40), Duration.ofHours(1 + random.nextInt(3)))
                .withAlgorithm(Algorithm.FIXED_WINDOW);
        List<Limit> limits = random.nextBoolean() ? List.of(bucket) : List.of(bucket, window);
        long interval = bucket.periodMicros() / bucket.count();
        List<Booked> booked = new ArrayList<>();
        List<Object> trace = new ArrayList<>();
        for (int step = 0; step < 120; step++) {
            if (random.nextInt(4) == 0) {
                clock.set(clock.nowMicros() + 1 + random.nextLong(2 * interval));
            }
            int what = random.nextInt(10);
            if (what < 5) {
                long cost = Math.min(1 + random.nextInt(2), bucket.capacity());
                List<Limit> costed = limits.stream().map(l -> l.withCost(cost)).toList();
                Duration ahead = Duration.ofNanos(random.nextLong(30 * interval) * 1_000);
                RateLimitStore.Booking booking = shared.book(caller, costed, ahead).toCompletableFuture().join();
                trace.add(booking.decision());
                trace.add("ends " + java.util.Arrays.toString(booking.ends()));
                if (booking.decision().outcome() == Decision.Outcome.ALLOWED) {
                    booked.add(new Booked(caller, costed, booking));
                }
            } else if (what < 9 && !booked.isEmpty()) {
                Booked given = booked.remove(random.nextInt(booked.size()));
                shared.giveBack(given.caller(), given.limits(), given.booking()).toCompletableFuture().join();
                trace.add("given back");
            } else {
                trace.add(shared.decide(caller, limits).toCompletableFuture().join());
            }
        }
        return trace;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void aBatchInOneScriptCallDecidesAsTheJavaTwinDecidesItsRequestsOneByOne(Algorithm algorithm) {
        for (int trace = 0; trace < TRACES; trace++) {
            long seed = 50_000L + algorithm.ordinal() * 1_000L + trace;
            SplittableRandom random = new SplittableRandom(seed);
            List<List<Limit>> phases = randomChanges(random, algorithm);
            ManualClock clock = new ManualClock(ManualClock.ALIGNED_START + random.nextLong(1_000_000_000L));
            RateLimitStore memory = Stores.MEMORY.create(clock);
            ScriptBatches redis = new ScriptBatches(Stores.client(), clock);
            String run = UUID.randomUUID().toString();
            int phase = 0;
            for (int step = 0; step < STEPS / 2; step++) {
                if (phase < CHANGES.length && step == CHANGES[phase] / 2) {
                    phase++;
                }
                List<Limit> phaseLimits = phases.get(phase);
                long longest = phaseLimits.stream().mapToLong(Limit::periodMicros).max().orElseThrow();
                int gap = random.nextInt(10);
                if (gap >= 3) {
                    long bound = gap == 9 ? longest * 3 : gap >= 7 ? longest / 2 : longest / 20;
                    clock.set(clock.nowMicros() + 1 + random.nextLong(Math.max(1, bound)));
                }
                int cost = 1 + random.nextInt(3);
                List<Limit> limits = phaseLimits.stream()
                        .map(l -> random.nextBoolean() ? l : l.withCost(Math.min(cost, l.capacity()))).toList();
                // mostly a few requests, sometimes more than any budget here, up to the coalescer's largest
                int requests = switch (random.nextInt(6)) {
                    case 0 -> 1 + random.nextInt(256);
                    case 1, 2 -> 1 + random.nextInt(30);
                    default -> 1 + random.nextInt(4);
                };
                String caller = run + "-" + random.nextInt(2);
                List<Decision> batch = redis.decide(caller, limits, requests);
                for (int r = 0; r < requests; r++) {
                    Decision one = memory.decide(caller, limits).toCompletableFuture().join();
                    assertThat(batch.get(r))
                            .as("seed %d step %d request %d of %d, limits %s", seed, step, r, requests, limits)
                            .isEqualTo(one);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Stores.class)
    void gcraAdmitsExactlyWhatTheTokenBucketAdmits(Stores store) {
        // every trace without refunds, then with them (the bucket and GCRA refund alike too)
        for (int run = 0; run < 2 * TRACES; run++) {
            int trace = run % TRACES;
            boolean refunds = run >= TRACES;
            long seed = 77_000L + trace;
            List<List<Limit>> buckets = randomChanges(new SplittableRandom(seed), Algorithm.TOKEN_BUCKET);
            List<List<Limit>> gcras = buckets.stream()
                    .map(limits -> limits.stream().map(l -> l.withAlgorithm(Algorithm.GCRA)).toList()).toList();
            List<Decision> tb = play(store::create, buckets, seed, refunds);
            List<Decision> gcra = play(store::create, gcras, seed, refunds);
            for (int i = 0; i < tb.size(); i++) {
                Decision a = tb.get(i);
                Decision b = gcra.get(i);
                String where = "seed " + seed + (refunds ? " with refunds" : "") + " step " + i + " " + buckets;
                assertThat(b.outcome()).as(where).isEqualTo(a.outcome());
                assertThat(b.retryAfter()).as(where).isEqualTo(a.retryAfter());
                for (int q = 0; q < a.quotas().size(); q++) {
                    assertThat(b.quotas().get(q).remaining()).as(where).isEqualTo(a.quotas().get(q).remaining());
                    assertThat(b.quotas().get(q).reset()).as(where).isEqualTo(a.quotas().get(q).reset());
                    assertThat(b.quotas().get(q).retryAfter()).as(where).isEqualTo(a.quotas().get(q).retryAfter());
                    assertThat(b.quotas().get(q).nextUnit()).as(where).isEqualTo(a.quotas().get(q).nextUnit());
                }
            }
        }
    }

    /**
     * Concurrency leases: random traces of leases taken, returned and left to expire must get the
     * same decisions from lease.lua as from its Java twin (LeaseTable). Twice in each trace the cap
     * changes (a random count from 1 to 6 and lease), with leases held, lowered as often as raised.
     */
    @org.junit.jupiter.api.Test
    void leaseScriptAndJavaTwinDecideAlikeAcrossCapChanges() {
        for (int trace = 0; trace < TRACES; trace++) {
            long seed = 90_000L + trace;
            SplittableRandom random = new SplittableRandom(seed);
            List<Limit> caps = new ArrayList<>();
            for (int phase = 0; phase <= CHANGES.length; phase++) {
                caps.add(Limit.concurrency("twin-cap", 1 + random.nextInt(6),
                        Duration.ofSeconds(PERIOD_SECONDS[random.nextInt(PERIOD_SECONDS.length)])));
            }
            List<Decision> memory = playLeases(Stores.MEMORY::create, caps, seed);
            List<Decision> redis = playLeases(Stores.REDIS::create, caps, seed);
            for (int i = 0; i < memory.size(); i++) {
                assertThat(redis.get(i)).as("seed %d step %d, caps %s", seed, i, caps).isEqualTo(memory.get(i));
            }
        }
    }

    /**
     * Plays one trace of leases on the store: at each step a caller takes a lease or returns one it
     * holds; the cap changes at each of {@link #CHANGES}. Every decision must be one its cap could
     * give, and none a failure.
     */
    private static List<Decision> playLeases(Function<TimeSource, RateLimitStore> store, List<Limit> caps, long seed) {
        SplittableRandom random = new SplittableRandom(seed * 31 + 7);
        ManualClock clock = new ManualClock(ManualClock.ALIGNED_START + random.nextLong(1_000_000_000L));
        RateLimitStore shared = store.apply(clock);
        String run = UUID.randomUUID().toString();
        List<List<String>> held = List.of(new ArrayList<>(), new ArrayList<>());
        List<Decision> decisions = new ArrayList<>();
        int phase = 0;
        for (int step = 0; step < STEPS; step++) {
            if (phase < CHANGES.length && step == CHANGES[phase]) {
                phase++;
            }
            Limit cap = caps.get(phase);
            // time moves slowly against the lease, so that callers fill their caps and hold leases
            // across a change: mostly no time or a little, sometimes a third of a lease, rarely two
            int gap = random.nextInt(40);
            if (gap >= 24) {
                long bound = gap == 39 ? cap.periodMicros() * 2 : gap >= 36 ? cap.periodMicros() / 3
                        : cap.periodMicros() / 50;
                clock.set(clock.nowMicros() + 1 + random.nextLong(bound));
            }
            int who = random.nextInt(2);
            String caller = run + "-" + who;
            List<String> leases = held.get(who);
            if (!leases.isEmpty() && random.nextInt(3) == 0) {
                // returning a lease already expired does nothing, in both stores
                shared.releaseLease(caller, cap, leases.remove(random.nextInt(leases.size()))).toCompletableFuture()
                        .join();
                continue;
            }
            String id = "lease-" + step;
            Decision decision = shared.acquireLease(caller, cap, id).toCompletableFuture().join();
            RateLimitStoreKit.assertWithinTheLimit(decision, cap, "seed " + seed + " step " + step + " " + cap);
            if (decision.outcome() == Decision.Outcome.ALLOWED) {
                leases.add(id);
            } else {
                assertThat(decision.outcome()).as("seed %d step %d", seed, step).isEqualTo(Decision.Outcome.REJECTED);
                assertThat(decision.binding().nextUnit()).as("seed %d step %d: a refusal's next place", seed, step)
                        .isPositive();
            }
            decisions.add(decision);
        }
        return decisions;
    }

    private static Algorithm algorithm(List<Limit> limits) {
        return limits.get(0).algorithm();
    }

    /** The limits of each phase: the same policies each time, with new random parameters. */
    private static List<List<Limit>> randomChanges(SplittableRandom random, Algorithm algorithm) {
        int n = random.nextInt(3) == 0 ? 2 : 1;
        List<List<Limit>> phases = new ArrayList<>();
        for (int phase = 0; phase <= CHANGES.length; phase++) {
            phases.add(randomLimits(random, algorithm, n));
        }
        return phases;
    }

    /** {@code n} limits of the algorithm, with random counts, periods, bursts and costs. */
    private static List<Limit> randomLimits(SplittableRandom random, Algorithm algorithm, int n) {
        List<Limit> limits = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long count = 1 + random.nextInt(12);
            Duration period = Duration.ofSeconds(PERIOD_SECONDS[random.nextInt(PERIOD_SECONDS.length)]);
            Limit limit = Limit.of("twin" + i, count, period).withAlgorithm(algorithm);
            if (algorithm.hasBurst()) {
                limit = limit.withBurst(1 + random.nextInt(15));
            }
            limits.add(limit.withCost(1 + random.nextInt((int) Math.min(3, limit.capacity()))));
        }
        return limits;
    }

    /**
     * Plays one trace, switching to the next phase's limits (a new limiter on the same store) at
     * each of {@link #CHANGES}; every decision must be one its limits could give on their own.
     */
    private static List<Decision> play(Function<TimeSource, RateLimitStore> store, List<List<Limit>> phases, long seed,
                                       boolean refunds) {
        return play(store, phases, seed, refunds, false);
    }

    private static List<Decision> play(Function<TimeSource, RateLimitStore> store, List<List<Limit>> phases, long seed,
                                       boolean refunds, boolean reservations) {
        return play(store, phases, seed, refunds, reservations, new ArrayList<>());
    }

    /** A reservation booked in a trace: its caller and limits, for giving it back later. */
    private record Booked(String caller, List<Limit> limits, RateLimitStore.Booking booking) {
    }

    /** As the other {@code play}, adding to {@code ends} where each granted reservation ends each schedule. */
    private static List<Decision> play(Function<TimeSource, RateLimitStore> store, List<List<Limit>> phases, long seed,
                                       boolean refunds, boolean reservations, List<String> ends) {
        List<Booked> booked = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(seed * 31 + 7);
        ManualClock clock = new ManualClock(ManualClock.ALIGNED_START + random.nextLong(1_000_000_000L));
        RateLimitStore shared = store.apply(clock);
        String run = UUID.randomUUID().toString();
        List<Decision> decisions = new ArrayList<>();
        int phase = 0;
        List<Limit> limits = phases.get(0);
        RateLimiter limiter = RateLimiter.builder().limits(limits).store(shared).timeout(Stores.PATIENT).build();
        for (int step = 0; step < STEPS; step++) {
            if (phase < CHANGES.length && step == CHANGES[phase]) {
                limits = phases.get(++phase);
                limiter = RateLimiter.builder().limits(limits).store(shared).timeout(Stores.PATIENT).build();
            }
            long longest = limits.stream().mapToLong(Limit::periodMicros).max().orElseThrow();
            int gap = random.nextInt(10);
            if (gap >= 4) {
                // mostly short gaps, sometimes a good share of the period, rarely a long idle time
                long bound = gap == 9 ? longest * 3 : gap >= 7 ? longest / 2 : longest / 20;
                clock.set(clock.nowMicros() + 1 + random.nextLong(Math.max(1, bound)));
            }
            String caller = run + "-" + random.nextInt(3);
            long cost = random.nextInt(4) == 0 ? 1 + random.nextInt(4) : 0;
            if (refunds && random.nextInt(3) == 0) {
                // a refund of some earlier request of this caller, possibly of another cost or phase
                long refunded = 1 + random.nextInt(3);
                assertThat(refunded <= limiter.limits().stream().mapToLong(Limit::capacity).min().orElseThrow()
                        ? limiter.refund(caller, refunded) : limiter.refund(caller)).as("refund at step %d", step)
                        .isTrue();
            }
            if (reservations && random.nextInt(3) == 0) {
                // a reservation of up to two periods ahead, of this limiter's limits at a cost each fits
                long reservedCost = 1 + random.nextInt(3);
                List<Limit> reserved = limits.stream()
                        .map(l -> l.withCost(Math.min(reservedCost, l.capacity()))).toList();
                Duration ahead = Duration.ofNanos(random.nextLong(2 * longest + 1) * 1_000);
                RateLimitStore.Booking booking = shared.book(caller, reserved, ahead).toCompletableFuture().join();
                Decision reservation = booking.decision();
                assertThat(reservation.outcome()).as("reservation at step %d", step).isIn(Decision.Outcome.ALLOWED,
                        Decision.Outcome.REJECTED);
                // a sliding log reserves only what it has now, whatever the wait
                boolean log = algorithm(limits) == Algorithm.SLIDING_LOG;
                assertThat(reservation.outcome() == Decision.Outcome.ALLOWED
                        ? reservation.retryAfter().compareTo(log ? Duration.ZERO : ahead) <= 0
                        : log || reservation.retryAfter().compareTo(ahead) > 0)
                        .as("reservation at step %d: %s within %s", step, reservation, ahead).isTrue();
                decisions.add(reservation);
                if (reservation.outcome() == Decision.Outcome.ALLOWED) {
                    ends.add("step " + step + ": " + java.util.Arrays.toString(booking.ends()));
                    booked.add(new Booked(caller, reserved, booking));
                }
                if (!booked.isEmpty() && random.nextInt(3) == 0) {
                    // a waiter gives up: mostly the last one booked, else an earlier one (possibly
                    // of another caller, or under limits changed since), each at most once
                    Booked given =
                            booked.remove(random.nextBoolean() ? booked.size() - 1 : random.nextInt(booked.size()));
                    shared.giveBack(given.caller(), given.limits(), given.booking()).toCompletableFuture().join();
                }
            }
            if (reservations && random.nextInt(8) == 0) {
                // a provider's pause of up to two periods, at most an hour (RateLimitStore.pause), then a reservation
                // and a decision as usual: both stores must pause alike
                Duration pause = Duration.ofNanos((1 + random.nextLong(Math.min(2 * longest, 3_600_000_000L))) * 1_000);
                shared.pause(caller, limits, pause).toCompletableFuture().join();
            }
            Decision decision = cost == 0 ? limiter.decide(caller) : limiter.decide(caller, cost);
            assertThat(decision.storeFailed()).as("the store failed at step %d", step).isFalse();
            for (Decision.Quota quota : decision.outcome() == Decision.Outcome.UNSATISFIABLE ? List.<Decision.Quota>of()
                    : decision.quotas()) {
                String where = "seed " + seed + " step " + step + " " + quota.limit();
                // (with reservations ahead, a reset or retry reaches past a whole budget's time by
                // up to the wait reserved, so only the twins' equality is checked)
                if (!reservations) {
                    RateLimitStoreKit.assertWithinTheLimit(
                            new Decision(decision.outcome(), List.of(quota), quota.retryAfter()), quota.limit(), where);
                }
                if (!quota.allowed() && (cost == 0 ? quota.limit().cost() : cost) == 1) {
                    assertThat(quota.nextUnit()).as(where + ": the next unit of a limit refusing one unit")
                            .isEqualTo(quota.retryAfter());
                }
            }
            decisions.add(decision);
        }
        return decisions;
    }
}
