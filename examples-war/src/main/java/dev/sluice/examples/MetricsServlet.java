package dev.sluice.examples;

import dev.sluice.servlet.RateLimitFilter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * {@code GET /metrics}: Sluice's Micrometer meters as plain text, one line each, e.g.
 * {@code sluice.decisions{outcome=allowed,policy=hello} 5}. Sluice publishes to Micrometer
 * whenever it is on the class path ({@code metrics=true}, the default): here to the application's
 * own registry, which the {@link Registry} listener gives the filters as the {@code ServletContext}
 * attribute {@code dev.sluice.metrics.registry} (and {@link DemoApplication} to the JAX-RS feature
 * as the property of that name).
 */
public class MetricsServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain;charset=UTF-8");
        PrintWriter out = response.getWriter();
        MeterRegistry registry = (MeterRegistry) getServletContext().getAttribute(RateLimitFilter.METER_REGISTRY);
        List<Meter> meters = registry.getMeters().stream()
                .filter(m -> m.getId().getName().startsWith("sluice."))
                .sorted(Comparator.comparing((Meter m) -> m.getId().getName())
                        .thenComparing(m -> m.getId().getTags().toString()))
                .toList();
        for (Meter meter : meters) {
            String tags = meter.getId().getTags().stream().map(t -> t.getKey() + "=" + t.getValue())
                    .collect(Collectors.joining(",", "{", "}"));
            String value = meter instanceof Counter counter ? Long.toString((long) counter.count())
                    : meter instanceof Timer timer
                            ? timer.count() + " in " + (long) timer.totalTime(TimeUnit.MICROSECONDS) + " us"
                    : "";
            out.println(meter.getId().getName() + tags + " " + value);
        }
    }

    /**
     * Gives Sluice the application's registry, one that keeps counts, for the application's
     * lifetime (an application would give its Prometheus or other registry here instead). A
     * listener runs before the filters start, so they find it.
     */
    public static class Registry implements ServletContextListener {
        private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

        @Override
        public void contextInitialized(ServletContextEvent event) {
            event.getServletContext().setAttribute(RateLimitFilter.METER_REGISTRY, registry);
        }

        @Override
        public void contextDestroyed(ServletContextEvent event) {
            registry.close();
        }
    }
}
