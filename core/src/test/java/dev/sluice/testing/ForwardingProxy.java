package dev.sluice.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * A reverse proxy as a load balancer that ends TLS is one, reduced to what an application sees
 * of it: it listens on 127.0.0.1, forwards each request (one per connection) to a backend port
 * on 127.0.0.1 from its own local address, adds the header lines it is given ({@code {client}}
 * stands for the client's address) and copies the response back. No TLS of its own: the headers
 * say what a TLS-ending proxy says. Connections are served one at a time on a daemon thread.
 */
public final class ForwardingProxy implements AutoCloseable {

    private final ServerSocket server;
    private final Thread thread;

    private ForwardingProxy(ServerSocket server, Thread thread) {
        this.server = server;
        this.thread = thread;
    }

    /**
     * A proxy to 127.0.0.1:{@code backendPort} connecting from {@code from} and adding
     * {@code added} (such as {@code "X-Forwarded-Proto: https"}) to every request.
     */
    public static ForwardingProxy start(int backendPort, InetAddress from, List<String> added) throws IOException {
        ServerSocket server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread thread = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket client = server.accept()) {
                    client.setSoTimeout(10_000);
                    forward(client, backendPort, from, added);
                } catch (IOException e) {
                    // the client went away, or the proxy closed: the next connection, if any
                }
            }
        }, "forwarding-proxy");
        thread.setDaemon(true);
        thread.start();
        return new ForwardingProxy(server, thread);
    }

    /** The port it listens on, on 127.0.0.1. */
    public int port() {
        return server.getLocalPort();
    }

    private static void forward(Socket client, int backendPort, InetAddress from,
            List<String> added) throws IOException {
        InputStream in = client.getInputStream();
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        // The request head, to its empty line.
        while (!endsWithEmptyLine(head)) {
            int b = in.read();
            if (b < 0 || head.size() > 65_536) {
                return;
            }
            head.write(b);
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        StringBuilder out = new StringBuilder();
        int length = 0;
        String[] lines = text.substring(0, text.length() - 4).split("\r\n");
        out.append(lines[0]).append("\r\n");
        for (int i = 1; i < lines.length; i++) {
            String lower = lines[i].toLowerCase(Locale.ROOT);
            if (lower.startsWith("connection:")) {
                continue;
            }
            if (lower.startsWith("content-length:")) {
                length = Integer.parseInt(lines[i].substring(15).trim());
            }
            out.append(lines[i]).append("\r\n");
        }
        String clientAddress = client.getInetAddress().getHostAddress();
        for (String line : added) {
            out.append(line.replace("{client}", clientAddress)).append("\r\n");
        }
        out.append("Connection: close\r\n\r\n");
        byte[] body = in.readNBytes(length);
        try (Socket backend = new Socket()) {
            backend.bind(new InetSocketAddress(from, 0));
            backend.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), backendPort), 5_000);
            backend.setSoTimeout(10_000);
            backend.getOutputStream().write(out.toString().getBytes(StandardCharsets.ISO_8859_1));
            backend.getOutputStream().write(body);
            backend.getOutputStream().flush();
            backend.getInputStream().transferTo(client.getOutputStream());
        }
    }

    private static boolean endsWithEmptyLine(ByteArrayOutputStream head) {
        byte[] b = head.toByteArray();
        int n = b.length;
        return n >= 4 && b[n - 4] == '\r' && b[n - 3] == '\n' && b[n - 2] == '\r' && b[n - 1] == '\n';
    }

    @Override
    public void close() {
        try {
            server.close();
            thread.join(5_000);
        } catch (IOException e) {
            // closing: nothing to keep
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
