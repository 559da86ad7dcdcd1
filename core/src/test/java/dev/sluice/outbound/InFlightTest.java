package dev.sluice.outbound;

import dev.sluice.Lease;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The cap on calls in flight on the memory store: a place is released however a call ends. */
class InFlightTest {

    private static Permits onePlace(Duration maxWait) {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1000, Duration.ofSeconds(1))).build();
        return Permits.builder(limiter).maxWait(maxWait).maxInFlight(1).build();
    }

    /** A loopback port nobody listens on: every call to it fails with a refused connection. */
    private static URI refused() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/");
        }
    }

    @Test
    void theBuilderRefusesABadCapNamingTheSetting() {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 10, Duration.ofSeconds(1))).build();
        assertThatThrownBy(() -> Permits.builder(limiter).maxWait(Duration.ofSeconds(1)).maxInFlight(0).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'maxInFlight' must be at least 1 (e.g. 4), got '0'");
        assertThatThrownBy(() -> Permits.builder(limiter).maxWait(Duration.ofSeconds(1))
                .inFlightLease(Duration.ofSeconds(5)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'inFlightLease' applies only");
        assertThatThrownBy(() -> Permits.builder(limiter).maxWait(Duration.ofSeconds(1)).maxInFlight(2)
                .inFlightLease(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'inFlightLease' must be positive");
        assertThatThrownBy(() -> Permits.of(limiter, Duration.ofSeconds(1)).enter("provider"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("maxInFlight");
        assertThat(Permits.builder(limiter).maxWait(Duration.ofSeconds(1)).maxInFlight(3).build().maxInFlight())
                .isEqualTo(3);
    }

    @Test
    void aCallerWaitsForAPlaceAndGivesUpAfterTheWait() throws Exception {
        Permits permits = onePlace(Duration.ofMillis(200));
        Lease first = permits.enter("provider");
        long started = System.nanoTime();
        assertThatThrownBy(() -> permits.enter("provider")).isInstanceOf(PermitUnavailableException.class);
        assertThat(System.nanoTime() - started).as("waited").isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
        CompletableFuture<Lease> waiting = permits.enterAsync("provider");
        Thread.sleep(30);
        first.release();
        assertThat(waiting.get(5, TimeUnit.SECONDS).held()).as("the freed place, to the waiter").isTrue();
    }

    @Test
    void aFailedCallReleasesItsPlace() throws Exception {
        Permits permits = onePlace(Duration.ofMillis(300));
        HttpClient client = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), permits, "provider");
        HttpRequest request = HttpRequest.newBuilder(refused()).timeout(Duration.ofSeconds(5)).build();
        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> client.send(request, HttpResponse.BodyHandlers.discarding()))
                    .as("a refused connection, not a place still held").isInstanceOf(IOException.class);
            assertThatThrownBy(() -> client.sendAsync(request, HttpResponse.BodyHandlers.discarding())
                    .get(5, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IOException.class);
        }
        permits.enter("provider").release();
    }

    @Test
    void aCallCancelledWhileWaitingForAPlaceTakesNone() throws Exception {
        Permits permits = onePlace(Duration.ofSeconds(5));
        HttpClient client = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), permits, "provider");
        // a server that accepts connections and never answers: a call sent to it holds its place
        try (ServerSocket silent = new ServerSocket(0, 10, java.net.InetAddress.getLoopbackAddress())) {
            URI uri = URI.create("http://127.0.0.1:" + silent.getLocalPort() + "/");
            Lease held = permits.enter("provider");
            CompletableFuture<HttpResponse<Void>> waiting = client.sendAsync(HttpRequest.newBuilder(uri).build(),
                    HttpResponse.BodyHandlers.discarding());
            Thread.sleep(50);
            waiting.cancel(false);
            held.release();
            Thread.sleep(100);   // a retry of the cancelled waiter would take the freed place by now
            Lease again = permits.enter("provider");
            assertThat(again.held()).as("the place, free: the cancelled call took none and sent nothing").isTrue();
            again.release();
        }
    }
}
