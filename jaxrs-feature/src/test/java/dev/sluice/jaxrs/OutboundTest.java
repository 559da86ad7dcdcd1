package dev.sluice.jaxrs;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Decision;
import dev.sluice.DecisionListener;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.StoreError;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.RateLimitedHttpClient;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.Resp;
import dev.sluice.testing.TestRedis;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.core.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Three application instances (each its own Redisson client and limiter, several threads) call
 * one provider, over real HTTP on loopback, through the JAX-RS client filter (Jersey's client)
 * and the {@code HttpClient} decorator, sharing its quota through one Redis.
 *
 * <p>The provider allows at most 10 requests in any 1000 ms and answers 429 beyond. The
 * instances share a token bucket of 9.25 per second, burst 1: slots 108 ms apart, so that no
 * 1000 ms holds more than ten of them (eleven span 1081 ms).
 *
 * <p>What is judged is what Sluice controls at any load: the grants the store handed out, each
 * with its slot on Redis's clock (read from where the reservation left the bucket's schedule;
 * see {@link Recorded}), and what the instances did with them. When calls reach the provider is
 * not judged: this JVM can pause between a permit and its send, or the provider's server
 * between accepting and counting a call, and bunch on-time calls at any limit (on a 2-core
 * machine at load 8-18 that made 429s and 6 accepted calls a second). How much of the quota the
 * instances use is a benchmark figure (the benchmarks' outbound part, "provider quota").
 *
 * <p>Fairness: permits are granted in the order reservations reach Redis, so equally busy
 * instances (three threads each, each waiting for one permit at a time) get a third of the grants
 * each, and each must get at least a quarter. The instances start once their Redis store answers
 * a reservation: before that, failing open, their calls would go without a permit.
 */
class OutboundTest {

    private static final int PROVIDER_PER_SECOND = 10;
    private static final Duration PROVIDER_PERIOD = Duration.ofSeconds(1);
    /** 9.25 per second, burst 1: slots 108 ms apart, ten of them in any second of the provider. */
    private static final Limit SHARED = Limit.of("provider", 37, Duration.ofSeconds(4)).withBurst(1);
    /** The interval between slots of {@link #SHARED}, in µs: 4 s / 37. */
    private static final double INTERVAL_MICROS = SHARED.period().toNanos() / 1_000.0 / SHARED.count();
    private static final Duration MAX_WAIT = Duration.ofSeconds(10);
    private static final Duration BUSY = Duration.ofSeconds(6);
    /** The first second is left out of the fairness measure: clients warm up, connections open. */
    private static final Duration WARM_UP = Duration.ofSeconds(1);

    /** A provider that allows at most 10 requests in any 1000 ms and answers 429 beyond. */
    private static final class Provider implements AutoCloseable {
        final HttpServer server;
        final ArrayDeque<Long> window = new ArrayDeque<>();
        final ConcurrentLinkedQueue<long[]> accepted = new ConcurrentLinkedQueue<>();
        final AtomicInteger rejected = new AtomicInteger();
        /** Every request: its arrival and instance. */
        final ConcurrentLinkedQueue<long[]> calls = new ConcurrentLinkedQueue<>();
        /** The 429s answered while closed (see {@link #close(Duration)}), which are not in {@link #rejected}. */
        final ConcurrentLinkedQueue<long[]> refused = new ConcurrentLinkedQueue<>();
        private volatile boolean closing;
        private volatile long closedFrom;
        private volatile long closedUntil;

        /** From now on, for {@code pause}, answers every request 429 with the time left as Retry-After. */
        long close(Duration pause) {
            synchronized (window) {
                long now = System.nanoTime();
                closedUntil = now + pause.toNanos();
                closedFrom = now;
                closing = true;
                return now;
            }
        }

        Provider() throws Exception {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 50);
            server.createContext("/", exchange -> {
                String query = String.valueOf(exchange.getRequestURI().getQuery());
                int instance = query.startsWith("instance=") ? Integer.parseInt(query.substring(9)) : -1;
                int status;
                long retryAfter = 0;
                synchronized (window) {
                    long now = System.nanoTime();
                    calls.add(new long[] {now, instance});
                    if (closing && now - closedFrom >= 0 && now - closedUntil < 0) {
                        // asking every caller to hold off until it reopens: 429, Retry-After in whole seconds
                        retryAfter =
                                (closedUntil - now + TimeUnit.SECONDS.toNanos(1) - 1) / TimeUnit.SECONDS.toNanos(1);
                        refused.add(new long[] {now, instance});
                        exchange.getResponseHeaders().add("Retry-After", Long.toString(retryAfter));
                        exchange.sendResponseHeaders(429, -1);
                        exchange.close();
                        return;
                    }
                    while (!window.isEmpty() && now - window.peekFirst() >= TimeUnit.SECONDS.toNanos(1)) {
                        window.pollFirst();
                    }
                    if (window.size() < PROVIDER_PER_SECOND) {
                        window.addLast(now);
                        accepted.add(new long[] {now, instance});
                        status = 200;
                    } else {
                        rejected.incrementAndGet();
                        status = 429;
                    }
                }
                exchange.sendResponseHeaders(status, -1);
                exchange.close();
            });
            // not counted: a client's first request, which loads its classes and opens its connection
            server.createContext("/warm", exchange -> {
                exchange.sendResponseHeaders(200, -1);
                exchange.close();
            });
            server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(16));
            server.start();
        }

        URI warm() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/warm");
        }

        URI uri(int instance) {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/call?instance=" + instance);
        }

        @Override
        public void close() {
            server.stop(0);
            ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
        }
    }

    /**
     * One reservation the store granted.
     *
     * @param instance   the instance that asked
     * @param askedNanos when it was sent to Redis, on this JVM's clock
     * @param maxWait    the longest wait it asked for
     * @param reserved   the wait the store reserved
     * @param slotMicros its slot on Redis's clock, µs: where it left the bucket's schedule (the
     *                   slot plus one interval, burst 1) less one interval, to within 1 µs
     */
    private record Grant(int instance, long askedNanos, Duration maxWait, Duration reserved, double slotMicros) {
    }

    /**
     * A pause the store was asked for.
     *
     * @param fromMicros Redis's clock just before it was sent, µs: the pause began at or after it
     * @param pause      its length
     * @param doneNanos  when Redis had stored it, on this JVM's clock: a reservation sent later
     *                   reaches Redis after it
     */
    private record Paused(long fromMicros, Duration pause, long doneNanos) {
    }

    /**
     * An instance's Redis store, recording what it hands out: every reservation of the key
     * {@code provider} it granted and every pause it stored. The real {@link RedisStore} decides;
     * this only listens. A reservation given back is no grant (its slot is the next caller's).
     */
    private final class Recorded implements RateLimitStore {
        private final RateLimitStore store;
        private final int instance;
        /** The interval between slots of the one limit it decides, µs. */
        private final double intervalMicros;
        private final java.util.Map<Booking,
                Grant> grantsBy = java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>());

        Recorded(RateLimitStore store, int instance, double intervalMicros) {
            this.store = store;
            this.instance = instance;
            this.intervalMicros = intervalMicros;
        }

        @Override
        public CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
            long asked = System.nanoTime();
            return store.book(caller, limits, maxWait).thenApply(booking -> {
                if (caller.equals("provider") && booking.decision().outcome() == Decision.Outcome.ALLOWED) {
                    // a bucket of burst 1 is empty after a grant: its schedule ends one interval after the slot
                    double slot = booking.ends()[0] - intervalMicros;
                    Grant grant = new Grant(instance, asked, maxWait, booking.decision().retryAfter(), slot);
                    grantsBy.put(booking, grant);
                    grants.add(grant);
                }
                return booking;
            });
        }

        @Override
        public CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
            Grant grant = grantsBy.remove(booking);
            if (grant != null) {
                grants.remove(grant);
                givenBack.add(grant);
            }
            return store.giveBack(caller, limits, booking);
        }

        @Override
        public CompletionStage<Void> pause(String caller, List<Limit> limits, Duration pause) {
            long from = redisMicros();
            return store.pause(caller, limits, pause).thenRun(() -> {
                if (caller.equals("provider")) {
                    pauses.add(new Paused(from, pause, System.nanoTime()));
                }
            });
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return store.decide(caller, limits);
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits, long deadlineNanos, boolean fresh) {
            return store.decide(caller, limits, deadlineNanos, fresh);
        }

        @Override
        public CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
            return book(caller, limits, maxWait).thenApply(Booking::decision);
        }

        @Override
        public void close() {
            store.close();
        }
    }

    private TestRedis redis;
    private Provider provider;
    private final List<RedissonClient> clients = new ArrayList<>();
    private final List<Client> jaxrs = new ArrayList<>();
    /** What the {@link Recorded} stores granted, all instances together. */
    private final ConcurrentLinkedQueue<Grant> grants = new ConcurrentLinkedQueue<>();
    /** What the {@link Recorded} stores were given back. */
    private final ConcurrentLinkedQueue<Grant> givenBack = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Paused> pauses = new ConcurrentLinkedQueue<>();
    /** Each recorded instance's decisions made without the store (failing open): calls sent without a grant. */
    private final List<AtomicInteger> instanceErrors = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        redis = TestRedis.start();
        provider = new Provider();
    }

    @AfterEach
    void stop() {
        jaxrs.forEach(Client::close);
        clients.forEach(RedissonClient::shutdown);
        provider.close();
        redis.stop();
    }

    /** Redis's clock, µs, read on a connection of its own. */
    private long redisMicros() {
        List<?> time = (List<?>) Resp.call(redis.port(), "TIME");
        return Long.parseLong(String.valueOf(time.get(0))) * 1_000_000 + Long.parseLong(String.valueOf(time.get(1)));
    }

    private RateLimiter instance(Limit limit, FailureMode mode, Duration timeout) {
        RedissonClient client = redis.newClient();
        clients.add(client);
        return RateLimiter.builder().limit(limit).store(RedisStore.of(client)).failureMode(mode).localShare(1.0 / 3)
                .timeout(timeout).build();
    }

    /**
     * Instance {@code n} of the shared limit on a {@link Recorded} store, once the store answers;
     * its store errors counted from then on. A patient store timeout: a late answer on a loaded
     * machine must not turn into failing open.
     */
    private Permits recordedInstance(int n) throws InterruptedException {
        RedissonClient client = redis.newClient();
        clients.add(client);
        AtomicInteger errors = new AtomicInteger();
        RateLimiter limiter = RateLimiter.builder().limit(SHARED)
                .store(new Recorded(RedisStore.of(client), n, INTERVAL_MICROS))
                .failureMode(FailureMode.OPEN).localShare(1.0 / 3).timeout(Duration.ofSeconds(2))
                .listener(new DecisionListener() {
                    @Override
                    public void onDecision(Decision decision, long elapsedNanos) {
                    }

                    @Override
                    public void onStoreError(StoreError error) {
                        errors.incrementAndGet();
                    }
                }).build();
        Permits permits = ready(Permits.of(limiter, MAX_WAIT));
        // counted from here on: the errors of a store still connecting are ready's business
        errors.set(0);
        instanceErrors.add(errors);
        return permits;
    }

    /**
     * {@code limiter}, once its store answers: a Redis store connects in the background, and
     * until then the failure mode decides (open: calls go without a permit, beside the ones
     * that have one), as in an application's first moments.
     */
    private static Permits ready(Permits permits) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        // a reservation: the script and connection the calls' own reservations use
        while (permits.limiter().acquire("warm-up", Duration.ZERO).storeFailed() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return permits;
    }

    private Client jaxrsClient(Permits permits) {
        Client client = ClientBuilder.newClient().register(RateLimitClientFilter.named(permits, "provider"));
        jaxrs.add(client);
        return client;
    }

    @Test
    void threeInstancesAreGrantedAtMostTheQuotaInAnySecondAndEachIsServed() throws Exception {
        Permits[] permits = new Permits[3];
        for (int i = 0; i < 3; i++) {
            permits[i] = recordedInstance(i);
        }
        Clients clients = clients(permits);
        long started = System.nanoTime();
        long end = started + BUSY.toNanos();
        AtomicInteger failures = new AtomicInteger();
        List<Thread> threads = callers(clients, end, failures);
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join(30_000);
        }
        List<Grant> granted = sorted(grants);
        String seen = seen(granted, started);
        System.out.println("OutboundTest busy: " + seen);

        assertThat(failures.get()).as("calls that failed; " + seen).isZero();
        assertGrantedWithinTheLimit(granted, seen);
        assertThat(provider.calls.size()).as("calls the provider saw, each with a grant; " + seen)
                .isLessThanOrEqualTo(granted.size());

        long from = started + WARM_UP.toNanos();
        long[] perInstance = new long[3];
        long measured = 0;
        for (Grant grant : granted) {
            if (grant.askedNanos() - from >= 0 && grant.askedNanos() - end < 0) {
                measured++;
                perInstance[grant.instance()]++;
            }
        }
        for (int i = 0; i < 3; i++) {
            int instance = i;
            assertThat(perInstance[i]).as("instance %d's share of the %d grants while busy; %s", i, measured, seen)
                    .isGreaterThanOrEqualTo(measured / 4);
            assertThat(provider.accepted).as("instance %d served; %s", instance, seen)
                    .anyMatch(call -> call[1] == instance);
        }
    }

    /**
     * What holds at any load for the grants the store handed out: consecutive slots at least one
     * interval of the shared limit apart, so never more than the provider's 10 in any second of
     * its clock; no grant waiting longer than it asked, nor asking beyond the permits' wait; and
     * no call sent without a grant (no decision failed open).
     */
    private void assertGrantedWithinTheLimit(List<Grant> granted, String seen) {
        assertThat(instanceErrors).as("decisions made without the store, failing open; " + seen)
                .allMatch(errors -> errors.get() == 0);
        for (int i = 1; i < granted.size(); i++) {
            double gap = granted.get(i).slotMicros() - granted.get(i - 1).slotMicros();
            // 1 µs: the schedule's end is read in whole µs
            assertThat(gap).as("µs between grants %d and %d, at least the interval %.0f µs; %s", i - 1, i,
                    INTERVAL_MICROS, seen).isGreaterThan(INTERVAL_MICROS - 1);
        }
        long period = PROVIDER_PERIOD.toNanos() / 1_000;
        for (int first = 0, last = 0; last < granted.size(); last++) {
            while (granted.get(last).slotMicros() - granted.get(first).slotMicros() >= period) {
                first++;
            }
            assertThat(last - first + 1)
                    .as("grants in the second of Redis's clock ending with grant %d; %s", last, seen)
                    .isLessThanOrEqualTo(PROVIDER_PER_SECOND);
        }
        assertThat(granted)
                .as("grants within the wait they asked for, itself within the permits' %s; %s", MAX_WAIT, seen)
                .allMatch(grant -> grant.reserved().compareTo(grant.maxWait()) <= 0 && grant.maxWait()
                        .compareTo(MAX_WAIT) <= 0);
    }

    private static List<Grant> sorted(ConcurrentLinkedQueue<Grant> grants) {
        List<Grant> all = new ArrayList<>(grants);
        all.sort(java.util.Comparator.comparingDouble(Grant::slotMicros));
        return all;
    }

    /**
     * For messages and the log: the grants (ms on Redis's clock from the first, instance), and
     * what the provider saw, which is not judged (see the class comment).
     */
    private String seen(List<Grant> granted, long started) {
        double first = granted.isEmpty() ? 0 : granted.get(0).slotMicros();
        long accepted = provider.accepted.stream().filter(call -> call[0] - started >= 0).count();
        return String.format(java.util.Locale.ROOT,
                "%d grants, the provider accepted %d calls (%.1f/s) and answered %d "
                        + "429s beyond its limit, %d while closed; grants (ms from the first on Redis's "
                        + "clock:instance) %s",
                granted.size(), accepted, accepted / ((System.nanoTime() - started) / 1e9), provider.rejected.get(),
                provider.refused.size(),
                granted.stream().map(g -> Math.round((g.slotMicros() - first) / 1_000) + ":" + g.instance()).toList());
    }

    /** The three instances' clients: the first two JAX-RS, the third the {@code HttpClient} decorator. */
    private record Clients(Client first, Client second, HttpClient third) {
    }

    /**
     * The instances' clients, each after one call (with a permit) to a path the provider does not
     * count: a client's first request in a JVM loads its classes and opens its connection, which
     * made a first call reach the provider 300 ms after its slot, among the on-time calls behind it
     * (measured here on a loaded machine), as in an application's first moments; no limiter sees
     * that part of the way.
     */
    private Clients clients(Permits[] permits) throws Exception {
        Clients clients = new Clients(jaxrsClient(permits[0]), jaxrsClient(permits[1]),
                RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), permits[2], "provider"));
        assertThat(status(clients.first().target(provider.warm()).request().get())).isEqualTo(200);
        assertThat(status(clients.second().target(provider.warm()).request().get())).isEqualTo(200);
        assertThat(clients.third().send(HttpRequest.newBuilder(provider.warm()).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode()).isEqualTo(200);
        assertThat(clients.third().sendAsync(HttpRequest.newBuilder(provider.warm()).build(),
                HttpResponse.BodyHandlers.discarding()).get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        return clients;
    }

    /**
     * Three threads for each of three instances: the first two call through the JAX-RS filter, the
     * third through the {@code HttpClient} decorator (one thread with {@code sendAsync}).
     */
    private List<Thread> callers(Clients clients, long end, AtomicInteger failures) {
        Client first = clients.first();
        Client second = clients.second();
        HttpClient third = clients.third();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            threads.add(caller(end, failures, () -> status(first.target(provider.uri(0)).request().get())));
            threads.add(caller(end, failures, () -> status(second.target(provider.uri(1)).request().get())));
            boolean async = t == 0;
            threads.add(caller(end, failures, () -> async
                    ? third.sendAsync(HttpRequest.newBuilder(provider.uri(2)).build(),
                            HttpResponse.BodyHandlers.discarding())
                            .get(20, TimeUnit.SECONDS).statusCode()
                    : third.send(HttpRequest.newBuilder(provider.uri(2)).build(),
                            HttpResponse.BodyHandlers.discarding())
                            .statusCode()));
        }
        return threads;
    }

    /**
     * The provider answers 429 with {@code Retry-After: 2} for two seconds while the three
     * instances are busy. The first 429 pauses the key in Redis, so every instance holds off: no
     * reservation that reaches Redis after a pause is granted a slot before that pause ends,
     * whichever instance asks. Then every instance resumes, at the limiter's pace: the grants
     * after the pause are as far apart as all the others, no burst.
     */
    @Test
    void aProviderAskingToPauseIsHeardByEveryInstanceWhichResumesWithoutABurst() throws Exception {
        Permits[] permits = new Permits[3];
        for (int i = 0; i < 3; i++) {
            permits[i] = recordedInstance(i);
        }
        Clients clients = clients(permits);
        long started = System.nanoTime();
        long end = started + TimeUnit.SECONDS.toNanos(7);
        AtomicInteger failures = new AtomicInteger();
        List<Thread> threads = callers(clients, end, failures);
        threads.forEach(Thread::start);
        Thread.sleep(2_000);
        long closed = provider.close(Duration.ofSeconds(2));
        long reopened = closed + TimeUnit.SECONDS.toNanos(2);
        for (Thread thread : threads) {
            thread.join(30_000);
        }
        List<Grant> granted = sorted(grants);
        String seen = seen(granted, started) + "; " + timeline(provider.calls, closed);
        System.out.println("OutboundTest pause: " + seen);
        assertThat(failures.get()).as("calls that failed; " + seen).isZero();
        assertThat(provider.refused).as("429s while the provider was closed; " + seen).isNotEmpty();
        assertThat(pauses).as("pauses stored; " + seen).isNotEmpty();

        for (Paused paused : pauses) {
            double ends = paused.fromMicros() + paused.pause().toNanos() / 1_000.0;
            // 1 µs: the schedule's end is read in whole µs
            assertThat(granted).as("grants asked for after a pause was stored, before its end %s; %s", paused, seen)
                    .noneMatch(grant -> grant.askedNanos() - paused.doneNanos() > 0 && grant.slotMicros() < ends - 1);
        }
        long heard = pauses.stream().mapToLong(Paused::doneNanos).min().orElseThrow();
        for (int i = 0; i < 3; i++) {
            int instance = i;
            assertThat(granted).as("instance %d granted after the pause; %s", instance, seen)
                    .anyMatch(grant -> grant.instance() == instance && grant.askedNanos() - heard > 0);
            assertThat(provider.accepted).as("instance %d resumed; %s", instance, seen)
                    .anyMatch(call -> call[1] == instance && call[0] - reopened >= 0);
        }
        assertGrantedWithinTheLimit(granted, seen);
    }

    /** Each call's arrival in ms from {@code origin} and its instance, for a failure's message. */
    private static String timeline(ConcurrentLinkedQueue<long[]> calls, long origin) {
        List<long[]> all = new ArrayList<>(calls);
        all.sort((a, b) -> Long.compare(a[0], b[0]));
        return "arrivals (ms after the closure, instance) " + all.stream()
                .map(call -> (call[0] - origin) / 1_000_000 + ":" + call[1]).toList();
    }

    private interface Call {
        int status() throws Exception;
    }

    private static int status(Response response) {
        try (response) {
            return response.getStatus();
        }
    }

    private static Thread caller(long end, AtomicInteger failures, Call call) {
        return new Thread(() -> {
            while (System.nanoTime() < end) {
                try {
                    int status = call.status();
                    if (status != 200 && status != 429) {
                        failures.incrementAndGet();
                    }
                } catch (Exception e) {
                    failures.incrementAndGet();
                }
            }
        });
    }

    @Test
    void aCallThatGetsNoPermitWithinItsWaitOrIsCancelledIsNotSent() throws Exception {
        // one permit a minute: however slow the first call (a client's start on a loaded machine;
        // over 2 s at load 20), the next one is far off
        Permits impatient = Permits.of(instance(Limit.of("impatient", 1, Duration.ofMinutes(1)), FailureMode.CLOSED,
                Duration.ofSeconds(2)), Duration.ofMillis(20));
        Client client = jaxrsClient(impatient);
        HttpClient http = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), impatient, "provider");
        assertThat(status(client.target(provider.uri(0)).request().get())).isEqualTo(200);
        // the next permit is up to 2 s away: beyond 20 ms
        assertThatThrownBy(() -> client.target(provider.uri(0)).request().get())
                .isInstanceOf(ProcessingException.class).hasCauseInstanceOf(PermitUnavailableException.class)
                .hasMessageContaining("no permit for 'provider' within 20 ms");
        assertThatThrownBy(() -> http.send(HttpRequest.newBuilder(provider.uri(2)).build(),
                HttpResponse.BodyHandlers.discarding()))
                .isInstanceOf(PermitUnavailableException.class);
        assertThatThrownBy(() -> http.sendAsync(HttpRequest.newBuilder(provider.uri(2)).build(),
                HttpResponse.BodyHandlers.discarding()).join()).hasCauseInstanceOf(PermitUnavailableException.class);
        // one permit per 2 s, on a store that records its grants, the first taken now without a call
        RedissonClient redisson = redis.newClient();
        clients.add(redisson);
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1, Duration.ofSeconds(2)))
                .store(new Recorded(RedisStore.of(redisson), 0, 2_000_000)).failureMode(FailureMode.CLOSED)
                .timeout(Duration.ofSeconds(2)).build();
        assertThat(ready(Permits.of(limiter, Duration.ofSeconds(5))).limiter().acquire("provider", Duration.ZERO)
                .allowed())
                .as("the first permit").isTrue();
        // a call cancelled while it waits for its slot is never sent
        HttpClient patient = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(),
                Permits.of(limiter, Duration.ofSeconds(5)),
                "provider");
        CompletableFuture<HttpResponse<Void>> cancelled =
                patient.sendAsync(HttpRequest.newBuilder(provider.uri(3)).build(),
                HttpResponse.BodyHandlers.discarding());
        assertThat(cancelled.cancel(false)).isTrue();
        // a call after it comes in the slot after the cancelled one, and the provider sees only it
        assertThat(patient.send(HttpRequest.newBuilder(provider.uri(2)).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode()).isEqualTo(200);
        assertThat(provider.accepted).as("only the first and the last call were sent").hasSize(2);
        assertThat(provider.accepted).noneMatch(call -> call[1] == 3);

        // the quota used is what was sent: a waiter interrupted while it sleeps towards its slot
        // (2 s after the last call's) gives the slot back before its send throws, and the next
        // call gets that slot, not the one 4 s after the last call's
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                patient.send(HttpRequest.newBuilder(provider.uri(4)).build(), HttpResponse.BodyHandlers.discarding());
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        waiter.start();
        // Redis answers its reservation in a few ms; half a second on, it sleeps towards its slot
        TimeUnit.MILLISECONDS.sleep(500);
        waiter.interrupt();
        waiter.join(10_000);
        assertThat(thrown.get()).as("the interrupted waiter").isInstanceOf(InterruptedException.class);
        assertThat(patient.send(HttpRequest.newBuilder(provider.uri(5)).build(), HttpResponse.BodyHandlers.discarding())
                .statusCode()).isEqualTo(200);
        List<long[]> sent = List.copyOf(provider.accepted);
        assertThat(sent).as("the interrupted call was not sent").hasSize(3).noneMatch(call -> call[1] == 4);
        // judged on the store's grants, not on arrivals (a late wake-up of the next call would
        // make it book the slot after): the reservation after the given-back one has its slot
        Grant interrupted = givenBack.stream().max(java.util.Comparator.comparingLong(Grant::askedNanos))
                .orElseThrow(() -> new AssertionError("the interrupted waiter's reservation was not given back"));
        double given = interrupted.slotMicros();
        List<Grant> granted = sorted(grants);
        Grant next = granted.stream().filter(grant -> grant.askedNanos() - interrupted.askedNanos() > 0)
                .findFirst().orElseThrow();
        assertThat(next.slotMicros())
                .as("the slot of the next reservation after the given-back one at %.0f µs; grants %s",
                given, granted).isCloseTo(given, org.assertj.core.data.Offset.offset(1.0));
    }

    @Test
    void withRedisDownOpenCallsAtOnceClosedFailsAndLocalWaitsOnTheLocalShare() throws Exception {
        Duration timeout = Duration.ofMillis(200);
        Limit seven = Limit.of("provider", 7, Duration.ofSeconds(1)).withBurst(1);
        Permits open = Permits.of(instance(seven, FailureMode.OPEN, timeout), Duration.ofSeconds(5));
        Permits closed = Permits.of(instance(seven, FailureMode.CLOSED, timeout), Duration.ofSeconds(5));
        Permits local = Permits.of(instance(seven, FailureMode.LOCAL, timeout), Duration.ofSeconds(5));
        redis.stop();

        HttpClient openClient = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), open, "provider");
        long started = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            assertThat(openClient.send(HttpRequest.newBuilder(provider.uri(0)).build(),
                    HttpResponse.BodyHandlers.discarding())
                    .statusCode()).isEqualTo(200);
        }
        assertThat(System.nanoTime() - started).as("open: no wait for permits (three calls)")
                .isLessThan(TimeUnit.SECONDS.toNanos(3));

        Client closedClient = jaxrsClient(closed);
        assertThatThrownBy(() -> closedClient.target(provider.uri(1)).request().get())
                .isInstanceOf(ProcessingException.class).hasCauseInstanceOf(PermitUnavailableException.class)
                .hasMessageContaining("failure mode is closed");

        // local: a third of 7 per second, rounded, burst 1, on this instance alone: 2 per second
        HttpClient localClient = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), local, "provider");
        started = System.nanoTime();
        localClient.send(HttpRequest.newBuilder(provider.uri(2)).build(), HttpResponse.BodyHandlers.discarding());
        localClient.send(HttpRequest.newBuilder(provider.uri(2)).build(), HttpResponse.BodyHandlers.discarding());
        assertThat(System.nanoTime() - started)
                .as("local: the second waited for the local share's next permit, 500 ms on")
                .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(490));
    }
}
