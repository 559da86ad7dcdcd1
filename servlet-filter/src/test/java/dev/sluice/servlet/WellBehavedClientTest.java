package dev.sluice.servlet;

import dev.sluice.Algorithm;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A client that obeys only what the server tells it: it sends while {@code r > 0}, otherwise waits
 * {@code t} seconds (or {@code Retry-After} after a 429). Against every algorithm on both stores,
 * over real HTTP, it must never meet a 429 after its first wait, and must get at least 90% of the
 * configured rate over 20 periods. That holds only if {@code t} is never earlier than the next
 * unit (no 429) and not much later (the rate).
 *
 * <p>All ten clients run at once (each on its own policy and route), so the test takes 20 periods
 * of 1 s, not 200. The rate is counted from the first request to the end of the 20 periods, the
 * first burst included: at most 2 + 20 * 2 requests, of which 36 are required. Each cycle of a
 * client costs it a wait of whole seconds plus the round trips of its burst, which it cannot
 * avoid while obeying {@code t}: it loses about (rate x round trip) of the rate, so the rate is
 * kept low. At 2/1s and 50 ms a request (seen on a loaded two-core machine) it still makes 19
 * bursts in 20 s; at 5/1s the same machine gave 87% to 98%, which is no test.
 */
class WellBehavedClientTest {

    private static final int COUNT = 2;
    private static final int PERIODS = 20;
    private static final long PERIOD_NANOS = 1_000_000_000L;
    private static final Pattern FIELDS = Pattern.compile("\"[^\"]+\";r=(\\d+);t=(\\d+)");

    static Iterable<Container> containers() {
        return Container.selected();
    }

    /** What one client saw. */
    record Run(String route, int allowed, int refusedAfterFirstWait, List<String> log) {
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aClientObeyingTheHeadersIsNeverRefusedAndGetsNinetyPercentOfTheRate(Container container) throws Exception {
        String redis = TestRedis.shared().url();
        TestApp app = new TestApp();
        List<String> routes = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.rates()) {
            for (String store : List.of("memory", redis)) {
                String name = algorithm.configName() + (store.equals("memory") ? "-memory" : "-redis");
                app.filter(name, "/" + name + "/*", "limit", COUNT + "/1s", "algorithm", algorithm.configName(),
                        "store", store, "timeout", "2s", "headers", "draft-10", "key", "header:X-Client");
                routes.add(name);
            }
        }
        try (var running = container.start(app)) {
            for (String route : routes) {
                // connections, script loading and class initialisation before the clock starts
                get(running.uri("/" + route + "/warm-up"), "X-Client", "warm-up-" + UUID.randomUUID());
            }
            ExecutorService pool = Executors.newFixedThreadPool(routes.size());
            try {
                List<Future<Run>> runs = new ArrayList<>();
                for (String route : routes) {
                    runs.add(pool.submit(() -> client(running.uri("/" + route + "/x"), route)));
                }
                List<Run> done = new ArrayList<>();
                for (Future<Run> future : runs) {
                    done.add(future.get(PERIODS * 3L, TimeUnit.SECONDS));
                }
                String summary = done.stream().map(r -> r.route() + " " + r.allowed() + "/" + PERIODS * COUNT
                        + (r.refusedAfterFirstWait() > 0 ? " 429s " + r.refusedAfterFirstWait() : "")).toList()
                        .toString();
                System.out.println("Well-behaved clients, allowed in " + PERIODS + " periods: " + summary);
                for (Run run : done) {
                    assertThat(run.refusedAfterFirstWait())
                            .as("%s: 429s after the first wait; %s", run.route(), run.log())
                            .isZero();
                    // The sliding-window counter weighs a burst sent at offset o of one window by (1 - o) all
                    // through the next, so a client that bursts at the same offset of every 1 s window (as whole-
                    // second waits make it) gets count / (2 - o) per window whatever t says (half of it when
                    // o is small: 2, 0, 2, 0, ...); see the filter docs.
                    int required = run.route().startsWith("sliding-window") ? PERIODS * COUNT * 2 / 5
                            : PERIODS * COUNT * 9 / 10;
                    assertThat(run.allowed()).as("%s: allowed in %d periods of %d/1s; all: %s; %s", run.route(),
                            PERIODS, COUNT, summary, run.log()).isGreaterThanOrEqualTo(required);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static Run client(URI uri, String route) throws InterruptedException {
        String me = "client-" + UUID.randomUUID();
        List<String> log = new ArrayList<>();
        long start = System.nanoTime();
        long end = start + PERIODS * PERIOD_NANOS;
        int allowed = 0;
        int refusedAfterWait = 0;
        boolean waited = false;
        while (System.nanoTime() < end) {
            HttpResponse<String> response = get(uri, "X-Client", me);
            long received = System.nanoTime();
            long waitSeconds;
            if (response.statusCode() == 200) {
                if (received <= end) {
                    allowed++;
                }
                Matcher fields = FIELDS.matcher(header(response, "RateLimit"));
                assertThat(fields.matches()).as(header(response, "RateLimit")).isTrue();
                if (Long.parseLong(fields.group(1)) > 0) {
                    continue;
                }
                waitSeconds = Long.parseLong(fields.group(2));
            } else {
                assertThat(response.statusCode()).as(route).isEqualTo(429);
                if (waited) {
                    refusedAfterWait++;
                }
                waitSeconds = Long.parseLong(header(response, "Retry-After"));
            }
            log.add(String.format("%.3fs %d %s", (received - start) / 1e9, response.statusCode(),
                    header(response, "RateLimit")));
            waited = true;
            long until = received + waitSeconds * 1_000_000_000L;
            // sleep may wake early by a hair; the server's t is a promise about the time after it
            for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
                TimeUnit.NANOSECONDS.sleep(left);
            }
        }
        return new Run(route, allowed, refusedAfterWait, log);
    }
}
