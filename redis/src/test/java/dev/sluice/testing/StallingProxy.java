package dev.sluice.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback in front of a Redis server whose replies can be held back: the server
 * still receives and runs every command, but its answers reach the client only when released (or
 * after a delay). This is a Redis that "accepts connections but never answers", and a reply that
 * arrives after the client's timeout.
 */
public final class StallingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean stalled;
    private volatile long replyDelayMillis;
    private volatile boolean closed;
    private final java.util.concurrent.atomic.AtomicInteger toDrop = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger dropped = new java.util.concurrent.atomic.AtomicInteger();

    public StallingProxy(int targetPort) {
        this.targetPort = targetPort;
        try {
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::accept, "stalling-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public String url() {
        return "redis://127.0.0.1:" + port();
    }

    /** Holds every reply until {@link #release()}. */
    public void stall() {
        stalled = true;
    }

    /** Lets replies through again, including those held back. */
    public void release() {
        stalled = false;
    }

    /**
     * Closes the next {@code connections} connections as soon as they are accepted, without
     * reaching Redis: a client's attempt that fails for another reason than a refusal.
     */
    public void dropConnections(int connections) {
        toDrop.set(connections);
    }

    /** How many connections {@link #dropConnections} has closed. */
    public int dropped() {
        return dropped.get();
    }

    /** Delays every reply by this much after it left Redis: a network with this latency. */
    public void delayReplies(long millis) {
        replyDelayMillis = millis;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                if (toDrop.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    closeQuietly(client);
                    dropped.incrementAndGet();
                    continue;
                }
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, false);
                pump(upstream, client, true);
            } catch (IOException e) {
                if (!closed) {
                    continue;
                }
                return;
            }
        }
    }

    private void pump(Socket from, Socket to, boolean replies) {
        if (replies) {
            delayedPump(from, to);
            return;
        }
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16_384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // the other side went away: close both
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "stalling-proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Replies: one thread reads them as they come and stamps them, another delivers each one
     * {@link #delayReplies delay} after it arrived (or when released). The delay is latency, not
     * throughput: replies arriving together, or one after another, are each late by the same amount.
     */
    private void delayedPump(Socket from, Socket to) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            byte[] buffer = new byte[16_384];
            try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    queue.add(new Chunk(System.nanoTime(), Arrays.copyOf(buffer, n)));
                }
            } catch (IOException e) {
                // the other side went away
            } finally {
                queue.add(Chunk.END);
            }
        }, "stalling-proxy-read");
        Thread writer = new Thread(() -> {
            try (OutputStream out = to.getOutputStream()) {
                while (true) {
                    Chunk chunk = queue.take();
                    if (chunk == Chunk.END) {
                        break;
                    }
                    long due = chunk.arrivedNanos + TimeUnit.MILLISECONDS.toNanos(replyDelayMillis);
                    for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    for (int waited = 0; stalled && !closed && waited < 120_000; waited += 5) {
                        Thread.sleep(5);
                    }
                    out.write(chunk.bytes);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side went away: close both
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "stalling-proxy-write");
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private record Chunk(long arrivedNanos, byte[] bytes) {
        static final Chunk END = new Chunk(0, new byte[0]);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        stalled = false;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        sockets.forEach(StallingProxy::closeQuietly);
    }
}
