package dev.sluice.jaxrs;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.RateLimitedHttpClient;
import dev.sluice.redis.RedisStore;
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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Three application instances (each its own Redisson client and limiter, several threads) call
 * one provider, over real HTTP on loopback, through the JAX-RS client filter (Jersey's client)
 * and the {@code HttpClient} decorator, sharing its quota through one Redis.
 *
 * <p>The provider enforces a strict 10 per second: at most 10 requests in any 1000 ms, counting
 * the 429s it answers beyond. The instances share a token bucket of 9.25 per second, burst 1: slots
 * 108 ms apart, eleven of them spanning 1081 ms. The provider counts calls when they arrive, not at
 * their slots, and each call arrives some time after its slot (the reservation's answer travels
 * back, the thread wakes, the client sends, the provider's server hands the request over), so it
 * answers 429 when the lateness of eleven consecutive calls spreads over more than 81 ms. The
 * permits send no call more than 54 ms (their default {@code maxLateness}, half the interval)
 * after its slot: a waiter back later, even from a pause of this JVM, takes a new slot instead of
 * joining the on-time calls; the HTTP path has the other 27 ms. What must hold: no 429; at least
 * 90% of the provider's quota (9 per second) accepted while everyone is busy, the 0.25 per second
 * above it covering the slots late waiters leave unused and the measure's edges; and
 * fairness: permits are granted in the order reservations reach Redis, so equally busy instances
 * (three threads each, each waiting for one permit at a time) get a third each, and each must
 * get at least a quarter. The instances start once their Redis store answers a reservation:
 * before that, failing open, their calls would go without a permit. A 429 fails with the
 * provider's tightest eleven arrivals and this JVM's longest pause, to tell a pause from a
 * limiter that granted too much.
 */
class OutboundIT {

    private static final int PROVIDER_PER_SECOND = 10;
    /** 9.25 per second, burst 1: slots 108 ms apart, over 90% of the provider's quota. */
    private static final Limit SHARED = Limit.of("provider", 37, Duration.ofSeconds(4)).withBurst(1);
    private static final Duration BUSY = Duration.ofSeconds(6);
    /** The first second is left out of the measure: clients warm up, connections open. */
    private static final Duration WARM_UP = Duration.ofSeconds(1);

    /** A provider that allows at most 10 requests in any 1000 ms and answers 429 beyond. */
    private static final class Provider implements AutoCloseable {
        final HttpServer server;
        final ArrayDeque<Long> window = new ArrayDeque<>();
        final ConcurrentLinkedQueue<long[]> accepted = new ConcurrentLinkedQueue<>();
        final AtomicInteger rejected = new AtomicInteger();
        /** Every request's arrival, accepted or not, for the message of a failure. */
        final ConcurrentLinkedQueue<Long> arrivals = new ConcurrentLinkedQueue<>();
        /** When each 429 of the strict limit was answered (not those of a closure). */
        final ConcurrentLinkedQueue<Long> tooMany = new ConcurrentLinkedQueue<>();
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
                    arrivals.add(now);
                    calls.add(new long[] {now, instance});
                    if (closing && now - closedFrom >= 0 && now - closedUntil < 0) {
                        // asking every caller to hold off until it reopens: 429, Retry-After in whole seconds
                        retryAfter = (closedUntil - now + TimeUnit.SECONDS.toNanos(1) - 1) / TimeUnit.SECONDS.toNanos(1);
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
                        tooMany.add(now);
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

    private TestRedis redis;
    private Provider provider;
    private final List<RedissonClient> clients = new ArrayList<>();
    private final List<Client> jaxrs = new ArrayList<>();

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

    private RateLimiter instance(FailureMode mode, Duration timeout) {
        return instance(SHARED, mode, timeout);
    }

    private RateLimiter instance(Limit limit, FailureMode mode, Duration timeout) {
        RedissonClient client = redis.newClient();
        clients.add(client);
        return RateLimiter.builder().limit(limit).store(RedisStore.of(client)).failureMode(mode).localShare(1.0 / 3)
                .timeout(timeout).build();
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
    void threeInstancesShareTheProvidersQuotaWithoutA429AndNoneStarves() throws Exception {
        // a patient store timeout: a late answer on a loaded machine must not turn into failing open
        Permits[] permits = new Permits[3];
        for (int i = 0; i < 3; i++) {
            permits[i] = ready(Permits.of(instance(FailureMode.OPEN, Duration.ofSeconds(2)), Duration.ofSeconds(10)));
        }
        Clients clients = clients(permits);
        long end = System.nanoTime() + BUSY.toNanos();
        AtomicInteger failures = new AtomicInteger();
        List<Thread> threads = callers(clients, end, failures);
        long started = System.nanoTime();
        AtomicLong longestPause = new AtomicLong();
        Thread watcher = new Thread(() -> {
            // this JVM's pauses: a waiter whose slot passed during one goes out with the next ones
            for (long last = System.nanoTime(); last < end + TimeUnit.SECONDS.toNanos(2); ) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
                long now = System.nanoTime();
                longestPause.accumulateAndGet(now - last, Math::max);
                last = now;
            }
        });
        watcher.setDaemon(true);
        watcher.start();
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join(30_000);
        }

        assertThat(failures.get()).as("calls that failed").isZero();
        assertThat(provider.rejected.get()).as(() -> "429s from the provider; " + tightest(provider.arrivals, started)
                + "; this JVM's longest pause " + longestPause.get() / 1_000_000 + " ms").isZero();

        long from = started + WARM_UP.toNanos();
        long[] perInstance = new long[4];
        long measured = 0;
        for (long[] call : provider.accepted) {
            if (call[0] >= from && call[0] < end) {
                measured++;
                perInstance[(int) call[1]]++;
            }
        }
        double seconds = (end - from) / 1e9;
        assertThat(measured / seconds).as("requests per second accepted while busy, of the provider's 10 per second")
                .isGreaterThanOrEqualTo(0.9 * PROVIDER_PER_SECOND);
        for (int i = 0; i < 3; i++) {
            assertThat(perInstance[i]).as("instance %d's share of %d", i, measured).isGreaterThanOrEqualTo(measured / 4);
        }
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
                    ? third.sendAsync(HttpRequest.newBuilder(provider.uri(2)).build(), HttpResponse.BodyHandlers.discarding())
                            .get(20, TimeUnit.SECONDS).statusCode()
                    : third.send(HttpRequest.newBuilder(provider.uri(2)).build(), HttpResponse.BodyHandlers.discarding())
                            .statusCode()));
        }
        return threads;
    }

    /**
     * The provider answers 429 with {@code Retry-After: 2} for two seconds while the three
     * instances are busy. The first 429 pauses the key in Redis, so every instance holds off:
     * only the calls whose slots were reserved before it was heard still go (at most one per
     * thread, nine, and a few reserved while the pause was being written); nothing arrives in the
     * last half second of the closure. Then every instance resumes, at the limiter's pace: no
     * 429 from the strict provider once it reopens, and at most ten calls in its first second.
     */
    @Test
    void aProviderAskingToPauseIsHeardByEveryInstanceWhichResumesWithoutABurst() throws Exception {
        Permits[] permits = new Permits[3];
        for (int i = 0; i < 3; i++) {
            permits[i] = ready(Permits.of(instance(FailureMode.OPEN, Duration.ofSeconds(2)), Duration.ofSeconds(10)));
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
        assertThat(failures.get()).as("calls that failed").isZero();

        List<long[]> refused = new ArrayList<>(provider.refused);
        refused.sort((a, b) -> Long.compare(a[0], b[0]));
        assertThat(refused).as("429s while the provider was closed").isNotEmpty();
        long heard = refused.get(0)[0];
        String timeline = timeline(provider.calls, closed);
        assertThat(refused.size()).as("429s while closed: the calls reserved before the first was heard; " + timeline)
                .isLessThanOrEqualTo(12);
        assertThat(provider.calls).as("calls in the last half second of the closure; " + timeline)
                .noneMatch(call -> call[0] - (heard + TimeUnit.MILLISECONDS.toNanos(1_500)) >= 0 && call[0] - reopened < 0);
        assertThat(provider.tooMany).as("429s from the strict provider once reopened; " + timeline)
                .noneMatch(at -> at - reopened >= 0);
        long firstSecond = provider.calls.stream()
                .filter(call -> call[0] - reopened >= 0 && call[0] - reopened < TimeUnit.SECONDS.toNanos(1)).count();
        assertThat(firstSecond).as("calls in the provider's first second after reopening; " + timeline)
                .isLessThanOrEqualTo(PROVIDER_PER_SECOND);
        for (int i = 0; i < 3; i++) {
            int instance = i;
            assertThat(provider.accepted).as("instance %d resumed; %s", instance, timeline)
                    .anyMatch(call -> call[1] == instance && call[0] - reopened >= 0);
        }
    }

    /** Each call's arrival in ms from {@code origin} and its instance, for a failure's message. */
    private static String timeline(ConcurrentLinkedQueue<long[]> calls, long origin) {
        List<long[]> all = new ArrayList<>(calls);
        all.sort((a, b) -> Long.compare(a[0], b[0]));
        return "arrivals (ms after the closure, instance) " + all.stream()
                .map(call -> (call[0] - origin) / 1_000_000 + ":" + call[1]).toList();
    }

    /** The eleven consecutive arrivals closest together: 10/7 s apart at the slots, under 1 s for a 429. */
    private static String tightest(ConcurrentLinkedQueue<Long> arrivals, long started) {
        List<Long> all = new ArrayList<>(arrivals);
        all.sort(null);
        int first = 0;
        for (int i = 0; i + 10 < all.size(); i++) {
            if (all.get(i + 10) - all.get(i) < all.get(first + 10) - all.get(first)) {
                first = i;
            }
        }
        if (all.size() < 11) {
            return all.size() + " arrivals";
        }
        List<Long> millis = all.subList(first, first + 11).stream().map(at -> (at - started) / 1_000_000).toList();
        return "the tightest eleven arrivals (ms after the start) " + millis;
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
        // one permit per 2 s: a slow first call (a client's start) still leaves the next one far off
        RateLimiter limiter = instance(Limit.of("provider", 1, Duration.ofSeconds(2)), FailureMode.CLOSED,
                Duration.ofSeconds(2));
        Permits impatient = Permits.of(limiter, Duration.ofMillis(20));
        Client client = jaxrsClient(impatient);
        HttpClient http = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), impatient, "provider");
        assertThat(status(client.target(provider.uri(0)).request().get())).isEqualTo(200);
        // the next permit is up to 2 s away: beyond 20 ms
        assertThatThrownBy(() -> client.target(provider.uri(0)).request().get())
                .isInstanceOf(ProcessingException.class).hasCauseInstanceOf(PermitUnavailableException.class)
                .hasMessageContaining("no permit for 'provider' within 20 ms");
        assertThatThrownBy(() -> http.send(HttpRequest.newBuilder(provider.uri(2)).build(), HttpResponse.BodyHandlers.discarding()))
                .isInstanceOf(PermitUnavailableException.class);
        assertThatThrownBy(() -> http.sendAsync(HttpRequest.newBuilder(provider.uri(2)).build(),
                HttpResponse.BodyHandlers.discarding()).join()).hasCauseInstanceOf(PermitUnavailableException.class);
        // a call cancelled while it waits for its slot is never sent
        HttpClient patient = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), Permits.of(limiter, Duration.ofSeconds(5)),
                "provider");
        CompletableFuture<HttpResponse<Void>> cancelled = patient.sendAsync(HttpRequest.newBuilder(provider.uri(3)).build(),
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
        // 2 s apart at the slots; a late arrival of the call before only shortens the gap, and
        // the slot after the given-up one would make it 4 s
        assertThat(Duration.ofNanos(sent.get(2)[0] - sent.get(1)[0])).as("the next call took the given-up slot")
                .isLessThan(Duration.ofMillis(3500));
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
            assertThat(openClient.send(HttpRequest.newBuilder(provider.uri(0)).build(), HttpResponse.BodyHandlers.discarding())
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
        assertThat(System.nanoTime() - started).as("local: the second waited for the local share's next permit, 500 ms on")
                .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(490));
    }
}
