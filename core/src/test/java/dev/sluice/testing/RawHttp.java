package dev.sluice.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * One HTTP/1.1 exchange written byte for byte, for what {@code java.net.http} will not send: a
 * {@code Host} of one's choosing, a request target such as {@code //evil.example/..;/sluice},
 * a connection from another loopback address. {@code Connection: close} is added; the response
 * is read to the end (at most 10 s of silence).
 */
public final class RawHttp {

    private RawHttp() {
    }

    /** A response: its status, its head (status line and headers) and its body, as Latin-1 text. */
    public record Response(int status, String head, String body) {

        /** The first value of a header (case-insensitive name), or {@code null}. */
        public String header(String name) {
            String wanted = name.toLowerCase(Locale.ROOT) + ":";
            for (String line : head.split("\r\n")) {
                if (line.toLowerCase(Locale.ROOT).startsWith(wanted)) {
                    return line.substring(wanted.length()).trim();
                }
            }
            return null;
        }
    }

    /**
     * Sends {@code method target} to 127.0.0.1:{@code port} with {@code host} and the header
     * lines {@code headers} ({@code "Name: value"}), and {@code body} if not {@code null}.
     */
    public static Response send(int port, String method, String target, String host, String body, String... headers)
            throws IOException {
        return send(null, port, method, target, host, body, headers);
    }

    /** As {@link #send(int, String, String, String, String, String...)}, from local address {@code from}. */
    public static Response send(InetAddress from, int port, String method, String target, String host, String body,
                                String... headers) throws IOException {
        StringBuilder request = new StringBuilder().append(method).append(' ').append(target).append(" HTTP/1.1\r\n")
                .append("Host: ").append(host).append("\r\nConnection: close\r\n");
        for (String header : headers) {
            request.append(header).append("\r\n");
        }
        byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        if (body != null) {
            request.append("Content-Type: application/x-www-form-urlencoded\r\n");
        }
        request.append("Content-Length: ").append(content.length).append("\r\n\r\n");
        try (Socket socket = new Socket()) {
            if (from != null) {
                socket.bind(new InetSocketAddress(from, 0));
            }
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.write(content);
            out.flush();
            return parse(socket.getInputStream());
        }
    }

    private static Response parse(InputStream in) throws IOException {
        String all = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        int end = all.indexOf("\r\n\r\n");
        String head = end < 0 ? all : all.substring(0, end);
        String body = end < 0 ? "" : all.substring(end + 4);
        String[] status = head.split(" ", 3);
        if (status.length < 2 || !status[0].startsWith("HTTP/")) {
            throw new IOException("not an HTTP response: " + head);
        }
        return new Response(Integer.parseInt(status[1]), head, body);
    }
}
