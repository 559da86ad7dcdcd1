package dev.sluice.benchmarks;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** The little of RESP2 the measurement programs need to talk to Redis without a client library. */
final class Resp {

    private Resp() {
    }

    static byte[] encode(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringBuilder head = new StringBuilder().append('*').append(args.length).append("\r\n");
        out.writeBytes(head.toString().getBytes(StandardCharsets.UTF_8));
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            out.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
            out.writeBytes(bytes);
            out.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    /** Reads one reply; arrays are joined by newlines, nil is the empty string. */
    static String readReply(BufferedReader in) throws IOException {
        String line = in.readLine();
        if (line == null) {
            throw new IOException("connection closed");
        }
        char type = line.charAt(0);
        String rest = line.substring(1);
        switch (type) {
            case '+':
            case ':':
                return rest;
            case '-':
                throw new IOException("Redis error: " + rest);
            case '$': {
                int length = Integer.parseInt(rest);
                if (length < 0) {
                    return "";
                }
                char[] body = new char[length];
                int read = 0;
                while (read < length) {
                    int n = in.read(body, read, length - read);
                    if (n < 0) {
                        throw new IOException("connection closed");
                    }
                    read += n;
                }
                in.readLine();
                return new String(body);
            }
            case '*': {
                int count = Integer.parseInt(rest);
                StringBuilder joined = new StringBuilder();
                for (int i = 0; i < count; i++) {
                    joined.append(readReply(in)).append('\n');
                }
                return joined.toString();
            }
            default:
                throw new IOException("unexpected reply: " + line);
        }
    }
}
