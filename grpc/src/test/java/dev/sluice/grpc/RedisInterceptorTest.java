package dev.sluice.grpc;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.RetryInfo;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.TestRedis;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static dev.sluice.grpc.RateLimitInterceptorTest.catchRefusal;
import static dev.sluice.grpc.RateLimitInterceptorTest.key;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The interceptor deciding on a real Redis (the test JVM's, {@link TestRedis}): its decisions wait
 * on the store, so calls take the delayed listener's path. Each test limits a policy of its own.
 */
class RedisInterceptorTest {

    private static final String REDIS = TestRedis.shared().url();
    /**
     * The store, and a timeout long enough that this busy machine's Redis always decides: with the
     * default 100 ms a late answer fails open, and a call proceeds without its budget.
     */
    private static final Map<String, String> DECIDING = Map.of("store", REDIS, "timeout", "2s");

    private static String policy(String name) {
        return name + "-" + UUID.randomUUID();
    }

    @Test
    void aUnaryCallOverTheLimitIsRefusedWithRetryInfo() throws Exception {
        try (RateLimitInterceptor limits = RateLimitInterceptor.builder().settings(DECIDING)
                .method("test.Echo/Say", Map.of("limit", "2/1m", "policy", policy("say"))).build();
             GrpcServer grpc = new GrpcServer(limits)) {
            assertThat(grpc.say("a")).isEqualTo("a");
            assertThat(grpc.say("b")).isEqualTo("b");
            StatusRuntimeException refused = catchRefusal(() -> grpc.say("c"));
            assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            assertThat(refused.getTrailers().get(key("ratelimit-remaining"))).isEqualTo("0");
            assertThat(retryMillis(refused)).isBetween(1L, 60_000L);
        }
    }

    @Test
    void streamingCallsAreChargedOncePerCall() throws Exception {
        String[] twenty = IntStream.rangeClosed(1, 20).mapToObj(Integer::toString).toArray(String[]::new);
        try (RateLimitInterceptor limits = RateLimitInterceptor.builder().settings(DECIDING)
                .method("test.Echo/Count", Map.of("limit", "2/1m", "policy", policy("count")))
                .method("test.Echo/Join", Map.of("limit", "2/1m", "policy", policy("join")))
                .method("test.Echo/Chat", Map.of("limit", "2/1m", "policy", policy("chat"))).build();
             GrpcServer grpc = new GrpcServer(limits)) {
            for (var method : List.of(Echo.COUNT, Echo.JOIN, Echo.CHAT)) {
                String[] requests = method == Echo.COUNT ? new String[] {"20"} : twenty;
                for (int i = 1; i <= 2; i++) {
                    GrpcServer.Result result = grpc.call(method, Map.of(), requests);
                    assertThat(result.ok()).as("%s call %d: %s", method.getFullMethodName(), i, result.status())
                            .isTrue();
                    assertThat(result.responses()).hasSize(method == Echo.JOIN ? 1 : 20);
                    assertThat(result.header("ratelimit-remaining")).isEqualTo(Integer.toString(2 - i));
                }
                assertThat(grpc.call(method, Map.of(), requests).status().getCode()).as(method.getFullMethodName())
                        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
            }
        }
    }

    @Test
    void aServiceThatThrowsAfterAWaitedDecisionClosesItsCallUnknown() {
        try (RateLimitInterceptor limits = RateLimitInterceptor.builder().settings(DECIDING)
                .method("test.Echo/Fail", Map.of("limit", "100/1m", "policy", policy("fail")))
                .method("test.Echo/Unready", Map.of("limit", "100/1m", "policy", policy("unready"))).build();
             GrpcServer grpc = new GrpcServer(limits)) {
            // Unready's first event (readiness) usually arrives while the store decides, so the
            // interceptor replays it and must close the call itself when the listener throws.
            for (var method : List.of(Echo.FAIL, Echo.UNREADY)) {
                for (int i = 0; i < 10; i++) {
                    GrpcServer.Result result = grpc.call(method, Map.of(), "x");
                    assertThat(result.status().getCode()).as("%s call %d: %s", method.getFullMethodName(), i,
                            result.status()).isEqualTo(Status.Code.UNKNOWN);
                }
            }
        }
    }

    @Test
    void threeServersOnOneRedisAdmitExactlyTheLimitAcrossConcurrentCalls() throws Exception {
        int limit = 20;
        int callsPerServer = 25;
        String shared = policy("shared");
        List<RedisStore> stores = new ArrayList<>();
        List<RateLimitInterceptor> interceptors = new ArrayList<>();
        List<GrpcServer> servers = new ArrayList<>();
        ExecutorService clients = Executors.newFixedThreadPool(12);
        try {
            for (int i = 0; i < 3; i++) {
                RedisStore store = RedisStore.connect(REDIS); // a client of its own, as another instance has
                stores.add(store);
                RateLimitInterceptor limits = RateLimitInterceptor.builder().store(store)
                        .settings(Map.of("timeout", "2s"))
                        .method("test.Echo/*", Map.of("limit", limit + "/1h", "policy", shared,
                                "key", "header:x-api-key")).build();
                interceptors.add(limits);
                servers.add(new GrpcServer(limits));
            }
            List<Future<GrpcServer.Result>> calls = new ArrayList<>();
            for (int i = 0; i < callsPerServer; i++) {
                for (GrpcServer server : servers) {
                    calls.add(clients.submit(() -> server.call(Echo.CHAT, Map.of("x-api-key", "k"), "x", "y")));
                }
            }
            int admitted = 0;
            int refused = 0;
            for (Future<GrpcServer.Result> call : calls) {
                GrpcServer.Result result = call.get(60, TimeUnit.SECONDS);
                if (result.ok()) {
                    admitted++;
                } else {
                    assertThat(result.status().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
                    refused++;
                }
            }
            assertThat(admitted).isEqualTo(limit);
            assertThat(refused).isEqualTo(3 * callsPerServer - limit);
        } finally {
            clients.shutdownNow();
            for (GrpcServer server : servers) {
                server.close();
            }
            interceptors.forEach(RateLimitInterceptor::close);
            stores.forEach(RedisStore::close);
        }
    }

    @Test
    void aConcurrencyLeaseOnRedisComesBackWhenTheClientCancels() throws Exception {
        try (RateLimitInterceptor limits = RateLimitInterceptor.builder().settings(DECIDING)
                .method("test.Feed/Follow", Map.of("algorithm", "concurrency", "limit", "1", "lease", "5m",
                        "policy", policy("follow"))).build();
             GrpcServer grpc = new GrpcServer(limits)) {
            Follower held = Follower.follow(grpc);
            assertThat(held.admitted()).as("first stream: %s", held.end).isTrue();
            Follower second = Follower.follow(grpc);
            assertThat(second.admitted()).isFalse();
            assertThat(second.ended().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);

            held.cancel();
            Follower third = RateLimitInterceptorTest.admittedAfterTheCancel(grpc);
            assertThat(third.admitted()).as("after the cancel: %s", third.end).isTrue();
            third.cancel();
        }
    }

    @Test
    void anUnreachableRedisLetsCallsThroughWhenOpen() throws Exception {
        String dead = "redis://127.0.0.1:" + TestRedis.freePort();
        try (RateLimitInterceptor limits = RateLimitInterceptor.builder()
                .settings(Map.of("store", dead, "timeout", "100ms"))
                .method("test.Echo/Say", Map.of("limit", "1/1m", "failure-mode", "open")).build();
             GrpcServer grpc = new GrpcServer(limits)) {
            for (int i = 0; i < 3; i++) {
                GrpcServer.Result result = grpc.call(Echo.SAY, Map.of(), "a");
                assertThat(result.ok()).as("call %d: %s", i, result.status()).isTrue();
                assertThat(result.header("ratelimit-limit")).isNull();
            }
        }
    }

    @Test
    void anUnreachableRedisRefusesCallsUnavailableWhenClosed() throws Exception {
        String dead = "redis://127.0.0.1:" + TestRedis.freePort();
        try (RateLimitInterceptor limits = RateLimitInterceptor.builder()
                .settings(Map.of("store", dead, "timeout", "100ms"))
                .method("test.Echo/Say", Map.of("limit", "1/1m", "failure-mode", "closed")).build();
             GrpcServer grpc = new GrpcServer(limits)) {
            for (int i = 0; i < 3; i++) {
                StatusRuntimeException refused = catchRefusal(() -> grpc.say("a"));
                assertThat(refused.getStatus().getCode()).as("call %d", i).isEqualTo(Status.Code.UNAVAILABLE);
                assertThat(Long.parseLong(refused.getTrailers().get(key("retry-after")))).isPositive();
                assertThat(retryMillis(refused)).isPositive();
            }
        }
    }

    private static long retryMillis(StatusRuntimeException refused) throws InvalidProtocolBufferException {
        com.google.rpc.Status details = StatusProto.fromThrowable(refused);
        assertThat(details).isNotNull();
        assertThat(details.getCode()).isEqualTo(refused.getStatus().getCode().value());
        var retry = details.getDetailsList().stream().filter(a -> a.is(RetryInfo.class)).toList();
        assertThat(retry).hasSize(1);
        com.google.protobuf.Duration delay = retry.get(0).unpack(RetryInfo.class).getRetryDelay();
        return delay.getSeconds() * 1000 + delay.getNanos() / 1_000_000;
    }
}
