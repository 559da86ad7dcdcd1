package dev.sluice.benchmarks;

import dev.sluice.servlet.RateLimitFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.FilterMapping;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;

/**
 * Requests per second of one plain servlet in a real Jetty 12 (EE10), without the filter and
 * behind {@link RateLimitFilter} on the memory store (and, given a Redis URL, on Redis), driven
 * over loopback by {@link HttpClient} threads with keep-alive. The limit never runs out, so the
 * filter's whole cost is measured: resolving the caller, deciding, writing the headers. Rounds
 * alternate between the routes so that drift on a busy machine hits both alike; the ratio of
 * the medians is the result.
 *
 * <p>Two endpoints: {@code /plain}, {@code /memory}, {@code /redis} answer at once (the filter's
 * cost laid bare), and {@code /work/plain}, {@code /work/memory}, {@code /work/redis} first do
 * {@value #WORK_MICROS} µs of CPU work, as an endpoint that computes something does: the share of
 * throughput the filter costs there is the figure a user feels. Each is divided by the route of
 * its own endpoint without the filter.
 *
 * <p>Run:
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.HttpBenchmark
 *      [wrk] [threads] [seconds] [redis://...|embedded]
 * </pre>
 *
 * <p>With {@code wrk} first, the load comes from {@code wrk} (the Debian package; {@code threads}
 * becomes its connection count, over two wrk threads, each request naming one of as many API
 * keys) instead of this JVM's {@link HttpClient} threads, so that the client's cost is not the
 * server's JVM's.
 */
public final class HttpBenchmark {

    private HttpBenchmark() {
    }

    /** The endpoint: one short line of text. */
    public static final class Hello extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setContentType("text/plain;charset=UTF-8");
            response.getWriter().print("hello");
        }
    }

    /** The CPU work of the {@link Work} endpoint, per request. */
    static final long WORK_MICROS = 1_000;

    /** The endpoint a user feels: {@value #WORK_MICROS} µs of CPU work, then one short line of text. */
    public static final class Work extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private static volatile long sink;

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            long end = System.nanoTime() + WORK_MICROS * 1_000;
            long x = 0;
            while (System.nanoTime() < end) {
                x += x * 31 + 7;
            }
            sink = x;
            response.setContentType("text/plain;charset=UTF-8");
            response.getWriter().print("worked");
        }
    }

    /** One route's requests per second: the median of its rounds, and the rounds. */
    record Route(String path, double median, double[] rounds) {
    }

    /** The route of the same endpoint without the filter, which {@code route}'s ratio divides by. */
    static Route withoutFilter(List<Route> routes, Route route) {
        String plain = route.path().startsWith("/work/") ? "/work/plain" : "/plain";
        return routes.stream().filter(r -> r.path().equals(plain)).findFirst().orElse(routes.get(0));
    }

    /**
     * The target for a route with the filter ÷ the same endpoint without it, or
     * {@code null} for a route it sets none for: 0.95 on the memory store and 0.85 on Redis for the
     * trivial servlet, 0.97 on Redis for the endpoint doing {@value #WORK_MICROS} µs of work.
     */
    static Double target(Route route) {
        return switch (route.path()) {
            case "/memory" -> 0.95;
            case "/redis" -> 0.85;
            case "/work/redis" -> 0.97;
            default -> null;
        };
    }

    public static void main(String[] arguments) throws Exception {
        boolean wrk = arguments.length > 0 && arguments[0].equals("wrk");
        String[] args = wrk ? java.util.Arrays.copyOfRange(arguments, 1, arguments.length) : arguments;
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        String redis = args.length > 2 ? args[2] : null;
        BenchRedis embedded = "embedded".equals(redis) ? BenchRedis.get() : null;
        try {
            // the redis-server the benchmarks start, on loopback
            String url = embedded != null ? embedded.url() : redis;
            System.out.print(table(wrk, threads, seconds, measure(wrk, threads, seconds, url)));
        } finally {
            if (embedded != null) {
                embedded.stop();
            }
        }
    }

    /** Whether {@code wrk} can be run here. */
    static boolean wrkInstalled() {
        try {
            Process process = new ProcessBuilder("wrk", "--version").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            process.waitFor();
            return true;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Serves {@code /plain}, {@code /memory} and (given {@code redis}) {@code /redis} from one Jetty
     * and loads them in alternating rounds: the first route is the one without the filter.
     */
    static List<Route> measure(boolean wrk, int threads, int seconds, String redis) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addServlet(new ServletHolder(new Hello()), "/*");
        context.addServlet(new ServletHolder(new Work()), "/work/*");
        List<String> routes = new ArrayList<>(List.of("/plain", "/memory"));
        addFilter(context, "memory", "memory", "/memory", "/work/memory");
        if (redis != null) {
            addFilter(context, "redis", redis, "/redis", "/work/redis");
            routes.add("/redis");
        }
        routes.add("/work/plain");
        routes.add("/work/memory");
        if (redis != null) {
            routes.add("/work/redis");
        }
        server.setHandler(context);
        server.start();
        try {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String base = "http://127.0.0.1:" + connector.getLocalPort();
            Path script = wrk ? wrkScript(threads) : null;
            for (String route : routes) {
                run(client, script, base + route, threads, 1); // warm-up
            }
            int rounds = 5;
            double[][] results = new double[routes.size()][rounds];
            for (int round = 0; round < rounds; round++) {
                for (int r = 0; r < routes.size(); r++) {
                    results[r][round] = run(client, script, base + routes.get(r), threads, seconds);
                }
            }
            List<Route> measured = new ArrayList<>();
            for (int r = 0; r < routes.size(); r++) {
                measured.add(new Route(routes.get(r), median(results[r]), results[r]));
            }
            return measured;
        } finally {
            server.stop();
        }
    }

    /**
     * The routes as a Markdown table, each with its ratio to its endpoint without the filter
     * ({@link #withoutFilter}).
     */
    static String table(boolean wrk, int threads, int seconds, List<Route> routes) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "HTTP, %d %s, 5 rounds of %d s per route, Jetty %s EE10, loopback%n%n",
                threads, wrk ? "wrk connections (2 wrk threads)" : "client threads", seconds, Server.getVersion()));
        md.append("`/work/...` first does ").append(WORK_MICROS)
                .append(" µs of CPU work per request; each route is divided by its"
                        + " endpoint without the filter (`/plain` or `/work/plain`).\n\n");
        md.append("| route | median req/s | ratio to no filter | rounds |\n|---|---:|---:|---|\n");
        for (Route route : routes) {
            md.append(String.format(Locale.ROOT, "| %s | %.0f | %.2f | %s |%n", route.path(), route.median(),
                    route.median() / withoutFilter(routes, route).median(), format(route.rounds())));
        }
        return md.toString();
    }

    /** One filter (one store) in front of {@code paths}: both endpoints share its limiter. */
    private static void addFilter(ServletContextHandler context, String name, String store, String... paths) {
        FilterHolder holder = new FilterHolder(RateLimitFilter.class);
        holder.setName(name);
        holder.setInitParameter("limit", "1000000000/s");
        holder.setInitParameter("key", "header:X-API-Key,ip");
        holder.setInitParameter("store", store);
        holder.setInitParameter("timeout", "5s");
        FilterMapping mapping = new FilterMapping();
        mapping.setFilterName(name);
        mapping.setPathSpecs(paths);
        mapping.setDispatcherTypes(EnumSet.of(DispatcherType.REQUEST));
        context.getServletHandler().addFilter(holder, mapping);
    }

    /** A wrk script giving each request one of {@code keys} API keys, in turn. */
    private static Path wrkScript(int keys) throws IOException {
        Path script = Files.createTempFile("sluice-wrk", ".lua");
        script.toFile().deleteOnExit();
        Files.writeString(script, "local n = 0\n"
                + "request = function()\n"
                + "  n = n + 1\n"
                + "  return wrk.format('GET', nil, { ['X-API-Key'] = 'client-' .. (n % " + keys + ") })\n"
                + "end\n");
        return script;
    }

    /** Requests per second from wrk's {@code connections} for {@code seconds}; fails on any non-2xx answer. */
    private static double wrk(Path script, String url, int connections, int seconds)
            throws IOException, InterruptedException {
        Process process = new ProcessBuilder("wrk", "-t2", "-c" + connections, "-d" + seconds + "s",
                "-s", script.toString(), url)
                .redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (process.waitFor() != 0 || out.contains("Non-2xx") || !out.contains("Requests/sec:")) {
            throw new IllegalStateException("wrk failed on " + url + ":\n" + out);
        }
        java.util.regex.Matcher rate = java.util.regex.Pattern.compile("Requests/sec:\\s+([0-9.]+)").matcher(out);
        rate.find();
        return Double.parseDouble(rate.group(1));
    }

    /**
     * Requests per second from {@code threads} threads (or wrk connections), each its own caller, for
     * {@code seconds}.
     */
    private static double run(HttpClient client, Path wrkScript, String url, int threads, int seconds)
            throws Exception {
        if (wrkScript != null) {
            return wrk(wrkScript, url, threads, seconds);
        }
        LongAdder done = new LongAdder();
        long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                HttpRequest request = HttpRequest.newBuilder(URI.create(url)).header("X-API-Key", "client-" + t)
                        .GET().build();
                futures.add(pool.submit(() -> {
                    while (System.nanoTime() < end) {
                        HttpResponse<Void> response = client.send(request, HttpResponse.BodyHandlers.discarding());
                        if (response.statusCode() != 200) {
                            throw new IllegalStateException(url + " answered " + response.statusCode());
                        }
                        done.increment();
                    }
                    return null;
                }));
            }
            for (Future<?> future : futures) {
                future.get();
            }
        } finally {
            pool.shutdownNow();
        }
        return done.sum() / (double) seconds;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static String format(double[] values) {
        StringBuilder out = new StringBuilder();
        for (double value : values) {
            out.append(out.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.0f", value));
        }
        return out.toString();
    }
}
