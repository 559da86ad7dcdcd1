package dev.sluice.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * A client that hangs up as an attacker does: one HTTP/1.1 GET over a raw loopback socket, then
 * a reset ({@code SO_LINGER 0} and close: the peer gets a TCP RST, not a FIN), either right after
 * reading the status line ({@link #statusThenReset}) or whenever the test says ({@link #reset}).
 * Every read is bounded (20 s).
 */
public final class ResettingClient implements AutoCloseable {

    private static final int READ_TIMEOUT_MILLIS = 20_000;

    private final Socket socket;

    private ResettingClient(Socket socket) {
        this.socket = socket;
    }

    /** Sends {@code GET uri} with request headers given as {@code name, value, ...}, and reads nothing yet. */
    public static ResettingClient send(URI uri, String... headers) {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
            socket.setSoTimeout(READ_TIMEOUT_MILLIS);
            StringBuilder request = new StringBuilder("GET ").append(uri.getRawPath())
                    .append(uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery()).append(" HTTP/1.1\r\n")
                    .append("Host: ").append(uri.getHost()).append(':').append(uri.getPort()).append("\r\n");
            for (int i = 0; i < headers.length; i += 2) {
                request.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(request.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
            out.flush();
            return new ResettingClient(socket);
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new UncheckedIOException(e);
        }
    }

    /** Sends {@code GET uri}, reads the status line, resets the connection and returns the status code. */
    public static int statusThenReset(URI uri, String... headers) {
        try (ResettingClient client = send(uri, headers)) {
            return client.status();
        }
    }

    /** Reads the status line (and nothing more) and returns its code. */
    public int status() {
        try {
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            for (int b = in.read(); b != '\n'; b = in.read()) {
                if (b < 0 || line.size() > 1_000) {
                    throw new IOException("no status line, got '" + line.toString(StandardCharsets.US_ASCII) + "'");
                }
                line.write(b);
            }
            String status = line.toString(StandardCharsets.US_ASCII).trim();
            if (!status.matches("HTTP/1\\.[01] \\d{3}( .*)?")) {
                throw new IOException("not a status line: '" + status + "'");
            }
            return Integer.parseInt(status.substring(9, 12));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Resets the connection: the server's next write to it fails. Idempotent. */
    public void reset() {
        if (socket.isClosed()) {
            return;
        }
        try {
            socket.setSoLinger(true, 0);
            socket.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Resets the connection, as {@link #reset}. */
    @Override
    public void close() {
        reset();
    }
}
