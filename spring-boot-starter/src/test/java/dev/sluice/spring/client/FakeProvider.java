package dev.sluice.spring.client;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A rate-limited provider on 127.0.0.1 for the clients' tests: the JDK's HTTP server, recording
 * each request's path as it arrives and the most requests it ever held at once. A path containing
 * {@code /429-<seconds>} is answered 429 with {@code Retry-After: <seconds>}; one containing
 * {@code /slow} is held until {@link #letSlowOnesGo} (at most 20 s); any other, 200 with a small body.
 */
final class FakeProvider implements AutoCloseable {

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final ConcurrentLinkedQueue<String> arrived = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger mostInside = new AtomicInteger();
    private final CountDownLatch slow = new CountDownLatch(1);

    FakeProvider() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 100);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", exchange -> {
            int now = inside.incrementAndGet();
            mostInside.accumulateAndGet(now, Math::max);
            try {
                String path = exchange.getRequestURI().getPath();
                arrived.add(path);
                if (path.contains("/slow") && !slow.await(20, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the slow request was never let through");
                }
                // no longer held before the answer leaves: a client sees the answer only after this
                inside.decrementAndGet();
                int retryAfter = path.indexOf("/429-");
                if (retryAfter >= 0) {
                    exchange.getResponseHeaders().add("Retry-After", path.substring(retryAfter + 5).split("/")[0]);
                    exchange.sendResponseHeaders(429, -1);
                    return;
                }
                byte[] body = "ok".getBytes();
                exchange.sendResponseHeaders(200, body.length);
                exchange.getResponseBody().write(body);
            } catch (InterruptedException e) {
                inside.decrementAndGet();
                Thread.currentThread().interrupt();
            } finally {
                exchange.close();
            }
        });
        server.setExecutor(threads);
        server.start();
    }

    /** {@code http://127.0.0.1:<port>}. */
    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The paths that arrived starting with {@code prefix}, in order. */
    List<String> arrivedUnder(String prefix) {
        return arrived.stream().filter(path -> path.startsWith(prefix)).toList();
    }

    /** The most requests the provider was answering at once. */
    int mostInside() {
        return mostInside.get();
    }

    /** Answers the requests held on {@code /slow}, and all later ones at once. */
    void letSlowOnesGo() {
        slow.countDown();
    }

    @Override
    public void close() {
        slow.countDown();
        server.stop(0);
        threads.shutdownNow();
    }
}
