package dev.sluice.examples;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@link MemoryOnlyServer} in a child JVM whose class path is the container's alone (the build's
 * {@code sluice.container.classpath}: Jetty, the Servlet API, SLF4J) plus the launcher, never the
 * test JVM's, which holds Redisson. Every wait is bounded; {@link #close()} ends the JVM (its
 * standard input first, then by force).
 */
final class MemoryOnlyContainer implements Deployed {

    private static final long START_SECONDS = 60;

    private final Process process;
    private final List<String> output = new ArrayList<>();
    private URI base;
    private String failure;

    private MemoryOnlyContainer(Process process) {
        this.process = process;
    }

    /** Starts the container and waits until it reports the application started or failed. */
    static MemoryOnlyContainer start(MemoryOnlyWar war, String store) throws IOException, InterruptedException {
        String classpath = System.getProperty("sluice.container.classpath", "");
        if (classpath.isBlank() || classpath.contains("${")) {
            throw new IllegalStateException(
                    "system property sluice.container.classpath is not set; run through Maven (verify)");
        }
        ProcessBuilder builder = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", classpath + File.pathSeparator + war.launcher, MemoryOnlyServer.class.getName(),
                war.webapp.toString(), store).redirectErrorStream(true);
        MemoryOnlyContainer container = new MemoryOnlyContainer(builder.start());
        try {
            container.awaitReport();
        } catch (InterruptedException | RuntimeException e) {
            container.close();
            throw e;
        }
        return container;
    }

    private void awaitReport() throws InterruptedException {
        Thread reader = new Thread(this::read, "memory-only-output");
        reader.setDaemon(true);
        reader.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_SECONDS);
        synchronized (output) {
            while (base == null && failure == null && reader.isAlive() && System.nanoTime() < deadline) {
                output.wait(100);
            }
            if (base == null && failure == null) {
                throw new IllegalStateException("the container exited or reported nothing within " + START_SECONDS
                        + " s:\n" + output());
            }
        }
    }

    private void read() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                synchronized (output) {
                    output.add(line);
                    if (line.startsWith(MemoryOnlyServer.STARTED)) {
                        base = URI.create("http://127.0.0.1:"
                                + line.substring(MemoryOnlyServer.STARTED.length()).trim() + "/");
                    } else if (line.startsWith(MemoryOnlyServer.FAILED)) {
                        failure = line.substring(MemoryOnlyServer.FAILED.length());
                    }
                    output.notifyAll();
                }
            }
        } catch (IOException e) {
            // the process is gone; the waits are bounded
        }
    }

    /** Why the application did not start, or {@code null} if it started. */
    String failure() {
        synchronized (output) {
            return failure;
        }
    }

    /** Everything the container printed so far, for failure messages. */
    String output() {
        synchronized (output) {
            return String.join("\n", output);
        }
    }

    /** The container's exit code, waiting up to 10 s for it to exit. */
    int awaitExit() throws InterruptedException {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the container did not exit:\n" + output());
        }
        return process.exitValue();
    }

    @Override
    public URI base() {
        if (base == null) {
            throw new IllegalStateException("the application did not start: " + failure);
        }
        return base;
    }

    @Override
    public void close() {
        try {
            process.getOutputStream().close(); // the launcher exits, stopping Jetty
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
