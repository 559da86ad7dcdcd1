package dev.sluice.outbound;

import dev.sluice.Lease;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A {@link HttpClient} that waits for a permit of its {@link Permits} before each request: the
 * JDK's client, limited to a provider's quota shared by every instance on the same store.
 * {@link #send} waits on the calling thread; {@link #sendAsync} blocks no thread (the request is
 * sent when its slot comes). Its stage completed before the request is handed to the wrapped
 * client, however ({@code cancel}, {@code orTimeout}, {@code completeOnTimeout}, the caller
 * completing it), sends nothing and gives the reservation and the place in flight back. A request
 * that gets no permit within the wait is not sent: {@code send} throws, and {@code sendAsync}'s
 * stage fails with, {@link PermitUnavailableException}. Each response is read for a provider's
 * "slow down" ({@link Permits#learn}: a 429 or 503 with {@code Retry-After}, or {@code RateLimit}
 * headers saying the budget is spent), which pauses the key for every instance before the
 * response is returned. Everything else is the wrapped client's.
 *
 * <pre>{@code
 * HttpClient client = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), permits, RateLimitedHttpClient.HOST);
 * }</pre>
 */
public final class RateLimitedHttpClient extends HttpClient {

    /** Keys each request by its target host: one quota per provider host. */
    public static final Function<HttpRequest, String> HOST = request -> String.valueOf(request.uri().getHost());

    private final HttpClient client;
    private final Permits permits;
    private final Function<HttpRequest, String> key;
    /** Each request's priority; every request {@link Priority#HIGH} unless {@link #withPriority} says otherwise. */
    private final Function<HttpRequest, Priority> priority;

    private RateLimitedHttpClient(HttpClient client, Permits permits, Function<HttpRequest, String> key) {
        this(client, permits, key, request -> Priority.HIGH);
    }

    private RateLimitedHttpClient(HttpClient client, Permits permits, Function<HttpRequest, String> key,
                                  Function<HttpRequest, Priority> priority) {
        this.client = Objects.requireNonNull(client, "client");
        this.permits = Objects.requireNonNull(permits, "permits");
        this.key = Objects.requireNonNull(key, "key");
        this.priority = Objects.requireNonNull(priority, "priority");
    }

    /** {@code client} limited by {@code permits}, every request under one key, e.g. the provider's name. */
    public static RateLimitedHttpClient wrap(HttpClient client, Permits permits, String key) {
        Objects.requireNonNull(key, "key");
        return new RateLimitedHttpClient(client, permits, request -> key);
    }

    /** {@code client} limited by {@code permits}, each request under the key {@code key} gives it (see {@link #HOST}). */
    public static RateLimitedHttpClient wrap(HttpClient client, Permits permits, Function<HttpRequest, String> key) {
        return new RateLimitedHttpClient(client, permits, key);
    }

    /**
     * This client with each request at the {@link Priority} {@code priority} gives it (e.g. by a
     * header, or {@code request -> Priority.LOW} for a batch job's own client); see
     * {@link Permits} for what a priority guarantees.
     *
     * @throws IllegalArgumentException if the permits have no priorities (no high-priority share)
     */
    public RateLimitedHttpClient withPriority(Function<HttpRequest, Priority> priority) {
        Objects.requireNonNull(priority, "priority");
        if (!permits.hasPriorities()) {
            throw new IllegalArgumentException("a priority needs permits with priorities (Permits.builder(limiter)"
                    + ".highPriorityShare(...)), got '" + permits + "'");
        }
        return new RateLimitedHttpClient(client, permits, key, priority);
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        String k = key.apply(request);
        if (permits.maxInFlight() > 0) {
            // the place first: a call waiting for one spends no permit; released however the call ends
            try (Lease place = permits.enter(k)) {
                return sendWithPermit(k, request, handler);
            }
        }
        return sendWithPermit(k, request, handler);
    }

    private <T> HttpResponse<T> sendWithPermit(String k, HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        permits.acquire(k, priority.apply(request));
        HttpResponse<T> response = client.send(request, handler);
        permits.learn(k, response.statusCode(), headers(response));
        return response;
    }

    /** A response's headers as {@link Permits#learn} reads them. */
    private static Function<String, String> headers(HttpResponse<?> response) {
        return name -> response.headers().firstValue(name).orElse(null);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return new AsyncCall<>(request, () -> client.sendAsync(request, handler)).start();
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                            HttpResponse.PushPromiseHandler<T> pushes) {
        return new AsyncCall<>(request, () -> client.sendAsync(request, handler, pushes)).start();
    }

    /**
     * One call of {@link #sendAsync}: a place in flight (with a cap), then a permit, then the
     * exchange, completing the caller's {@link #response}. Until the request is handed to the
     * client, any completion of that stage (cancelled, {@code orTimeout}, {@code completeOnTimeout},
     * the caller completing it, or a failure of the place or the permit) gives the call up: it is
     * never sent, the permit's reservation (or the wait for it) and the place are given back. Once
     * handed over, a cancellation reaches the exchange, and the place is released when the exchange
     * ends, whoever completed the stage.
     */
    private final class AsyncCall<T> {
        private final String key;
        private final Priority priority;
        private final Supplier<CompletableFuture<HttpResponse<T>>> send;
        private final CompletableFuture<HttpResponse<T>> response = new CompletableFuture<>();
        // guarded by this: the hand-over and the giving up decide once which of them came first
        private CompletableFuture<?> waiting;
        private Lease place;
        private boolean handedOver;
        private boolean givenUp;
        private CompletableFuture<HttpResponse<T>> exchange;

        AsyncCall(HttpRequest request, Supplier<CompletableFuture<HttpResponse<T>>> send) {
            this.key = RateLimitedHttpClient.this.key.apply(request);
            this.priority = RateLimitedHttpClient.this.priority.apply(request);
            this.send = send;
        }

        CompletableFuture<HttpResponse<T>> start() {
            response.whenComplete((value, failure) -> ended());
            if (permits.maxInFlight() == 0) {
                acquire();
            } else {
                waitOn(permits.enterAsync(key)).whenComplete((lease, failure) -> {
                    if (failure != null) {
                        fail(failure);
                    } else {
                        entered(lease);
                    }
                });
            }
            return response;
        }

        /** {@code stage}, cancelled at once if the call was given up, else the one a give-up cancels. */
        private <S> CompletableFuture<S> waitOn(CompletableFuture<S> stage) {
            boolean cancel;
            synchronized (this) {
                cancel = givenUp;
                waiting = stage;
            }
            if (cancel) {
                stage.cancel(false);
            }
            return stage;
        }

        private void entered(Lease lease) {
            boolean keep;
            synchronized (this) {
                keep = !givenUp;
                place = lease;
            }
            if (!keep) {
                lease.release();
                return;
            }
            acquire();
        }

        private void acquire() {
            waitOn(permits.acquireAsync(key, priority)).whenComplete((decision, failure) -> {
                if (failure != null) {
                    fail(failure);
                } else {
                    handOver();
                }
            });
        }

        /** Sends, unless the caller's stage was completed first: then the request never goes. */
        private void handOver() {
            synchronized (this) {
                if (givenUp || response.isDone()) {
                    return;   // ended() gives the place back (the slot has come: it passes unused)
                }
                handedOver = true;
            }
            CompletableFuture<HttpResponse<T>> sent;
            try {
                sent = send.get();
            } catch (RuntimeException e) {
                releasePlace();
                response.completeExceptionally(e);
                return;
            }
            synchronized (this) {
                exchange = sent;
            }
            if (response.isCancelled()) {
                sent.cancel(false);   // cancelled between the hand-over and here
            }
            sent.whenComplete((answer, failure) -> {
                releasePlace();
                if (failure != null) {
                    fail(failure);
                    return;
                }
                permits.learnAsync(key, answer.statusCode(), headers(answer))
                        .whenComplete((pause, never) -> response.complete(answer));
            });
        }

        /** The caller's stage completed, by this call or by anyone else. */
        private void ended() {
            boolean gaveUp;
            CompletableFuture<?> waited;
            CompletableFuture<HttpResponse<T>> sent;
            synchronized (this) {
                givenUp = !handedOver;
                gaveUp = givenUp;
                waited = waiting;
                sent = exchange;
            }
            if (!gaveUp) {
                if (sent != null && response.isCancelled()) {
                    sent.cancel(false);
                }
                return;
            }
            if (waited != null) {
                waited.cancel(false);   // stops the wait for the place, or gives the reservation back
            }
            releasePlace();
        }

        private void releasePlace() {
            Lease held;
            synchronized (this) {
                held = place;
            }
            if (held != null) {
                held.release();   // releasing twice releases once
            }
        }

        private void fail(Throwable failure) {
            response.completeExceptionally(failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure);
        }
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return client.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return client.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
        return client.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return client.proxy();
    }

    @Override
    public SSLContext sslContext() {
        return client.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
        return client.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return client.authenticator();
    }

    @Override
    public Version version() {
        return client.version();
    }

    @Override
    public Optional<Executor> executor() {
        return client.executor();
    }

    /** The wrapped client's, unlimited: a web socket is one long exchange, not a stream of requests. */
    @Override
    public WebSocket.Builder newWebSocketBuilder() {
        return client.newWebSocketBuilder();
    }

    @Override
    public String toString() {
        return "RateLimitedHttpClient[" + permits + ", " + client + "]";
    }
}
