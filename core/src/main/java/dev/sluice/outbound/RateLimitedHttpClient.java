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
import java.util.concurrent.Executor;
import java.util.function.Function;

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

    /** {@code client} limited by {@code permits}, each request under the key {@code key} gives it ({@link #HOST}). */
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
    static Function<String, String> headers(HttpResponse<?> response) {
        return name -> response.headers().firstValue(name).orElse(null);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return new AsyncCall<>(permits, key.apply(request), priority.apply(request),
                () -> client.sendAsync(request, handler)).start();
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                            HttpResponse.PushPromiseHandler<T> pushes) {
        return new AsyncCall<>(permits, key.apply(request), priority.apply(request),
                () -> client.sendAsync(request, handler, pushes)).start();
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
