package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where the counting state lives: the service provider interface behind {@link dev.sluice.RateLimiter}.
 *
 * <p>Sluice ships two: {@link dev.sluice.memory.MemoryStore} (one JVM) and
 * {@code dev.sluice.redis.RedisStore} in {@code sluice-redis} (many JVMs sharing one Redis, one
 * atomic script per decision). Both give identical decisions for identical inputs: both run the
 * store test kit ({@code RateLimitStoreKit} in {@code sluice-store-tck}). An application's
 * {@code store} setting finds its store through a {@link StoreProvider}. An implementation must:
 *
 * <ul>
 *   <li>decide all limits together, atomically: consume each limit's {@link Limit#cost()} from
 *       every limit, or, if any limit lacks it, consume nothing from any;
 *   <li>never let stored time move backwards, and bound the memory a caller can hold;
 *   <li>complete the stage exceptionally when it cannot decide (the limiter then applies its
 *       {@link FailureMode}), never with a made-up decision.
 * </ul>
 *
 * <p>The limiter only passes limits whose cost fits their {@linkplain Limit#capacity() capacity},
 * and a caller identity it has not altered; the store derives bounded keys from it. Implementations
 * are thread-safe.
 *
 * <p>Audience: store authors implement it; applications only open one and hand it to a
 * {@link dev.sluice.RateLimiter.Builder#store}.
 */
public interface RateLimitStore extends AutoCloseable {

    /**
     * The furthest ahead a reservation ({@link #reserve}'s {@code maxWait}) or a {@link #pause}
     * reaches: one hour. {@code RateLimiter.LONGEST_WAIT} is this bound.
     */
    Duration LONGEST_WAIT = Duration.ofHours(1);

    /**
     * Decides one request of {@code caller} against {@code limits}.
     *
     * @param caller the caller's identity, e.g. an API key or a client address; any string
     * @param limits the limits, non-empty, with distinct policies
     * @return a stage completed with an {@link Decision.Outcome#ALLOWED} or
     *         {@link Decision.Outcome#REJECTED} decision whose quotas follow {@code limits}' order
     */
    CompletionStage<Decision> decide(String caller, List<Limit> limits);

    /**
     * Decides one request as {@link #decide(String, List)} does, told what the limiter knows about
     * it. A store that holds requests back (to send several in one call) must not hold one past
     * its deadline when sending it at once would still make it; a store that answers some requests
     * from a local copy must ask the real store when {@code fresh} is set. The default ignores both.
     *
     * @param deadlineNanos the {@link System#nanoTime()} at which the limiter stops waiting
     * @param fresh         whether the answer must come from the store itself, not from a copy
     *                      kept in this JVM: the limiter's circuit-breaker probe sets it
     */
    default CompletionStage<Decision> decide(String caller, List<Limit> limits, long deadlineNanos, boolean fresh) {
        return decide(caller, limits);
    }

    /**
     * When this store can take a request: {@code null} if it can now (the default; a store that
     * connects after it is built, once it has). Otherwise a stage completed the moment it can, or
     * completed exceptionally once the store knows it cannot (its backend was found unreachable)
     * or has waited long enough: at the latest the larger of {@code atLeast} and the store's own
     * start-up bound, from this call. A limiter asks before each request it sends and waits for
     * the stage (blocking only a caller that blocks anyway), passing its timeout, which then counts
     * from the moment the store is ready: a young store's requests wait for it instead of failing.
     * An exceptional stage is a store failure like any other, for the failure mode. Called for
     * every request, so a ready store must answer at once, without allocating.
     *
     * @param atLeast how long the caller would wait for an answer anyway: its timeout
     */
    default CompletionStage<Void> whenReady(Duration atLeast) {
        return null;
    }

    /**
     * Deletes {@code caller}'s state under {@code limits}, here and in any copy this store keeps in
     * this JVM: its next request starts with every budget whole. Other callers, and this caller's
     * state under other limits, are untouched. The default refuses.
     *
     * @return a stage completed once the state is gone, or exceptionally if the store failed
     */
    default CompletionStage<Void> reset(String caller, List<Limit> limits) {
        return CompletableFuture.failedFuture(
                new UnsupportedOperationException(getClass().getName() + " cannot reset a caller"));
    }

    /**
     * Gives back what one allowed request of {@code caller} spent under {@code limits} (each
     * limit's {@link Limit#cost()}), atomically for all of them: for {@code charge=after}, a
     * request charged up front whose response turned out not to count. A refund never raises a
     * budget above what an untouched caller would have (a bucket is capped at its burst, a count
     * stays at least 0, a sliding log drops the caller's newest entries), never touches other
     * callers, and does nothing to state written under other parameters or already gone (a
     * window that has passed). The default refuses.
     *
     * @return a stage completed once the refund is stored, or exceptionally if the store failed
     */
    default CompletionStage<Void> refund(String caller, List<Limit> limits) {
        return CompletableFuture.failedFuture(
                new UnsupportedOperationException(getClass().getName() + " cannot refund a caller"));
    }

    /**
     * Reserves one request of {@code caller} under {@code limits} (each limit's {@link Limit#cost()})
     * at the earliest instant, at most {@code maxWait} from now, at which every limit admits it,
     * atomically and in one round trip: for {@code RateLimiter.acquire}, which then waits until
     * that instant. The units are spent at once; the requests reserved later queue behind this one
     * in the order they reach the store, whichever JVM sends them. A bucket (token bucket, GCRA)
     * is written ahead of time, as a debt paid off at its rate; a window books a later window. A
     * {@link Algorithm#SLIDING_LOG} reserves only what it has now, whatever {@code maxWait}: entries
     * stamped ahead would trim ones that still count now, which a refund could not bring back. A
     * reservation whose waiter gives up is returned by {@link #giveBack}, not by a {@link #refund},
     * which gives units back at the end of the queue, beside the last reserved one. Before it
     * extends a bucket's schedule, a reservation takes the earliest slot given back inside it (see
     * {@link #giveBack}) from now to {@code maxWait}, where every other limit admits it too. The
     * default refuses.
     *
     * @param maxWait from zero to {@link #LONGEST_WAIT}; zero reserves only what a
     *                decision would allow now
     * @return a stage completed with {@link Decision.Outcome#ALLOWED}, whose
     *         {@link Decision#retryAfter()} is the wait until the reserved instant (zero: now) and
     *         whose quotas are as of that instant; or {@link Decision.Outcome#REJECTED}, nothing
     *         spent, whose retry-after is the wait the request would need (more than
     *         {@code maxWait}) and whose quotas are as of now
     */
    default CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
        return CompletableFuture.failedFuture(
                new UnsupportedOperationException(getClass().getName() + " cannot reserve a request ahead"));
    }

    /**
     * Reserves as {@link #reserve} does, and tells where the reservation left each limit's stored
     * schedule, so that {@link #giveBack} can return it exactly. The default reserves and tells
     * nothing: its reservations cannot be given back (their slots pass unused).
     *
     * @return a stage completed with the decision {@link #reserve} gives and, when it is
     *         {@link Decision.Outcome#ALLOWED}, where it ends each limit's schedule
     */
    default CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
        return reserve(caller, limits, maxWait).thenApply(decision -> new Booking(decision, Booking.NOWHERE));
    }

    /**
     * Returns a reservation of {@code caller} under {@code limits} whose waiter gave up before
     * sending (interrupted, cancelled, its own deadline), as {@link #book} answered it, atomically
     * for all limits and in one round trip; each limit on its own:
     *
     * <ul>
     *   <li>a token bucket or GCRA, while its stored schedule still ends where this reservation
     *       left it (its theoretical arrival time, to the fixed-point unit: nothing reserved or
     *       decided into it since, or all of that given back again), moves the end back by
     *       exactly the reservation's cost, and the next request of that cost gets this very
     *       slot: the state is the one before the reservation, to the microsecond. (Where another
     *       limit made the reservation wait longer than this one needed, the end moves back from
     *       where the reservation put it, which is later than where it stood before.) Once
     *       anything is booked after it, moving the end back would hand the unit to the next
     *       caller beside the last one, two calls in one slot: the store keeps the slot instead
     *       (its instant and cost), while it is still ahead and the schedule still holds it (ends
     *       at least the cost's time after it), at most 32 per caller and limit, the latest
     *       dropped first, until the schedule ends; the next reservation that fits takes the
     *       earliest one before it extends the schedule ({@link #reserve}), so the slot is sent
     *       once, at its own instant. A pause drops them;
     *   <li>a window (fixed or sliding) lowers the count of the window the reservation was booked
     *       into, whatever was booked after it (a window's count does not depend on the order
     *       within it), while the state still counts that window (a sliding window: as its
     *       current or its previous window); nothing once it does not;
     *   <li>a sliding log drops the reservation's entries while they are its newest ones.
     * </ul>
     *
     * <p>Like a {@link #refund}, it never raises a budget above what an untouched caller has,
     * never touches other callers or state written under other parameters, and keeps each key's
     * expiry. {@code RateLimiter} gives each booking back at most once, and only an
     * {@link Decision.Outcome#ALLOWED} one: when its waiter gives up, and when the store answered
     * after the limiter had stopped waiting (its timeout; the failure mode answered the waiter).
     * The default does nothing: the slot passes unused.
     *
     * @param booking what {@link #book} answered for this caller and these limits, with an
     *                {@link Decision.Outcome#ALLOWED} decision
     * @return a stage completed once it is stored, or exceptionally if the store failed
     */
    default CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * A reservation as {@link #book} made it: the decision, and where it left each limit's stored
     * schedule, which the store reads back in {@link #giveBack}. The limiter hands it back as it
     * came; only the store that made it reads {@code ends}.
     *
     * @param decision the decision {@link #reserve} gives
     * @param ends     in the store's own terms, per limit in the limits' order (the stores of
     *                 Sluice: three numbers per limit, where the reservation left its schedule,
     *                 a bucket's theoretical arrival time in microseconds and its remainder in
     *                 fixed-point units, or the slot and -1 for a slot given back that it took; a
     *                 window's index and 0; a sliding log's newest entry and 0; then the reserved
     *                 instant in the store's microseconds); {@link #NOWHERE} when the store cannot
     *                 give it back
     */
    record Booking(Decision decision, long[] ends) {
        /** The {@code ends} of a reservation that cannot be given back. */
        public static final long[] NOWHERE = new long[0];

        /** Validates the components; {@code ends} is kept as it is, not copied. */
        public Booking {
            Objects.requireNonNull(decision, "decision");
            Objects.requireNonNull(ends, "ends");
        }
    }

    /**
     * Holds {@code caller}'s budget under {@code limits} spent for {@code pause} from now, for every
     * instance sharing the store, atomically for all limits: for a provider that answered
     * {@code Retry-After} (see {@code dev.sluice.outbound.Permits}). From the pause's end the
     * budget comes back at the limit's own pace, never all at once: a token bucket or GCRA is
     * empty at the end and refills from there (its first unit one token's time later); a window
     * counts full every window that starts before the end (a fixed window opens whole at the
     * next window, a sliding window's weight decays over it); a sliding log holds {@code count}
     * entries that leave one by one, one token's time apart, from the end on. A pause never
     * grants anything: a state spent further ahead (reservations booked past the end) keeps
     * what it has, and a shorter pause after a longer one changes nothing. The default refuses.
     *
     * @param pause from 1 µs to {@link #LONGEST_WAIT}
     * @return a stage completed once the pause is stored, or exceptionally if the store failed
     * @throws IllegalArgumentException if {@code pause} is out of range
     */
    default CompletionStage<Void> pause(String caller, List<Limit> limits, Duration pause) {
        return CompletableFuture.failedFuture(
                new UnsupportedOperationException(getClass().getName() + " cannot pause a caller"));
    }

    /**
     * {@code pause} in microseconds, for a store's {@link #pause}.
     *
     * @throws IllegalArgumentException unless it is from 1 µs to {@link #LONGEST_WAIT}
     */
    static long checkPause(Duration pause) {
        if (pause.compareTo(Duration.ofNanos(1_000)) < 0 || pause.compareTo(LONGEST_WAIT) > 0) {
            throw new IllegalArgumentException("'pause' must be from 1 us to 1h, got '" + pause + "'");
        }
        return pause.toNanos() / 1_000;
    }

    /**
     * Takes one lease of {@code caller} under a {@link Algorithm#CONCURRENCY} limit, named
     * {@code leaseId}: allowed while fewer than {@link Limit#count()} unexpired leases are held,
     * each expiring {@link Limit#period()} after it was taken. The decision's quota reports the
     * leases left; a refusal's retry-after is the time until the oldest lease expires, at most
     * one second (leases are usually returned long before they expire). The default refuses.
     *
     * <p>A changed cap reads the leases held as they are: with more held than a lowered count,
     * the caller is refused with 0 left (never a negative number, never a failure) until enough
     * are returned or expire; its next place comes when the leases held fall below the count. No
     * lease held lives longer than the current {@link Limit#period()} from now.
     *
     * @param leaseId unique among every instance sharing the store
     * @return a stage completed with an {@link Decision.Outcome#ALLOWED} or
     *         {@link Decision.Outcome#REJECTED} decision
     */
    default CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
        return CompletableFuture.failedFuture(
                new UnsupportedOperationException(getClass().getName() + " cannot hold concurrency leases"));
    }

    /**
     * Returns a lease taken by {@link #acquireLease}; returning one that expired or was returned
     * already does nothing. The default refuses.
     */
    default CompletionStage<Void> releaseLease(String caller, Limit limit, String leaseId) {
        return CompletableFuture.failedFuture(
                new UnsupportedOperationException(getClass().getName() + " cannot hold concurrency leases"));
    }

    /**
     * The limit overrides an operator set for the applications sharing this store, by policy
     * name, as {@link #putOverride} wrote them; read on a short refresh, never per decision. A
     * store shared by several JVMs returns what any of them wrote; {@code MemoryStore} keeps them
     * in this JVM only. The default refuses.
     *
     * @return a stage completed with the overrides (empty: none), or exceptionally if the store failed
     */
    default CompletionStage<java.util.Map<String, String>> overrides() {
        return CompletableFuture.failedFuture(
                new UnsupportedOperationException(getClass().getName() + " cannot keep limit overrides"));
    }

    /**
     * Writes ({@code value} not {@code null}) or clears ({@code null}) the override of a policy. An
     * override lives until it is cleared: unlike counting state, it never expires. The value is
     * opaque to the store. The default refuses.
     *
     * @return a stage completed once the override is stored, or exceptionally if the store failed
     */
    default CompletionStage<Void> putOverride(String policy, String value) {
        return CompletableFuture.failedFuture(
                new UnsupportedOperationException(getClass().getName() + " cannot keep limit overrides"));
    }

    /** Releases what this store owns (connections, threads); decisions after this fail. */
    @Override
    void close();
}
