package dev.sluice.benchmarks;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.memory.MemoryStore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Draws {@code docs/algorithms.svg}: the five algorithms, each limiting "10 per minute", run on
 * the same request trace by the real in-memory store with an injected clock. The client is quiet
 * for 55 seconds, then asks twice a second for two minutes: the plot shows the requests admitted
 * in every trailing 60 seconds, where the fixed window's boundary burst (20 in ten seconds, across
 * the edge at 60 s) stands out. The numbers printed are the largest counts in any 60 s and any
 * 10 s span.
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.AlgorithmPlot docs/algorithms.svg}
 */
public final class AlgorithmPlot {

    private static final long SECOND = 1_000_000L;
    private static final long START = 2_000_160_000L * SECOND; // aligned to minutes
    private static final double END_SECONDS = 180;

    private AlgorithmPlot() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args.length > 0 ? args[0] : "docs/algorithms.svg");
        List<Double> trace = new ArrayList<>();
        for (double t = 55; t < END_SECONDS; t += 0.5) {
            trace.add(t);
        }
        Map<Algorithm, List<Double>> admitted = new LinkedHashMap<>();
        for (Algorithm algorithm : Algorithm.rates()) {
            admitted.put(algorithm, run(algorithm, trace));
        }
        for (var entry : admitted.entrySet()) {
            System.out.printf(Locale.ROOT, "%-15s admitted %3d of %d; most in any 60 s: %2d, in any 10 s: %2d%n",
                    entry.getKey().configName(), entry.getValue().size(), trace.size(),
                    maxInWindow(entry.getValue(), 60), maxInWindow(entry.getValue(), 10));
        }
        Files.writeString(out, svg(admitted));
        System.out.println("wrote " + out);
    }

    private static List<Double> run(Algorithm algorithm, List<Double> trace) {
        AtomicLong now = new AtomicLong(START);
        TimeSource clock = now::get;
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("plot", "10/1m").withAlgorithm(algorithm))
                .store(MemoryStore.builder().timeSource(clock).build()).build();
        List<Double> admitted = new ArrayList<>();
        for (double t : trace) {
            now.set(START + Math.round(t * SECOND));
            Decision decision = limiter.decide("client");
            if (decision.allowed()) {
                admitted.add(t);
            }
        }
        return admitted;
    }

    private static int maxInWindow(List<Double> times, double window) {
        int best = 0;
        for (int i = 0; i < times.size(); i++) {
            int count = 0;
            for (int j = i; j < times.size() && times.get(j) < times.get(i) + window; j++) {
                count++;
            }
            best = Math.max(best, count);
        }
        return best;
    }

    /** Requests admitted in the trailing 60 s, sampled every half second. */
    private static int trailing(List<Double> times, double t) {
        int count = 0;
        for (double a : times) {
            if (a <= t && a > t - 60) {
                count++;
            }
        }
        return count;
    }

    private static String svg(Map<Algorithm, List<Double>> admitted) {
        int width = 820;
        int height = 380;
        int left = 60;
        int right = 210;
        int top = 40;
        int bottom = 50;
        double plotW = width - left - right;
        double plotH = height - top - bottom;
        double maxY = 22;
        String[] colors = {"#1f77b4", "#17becf", "#2ca02c", "#d62728", "#9467bd"};
        String[] dashes = {"", "6,4", "", "", "2,3"};
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n", width, height));
        svg.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"22\" font-size=\"14\">"
                + "Requests admitted in the trailing 60 s — limit 10/1m, client asks twice a second from 55 s"
                + "</text>%n", left));
        for (int y = 0; y <= 20; y += 5) {
            double py = top + plotH - y / maxY * plotH;
            svg.append(String.format(Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d</text>%n",
                    left, py, left + plotW, py, left - 6, py + 4, y));
        }
        for (int x = 0; x <= END_SECONDS; x += 30) {
            double px = left + x / END_SECONDS * plotW;
            svg.append(String.format(Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d s</text>%n",
                    px, top, px, top + plotH, px, top + plotH + 18, x));
        }
        double limitY = top + plotH - 10 / maxY * plotH;
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                + "stroke-dasharray=\"3,3\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">the limit: 10</text>%n",
                left, limitY, left + plotW, limitY, left + 4.0, limitY - 4));
        int i = 0;
        for (var entry : admitted.entrySet()) {
            StringBuilder points = new StringBuilder();
            for (double t = 0; t <= END_SECONDS; t += 0.5) {
                double px = left + t / END_SECONDS * plotW;
                double py = top + plotH - trailing(entry.getValue(), t) / maxY * plotH;
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
            }
            svg.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                    + "stroke-dasharray=\"%s\" points=\"%s\"/>%n", colors[i], dashes[i], points.toString().trim()));
            double ly = top + 10 + i * 34;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                    + "stroke-width=\"2\" stroke-dasharray=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>"
                    + "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\" font-size=\"10\">"
                    + "max %d per 60 s, %d per 10 s</text>%n",
                    left + plotW + 10, ly, left + plotW + 30, ly, colors[i], dashes[i], left + plotW + 34, ly + 4,
                    entry.getKey().configName(), left + plotW + 34, ly + 15, maxInWindow(entry.getValue(), 60),
                    maxInWindow(entry.getValue(), 10)));
            i++;
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#666\">gcra draws the same line as "
                + "token-bucket (dashed over it)</text>%n", left, height - 8));
        svg.append("</svg>\n");
        return svg.toString();
    }
}
