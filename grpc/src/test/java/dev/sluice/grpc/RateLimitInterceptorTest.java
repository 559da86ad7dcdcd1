package dev.sluice.grpc;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import dev.sluice.memory.MemoryStore;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The interceptor on a real Netty server and client channel, deciding on the memory store. */
class RateLimitInterceptorTest {

    private final MemoryStore store = MemoryStore.create();
    private RateLimitInterceptor limits;
    private GrpcServer server;

    private GrpcServer serve(RateLimitInterceptor.Builder builder) {
        limits = builder.store(store).build();
        server = new GrpcServer(limits);
        return server;
    }

    @AfterEach
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (limits != null) {
            limits.close();
        }
        store.close();
    }

    @Test
    void aUnaryCallOverTheLimitIsRefusedWithRetryInfoAndTheBudget() throws InvalidProtocolBufferException {
        GrpcServer grpc = serve(RateLimitInterceptor.builder().method("test.Echo/Say", Map.of("limit", "2/1m")));

        GrpcServer.Result first = grpc.call(Echo.SAY, Map.of(), "a");
        GrpcServer.Result second = grpc.call(Echo.SAY, Map.of(), "b");
        assertThat(first.responses()).containsExactly("a");
        assertThat(first.header("ratelimit-limit")).isEqualTo("2");
        assertThat(first.header("ratelimit-remaining")).isEqualTo("1");
        assertThat(second.header("ratelimit-remaining")).isEqualTo("0");

        StatusRuntimeException refused = catchRefusal(() -> grpc.say("c"));
        assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        Metadata trailers = refused.getTrailers();
        assertThat(trailers.get(key("ratelimit-limit"))).isEqualTo("2");
        assertThat(trailers.get(key("ratelimit-remaining"))).isEqualTo("0");
        assertThat(Long.parseLong(trailers.get(key("retry-after")))).isBetween(1L, 60L);
        assertThat(Long.parseLong(trailers.get(key("ratelimit-reset")))).isBetween(1L, 60L);
        com.google.rpc.Status details = StatusProto.fromThrowable(refused);
        assertThat(details).isNotNull();
        assertThat(details.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
        List<Any> retry = details.getDetailsList().stream().filter(a -> a.is(RetryInfo.class)).toList();
        assertThat(retry).hasSize(1);
        com.google.protobuf.Duration delay = retry.get(0).unpack(RetryInfo.class).getRetryDelay();
        long millis = delay.getSeconds() * 1000 + delay.getNanos() / 1_000_000;
        assertThat(millis).isBetween(1L, 60_000L);
    }

    @Test
    void aServerStreamingCallIsChargedOnceWhateverItsMessages() {
        GrpcServer grpc = serve(RateLimitInterceptor.builder().method("test.Echo/Count", Map.of("limit", "3/1m")));

        for (int i = 1; i <= 3; i++) {
            GrpcServer.Result result = grpc.call(Echo.COUNT, Map.of(), "5");
            assertThat(result.ok()).as("call %d: %s", i, result.status()).isTrue();
            assertThat(result.responses()).containsExactly("1", "2", "3", "4", "5");
            assertThat(result.header("ratelimit-remaining")).isEqualTo(Integer.toString(3 - i));
        }
        GrpcServer.Result refused = grpc.call(Echo.COUNT, Map.of(), "5");
        assertThat(refused.status().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(refused.responses()).isEmpty();
    }

    @Test
    void clientAndBidiStreamingCallsAreChargedOnceWhateverTheirMessages() {
        GrpcServer grpc = serve(RateLimitInterceptor.builder()
                .method("test.Echo/Join", Map.of("limit", "2/1m"))
                .method("test.Echo/Chat", Map.of("limit", "2/1m")));
        String[] ten = IntStream.rangeClosed(1, 10).mapToObj(Integer::toString).toArray(String[]::new);

        for (var method : List.of(Echo.JOIN, Echo.CHAT)) {
            for (int i = 1; i <= 2; i++) {
                GrpcServer.Result result = grpc.call(method, Map.of(), ten);
                assertThat(result.ok()).as("%s call %d: %s", method.getFullMethodName(), i, result.status()).isTrue();
                assertThat(result.responses()).hasSize(method == Echo.JOIN ? 1 : 10);
                assertThat(result.header("ratelimit-remaining")).isEqualTo(Integer.toString(2 - i));
            }
            GrpcServer.Result refused = grpc.call(method, Map.of(), ten);
            assertThat(refused.status().getCode()).as(method.getFullMethodName())
                    .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(refused.responses()).isEmpty();
        }
    }

    @Test
    void aConcurrencyLeaseComesBackWhenTheClientCancelsTheStream() throws Exception {
        GrpcServer grpc = serve(RateLimitInterceptor.builder().method("test.Feed/Follow",
                Map.of("algorithm", "concurrency", "limit", "1", "lease", "5m")));

        Follower held = Follower.follow(grpc);
        assertThat(held.admitted()).as("first stream: %s", held.end).isTrue();

        Follower second = Follower.follow(grpc);
        assertThat(second.admitted()).isFalse();
        assertThat(second.ended().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);

        assertThat(held.cancel().getCode()).isEqualTo(Status.Code.CANCELLED);
        Follower third = admittedAfterTheCancel(grpc);
        assertThat(third.admitted()).as("after the cancel: %s", third.end).isTrue();
        assertThat(grpc.echo.cancelled.get()).isEqualTo(1);
        third.cancel();
    }

    /**
     * The first of a few streams (the server hears of a cancel after the client) that is admitted;
     * each refused one ends at once. Bounded: ten seconds, far below the lease.
     */
    static Follower admittedAfterTheCancel(GrpcServer grpc) throws Exception {
        Follower last = null;
        for (int i = 0; i < 100; i++) {
            last = Follower.follow(grpc);
            if (last.admitted()) {
                return last;
            }
            Thread.sleep(100);
        }
        return last;
    }

    @Test
    void aConcurrencyLeaseComesBackWhenTheStreamCompletes() throws InterruptedException {
        GrpcServer grpc = serve(RateLimitInterceptor.builder().method("test.Echo/Count",
                Map.of("algorithm", "concurrency", "limit", "1", "lease", "5m")));

        // Each call's lease returns as its status leaves, one store call later: with a lease of five
        // minutes, five calls in a row can only be admitted if each returned its lease.
        for (int i = 0; i < 5; i++) {
            GrpcServer.Result result = admittedWithin(() -> grpc.call(Echo.COUNT, Map.of(), "3"));
            assertThat(result.ok()).as("call %d: %s", i, result.status()).isTrue();
            assertThat(result.responses()).containsExactly("1", "2", "3");
        }
    }

    @Test
    void theMostSpecificPatternDecidesAndOtherCallsProceedUntouched() {
        GrpcServer grpc = serve(RateLimitInterceptor.builder()
                .method("test.Echo/Say", Map.of("limit", "1/1m"))
                .method("test.Echo/*", Map.of("limit", "2/1m"))
                .method("test.Feed", Map.of("limit", "3/1m")));

        assertThat(grpc.call(Echo.SAY, Map.of(), "a").header("ratelimit-limit")).isEqualTo("1");
        assertThat(grpc.call(Echo.COUNT, Map.of(), "1").header("ratelimit-limit")).isEqualTo("2");
        GrpcServer.Result other = grpc.call(Echo.OTHER, Map.of(), "a");
        assertThat(other.ok()).isTrue();
        assertThat(other.header("ratelimit-limit")).isNull();
        for (int i = 0; i < 3; i++) {
            assertThat(grpc.call(Echo.OTHER, Map.of(), "a").ok()).isTrue();
        }
    }

    @Test
    void everyCallFallsToTheStarPattern() {
        GrpcServer grpc = serve(RateLimitInterceptor.builder()
                .method("test.Echo/Say", Map.of("limit", "1/1m"))
                .method("*", Map.of("limit", "4/1m")));

        assertThat(grpc.call(Echo.SAY, Map.of(), "a").header("ratelimit-limit")).isEqualTo("1");
        assertThat(grpc.call(Echo.OTHER, Map.of(), "a").header("ratelimit-limit")).isEqualTo("4");
        assertThat(grpc.call(Echo.JOIN, Map.of(), "a").header("ratelimit-remaining")).isEqualTo("2");
    }

    @Test
    void aMetadataKeyGivesEachCallerItsOwnBudget() {
        GrpcServer grpc = serve(RateLimitInterceptor.builder()
                .method("test.Echo/Say", Map.of("limit", "1/1m", "key", "header:X-API-Key")));

        assertThat(grpc.call(Echo.SAY, Map.of("x-api-key", "one"), "a").ok()).isTrue();
        assertThat(grpc.call(Echo.SAY, Map.of("x-api-key", "two"), "a").ok()).isTrue();
        assertThat(grpc.call(Echo.SAY, Map.of("x-api-key", "one"), "a").status().getCode())
                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    }

    @Test
    void thePrincipalComesFromTheApplicationsContextKey() {
        GrpcServer grpc = serve(RateLimitInterceptor.builder().principal(Echo.USER)
                .method("test.Echo/Say", Map.of("limit", "1/1m", "key", "principal")));

        assertThat(grpc.call(Echo.SAY, Map.of("user", "alice"), "a").ok()).isTrue();
        assertThat(grpc.call(Echo.SAY, Map.of("user", "bob"), "a").ok()).isTrue();
        assertThat(grpc.call(Echo.SAY, Map.of("user", "alice"), "a").status().getCode())
                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    }

    @Test
    void aKeyResolverNamesTheCallerBeforeTheKeySources() {
        GrpcServer grpc = serve(RateLimitInterceptor.builder()
                .keyResolver(request -> request.header("tenant") == null ? null : "tenant " + request.header("tenant"))
                .method("test.Echo/Say", Map.of("limit", "1/1m", "key", "ip")));

        assertThat(grpc.call(Echo.SAY, Map.of("tenant", "a"), "x").ok()).isTrue();
        assertThat(grpc.call(Echo.SAY, Map.of("tenant", "b"), "x").ok()).isTrue();
        assertThat(grpc.call(Echo.SAY, Map.of(), "x").ok()).as("no tenant: the ip's own budget").isTrue();
        assertThat(grpc.call(Echo.SAY, Map.of("tenant", "a"), "x").status().getCode())
                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(grpc.call(Echo.SAY, Map.of(), "x").status().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    }

    @Test
    void theForwardedAddressCountsOnlyFromATrustedProxy() throws Exception {
        GrpcServer trusting = serve(RateLimitInterceptor.builder().method("test.Echo/Say",
                Map.of("limit", "1/1m", "key", "ip", "trusted-proxies", "127.0.0.1/32")));
        assertThat(trusting.call(Echo.SAY, Map.of("x-forwarded-for", "203.0.113.7"), "a").ok()).isTrue();
        assertThat(trusting.call(Echo.SAY, Map.of("x-forwarded-for", "203.0.113.8"), "a").ok()).isTrue();
        assertThat(trusting.call(Echo.SAY, Map.of("x-forwarded-for", "203.0.113.7"), "a").status().getCode())
                .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        stop();

        MemoryStore own = MemoryStore.create();
        try (RateLimitInterceptor untrusting = RateLimitInterceptor.builder().store(own)
                .method("test.Echo/Say", Map.of("limit", "1/1m", "key", "ip")).build();
             GrpcServer grpc = new GrpcServer(untrusting)) {
            assertThat(grpc.call(Echo.SAY, Map.of("x-forwarded-for", "203.0.113.7"), "a").ok()).isTrue();
            assertThat(grpc.call(Echo.SAY, Map.of("x-forwarded-for", "203.0.113.8"), "a").status().getCode())
                    .as("both calls come from 127.0.0.1").isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        } finally {
            own.close();
            server = null;
            limits = null;
        }
    }

    @Test
    void badConfigurationFailsAtStartNamingTheMethodTheParameterAndTheValue() {
        assertThatThrownBy(() -> RateLimitInterceptor.builder().store(store)
                .method("test.Echo/Say", Map.of("limit", "100/minutes")).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("gRPC method 'test.Echo/Say'").hasMessageContaining("'limit'")
                .hasMessageContaining("100/minutes");
        assertThatThrownBy(() -> RateLimitInterceptor.builder().method("test.Echo/Say/x", Map.of("limit", "1/s")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'test.Echo/Say/x'");
        assertThatThrownBy(() -> RateLimitInterceptor.builder().method("test.Echo/Say", Map.of("limt", "1/s")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gRPC method 'test.Echo/Say'")
                .hasMessageContaining("limt");
        assertThatThrownBy(() -> RateLimitInterceptor.builder().settings(Map.of("stor", "memory")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("settings")
                .hasMessageContaining("stor");
        assertThatThrownBy(() -> RateLimitInterceptor.builder().build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("method(pattern, limits)");
    }

    @Test
    void repeatedLimitsOfOnePatternAreDecidedTogether() {
        GrpcServer grpc = serve(RateLimitInterceptor.builder()
                .method("test.Echo/Say", Map.of("policy", "say-burst", "limit", "2/1m"))
                .method("test.Echo/Say", Map.of("policy", "say-hour", "limit", "3/1h")));

        assertThat(grpc.call(Echo.SAY, Map.of(), "a").ok()).isTrue();
        assertThat(grpc.call(Echo.SAY, Map.of(), "a").ok()).isTrue();
        GrpcServer.Result refused = grpc.call(Echo.SAY, Map.of(), "a");
        assertThat(refused.status().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(refused.status().getDescription()).contains("say-burst");
    }

    /** The first of a few calls that is not refused: a lease returns just after its call's status leaves. */
    static GrpcServer.Result admittedWithin(Supplier<GrpcServer.Result> call) throws InterruptedException {
        GrpcServer.Result last = null;
        for (int i = 0; i < 100; i++) {
            last = call.get();
            if (last.status().getCode() != Status.Code.RESOURCE_EXHAUSTED) {
                return last;
            }
            Thread.sleep(50);
        }
        return last;
    }

    static StatusRuntimeException catchRefusal(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e;
        }
        throw new AssertionError("the call was not refused");
    }

    static Metadata.Key<String> key(String name) {
        return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
    }
}
