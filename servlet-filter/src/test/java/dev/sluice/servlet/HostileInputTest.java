package dev.sluice.servlet;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile caller identities sent as raw bytes over a socket (8 KB, braces, bytes above 0x7F, an
 * attempt to inject a header): each is a caller like any other, never an error, and nothing of it
 * comes back in the response.
 */
class HostileInputTest {

    static Iterable<Container> containers() {
        return Container.selected();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void hostileKeysAreOrdinaryCallersAndAreNeverReflected(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("api", "/api/*", "limit", "2/1m", "key", "header:X-API-Key,ip", "headers", "both");
        List<byte[]> hostile = List.of(
                ("k-" + "A".repeat(7_000)).getBytes(StandardCharsets.US_ASCII),
                "{slot}-evil}{".getBytes(StandardCharsets.US_ASCII),
                new byte[] {'k', (byte) 0xC3, (byte) 0xA9, (byte) 0xFF, (byte) 0x80, '!'},
                "evil: x\tSet-Cookie: y; Location: /\"><script>".getBytes(StandardCharsets.ISO_8859_1));
        try (var running = container.start(app)) {
            URI uri = running.uri("/api/x");
            for (byte[] key : hostile) {
                String first = raw(uri, key);
                assertThat(first).startsWith("HTTP/1.1 200");
                assertThat(first).doesNotContain(new String(key, StandardCharsets.ISO_8859_1)).doesNotContain("slot")
                        .doesNotContain("Set-Cookie");
                assertThat(raw(uri, key)).startsWith("HTTP/1.1 200");
                String third = raw(uri, key);
                assertThat(third).as("the same hostile key is one caller with one budget").startsWith("HTTP/1.1 429");
                assertThat(third).doesNotContain("evil").doesNotContain("AAAA");
            }
        }
    }

    /** One GET with the raw bytes as the {@code X-API-Key} value; the whole response as Latin-1. */
    private static String raw(URI uri, byte[] key) throws IOException {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), uri.getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.writeBytes(
                    ("GET " + uri.getRawPath() + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-API-Key: ")
                    .getBytes(StandardCharsets.US_ASCII));
            request.writeBytes(key);
            request.writeBytes("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(request.toByteArray());
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
