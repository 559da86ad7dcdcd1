package dev.sluice.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
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

    /** Delays every reply by this much. */
    public void delayReplies(long millis) {
        replyDelayMillis = millis;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
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
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[16_384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (replies) {
                        long delay = replyDelayMillis;
                        if (delay > 0) {
                            Thread.sleep(delay);
                        }
                        for (int waited = 0; stalled && !closed && waited < 120_000; waited += 5) {
                            Thread.sleep(5);
                        }
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side went away: close both
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "stalling-proxy-pump");
        thread.setDaemon(true);
        thread.start();
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
