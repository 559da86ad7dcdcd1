package dev.sluice.spring.client;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.Permits;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RateLimitExchangeFilter} never blocks a thread, and a caller that gives up sends nothing.
 * BlockHound fails any blocking call made on a Reactor non-blocking thread: the calls are
 * subscribed on {@code Schedulers.parallel()} and their responses come on Reactor Netty's event
 * loops, both watched; the first test shows BlockHound is watching.
 */
class WebClientNonBlockingTest {

    /** Each blocking call BlockHound caught on a watched thread, with the thread's name. */
    private static final List<String> BLOCKED = new CopyOnWriteArrayList<>();

    private final FakeProvider provider = new FakeProvider();
    private final List<RedisStore> stores = new ArrayList<>();

    @BeforeAll
    static void watchForBlocking() {
        // Reactor's and Netty's integrations first, then Redisson's own threads left out: they are
        // the Redis client's (its pool's idle wait, its Netty allocator's locks), not the filter's.
        BlockHound.Builder builder = BlockHound.builder();
        ServiceLoader.load(BlockHoundIntegration.class).forEach(integration -> integration.applyTo(builder));
        // Threads of Reactor's schedulers started by earlier tests of this JVM wait in a take() that
        // began before BlockHound instrumented it, so its allowance does not cover them: woken, one
        // is "caught" inside its own idle wait, dies (IllegalMonitorStateException), and every call
        // subscribed on it hangs. Their successors start after the install.
        Schedulers.shutdownNow();
        builder.nonBlockingThreadPredicate(watched -> watched.and(thread -> !thread.getName().startsWith("redisson")))
                .blockingMethodCallback(method -> {
                    // recorded too: Reactor drops an error thrown where nobody can receive it (a doFinally)
                    BLOCKED.add(method + " on " + Thread.currentThread().getName());
                    throw new BlockingOperationError(method);
                })
                .install();
    }

    @BeforeEach
    void nothingBlockedYet() {
        BLOCKED.clear();
    }

    @AfterEach
    void stop() {
        provider.close();
        stores.forEach(RedisStore::close);
    }

    /** Without this, the tests below would prove nothing: a sleep on a parallel thread is caught. */
    @Test
    void blockHoundCatchesBlockingOnANonBlockingThread() {
        assertThatThrownBy(() -> Mono.fromCallable(() -> {
            Thread.sleep(1);
            return 1;
        }).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(10)))
                .hasCauseInstanceOf(BlockingOperationError.class);
        assertThat(BLOCKED).singleElement().asString().contains("sleep").contains("parallel");
    }

    /**
     * Calls subscribed on a parallel thread, with and without a cap on calls in flight, one answered
     * 429 (a pause written to the store) and one given up while waiting, on the memory store and on
     * Redis: none blocks, and the filter ran on a thread Reactor marks non-blocking.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void theFilterNeverBlocksItsThread(boolean redis) {
        for (boolean capped : new boolean[] {false, true}) {
            String prefix = (redis ? "/redis" : "/memory") + (capped ? "/capped/" : "/uncapped/");
            RateLimiter.Builder limits = RateLimiter.builder().limit(Limit.of("provider-" + UUID.randomUUID(), 2,
                    Duration.ofSeconds(1)).withBurst(2)).timeout(Duration.ofSeconds(5));
            if (redis) {
                RedisStore store = RedisStore.connect(TestRedis.shared().url());
                stores.add(store);
                limits.store(store);
            }
            RateLimiter limiter = limits.build();
            Permits.Builder builder = Permits.builder(limiter).maxWait(Duration.ofSeconds(5));
            Permits permits = (capped ? builder.maxInFlight(1) : builder).build();
            List<Boolean> nonBlocking = new CopyOnWriteArrayList<>();
            ExchangeFilterFunction where = (request, next) -> {
                nonBlocking.add(Schedulers.isInNonBlockingThread());
                return next.exchange(request);
            };
            WebClient client = WebClient.builder().baseUrl(provider.url()).filter(where)
                    .filter(RateLimitExchangeFilter.named(permits, prefix)).build();
            assertThat(status(client, prefix + "1", null)).isEqualTo(200);
            assertThat(status(client, prefix + "429-1", null)).isEqualTo(429);
            assertThatThrownBy(() -> status(client, prefix + "given-up", Duration.ofMillis(100)))
                    .hasCauseInstanceOf(TimeoutException.class);
            assertThat(status(client, prefix + "2", null)).isEqualTo(200);
            // with the cap, the last call's place comes only once the previous ones were given back
            assertThat(status(client, prefix + "3", null)).isEqualTo(200);
            assertThat(nonBlocking).as("where the filter ran").containsOnly(true).hasSize(5);
            assertThat(provider.arrivedUnder(prefix))
                    .containsExactly(prefix + "1", prefix + "429-1", prefix + "2", prefix + "3");
            assertThat(BLOCKED).as("blocking calls on non-blocking threads").isEmpty();
        }
    }

    /**
     * One call per second, burst 1, each waiting at most 1.5 s: the first call takes the burst; the
     * second, whose slot is a second away, gives up after 200 ms ({@code timeout}). It is never
     * sent, and its slot goes back: the third call gets it (had it not been given back, the third's
     * slot would be two seconds away, beyond its wait). With a cap on calls in flight, the place the
     * second held while waiting is given back too.
     */
    @Test
    void aCallerThatGivesUpBeforeItsSlotSendsNothingAndGivesTheSlotBack() {
        for (boolean capped : new boolean[] {false, true}) {
            String prefix = capped ? "/gave-up-capped/" : "/gave-up/";
            RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1, Duration.ofSeconds(1))
                    .withBurst(1)).build();
            Permits.Builder builder = Permits.builder(limiter).maxWait(Duration.ofMillis(1500));
            Permits permits = (capped ? builder.maxInFlight(1) : builder).build();
            WebClient client = Clients.webClient(RateLimitExchangeFilter.named(permits, prefix), provider.url());
            assertThat(status(client, prefix + "first", null)).isEqualTo(200);
            assertThatThrownBy(() -> status(client, prefix + "second", Duration.ofMillis(200)))
                    .hasCauseInstanceOf(TimeoutException.class);
            assertThat(status(client, prefix + "third", null)).isEqualTo(200);
            assertThat(provider.arrivedUnder(prefix)).as("the call given up was never sent")
                    .containsExactly(prefix + "first", prefix + "third");
        }
    }

    /** The status of a GET of {@code path} subscribed on a parallel thread, given up after {@code timeout} if any. */
    private static int status(WebClient client, String path, Duration timeout) {
        Mono<Integer> status = client.get().uri(path).exchangeToMono(WebClientNonBlockingTest::status);
        return (timeout == null ? status : status.timeout(timeout)).subscribeOn(Schedulers.parallel())
                .block(Duration.ofSeconds(30));
    }

    private static Mono<Integer> status(ClientResponse response) {
        return response.releaseBody().thenReturn(response.statusCode().value());
    }
}
