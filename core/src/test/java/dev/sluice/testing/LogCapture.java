package dev.sluice.testing;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Everything the tests' loggers write while open: {@code System.err} and {@code System.out}
 * (where slf4j-simple, the tests' SLF4J provider, writes; still shown) and the records of
 * {@code java.util.logging} (Jersey, Tomcat), formatted with their parameters and stack traces.
 * Not thread-safe to open twice at once; close it in {@code finally}.
 */
public final class LogCapture implements AutoCloseable {

    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private final PrintStream originalErr = System.err;
    private final PrintStream originalOut = System.out;
    private final Handler handler;

    private LogCapture() {
        System.setErr(new PrintStream(new Tee(originalErr, captured), true, StandardCharsets.UTF_8));
        System.setOut(new PrintStream(new Tee(originalOut, captured), true, StandardCharsets.UTF_8));
        SimpleFormatter format = new SimpleFormatter();
        handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                synchronized (captured) {
                    captured.writeBytes(format.format(record).getBytes(StandardCharsets.UTF_8));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        handler.setLevel(Level.ALL);
        Logger.getLogger("").addHandler(handler);
    }

    /** Starts capturing. */
    public static LogCapture start() {
        return new LogCapture();
    }

    /** What was written so far. */
    public String text() {
        synchronized (captured) {
            return captured.toString(StandardCharsets.UTF_8);
        }
    }

    /** A throwable as a log would print it: its message, its causes' and suppressed ones', the stack traces. */
    public static String printed(Throwable thrown) {
        java.io.StringWriter text = new java.io.StringWriter();
        thrown.printStackTrace(new java.io.PrintWriter(text, true));
        return text.toString();
    }

    @Override
    public void close() {
        Logger.getLogger("").removeHandler(handler);
        System.setErr(originalErr);
        System.setOut(originalOut);
    }

    /** Writes to two streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream shown;
        private final ByteArrayOutputStream kept;

        Tee(OutputStream shown, ByteArrayOutputStream kept) {
            this.shown = shown;
            this.kept = kept;
        }

        @Override
        public void write(int b) {
            synchronized (kept) {
                kept.write(b);
            }
            try {
                shown.write(b);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            synchronized (kept) {
                kept.write(b, off, len);
            }
            try {
                shown.write(b, off, len);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public void flush() throws java.io.IOException {
            shown.flush();
        }
    }
}
