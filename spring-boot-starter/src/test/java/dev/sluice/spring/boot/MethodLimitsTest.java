package dev.sluice.spring.boot;

import dev.sluice.jaxrs.RateLimit;
import dev.sluice.jaxrs.RateLimitExceededException;
import dev.sluice.web.PolicyRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code @RateLimit} on a service bean's method, in a started application: one budget per method,
 * a refused call throwing {@link RateLimitExceededException}; unannotated methods and beans left
 * alone; a controller's handler still decided once per request, by the MVC interceptor only.
 */
class MethodLimitsTest {

    /** A service with a limited method and an unlimited one. */
    @Service
    public static class Quotes {
        final AtomicInteger quoted = new AtomicInteger();
        final AtomicInteger listed = new AtomicInteger();

        @RateLimit(limit = "2/1m", policy = "quotes-quote")
        public String quote() {
            quoted.incrementAndGet();
            return "quote";
        }

        public String list() {
            listed.incrementAndGet();
            return "list";
        }

        /** The calls that ran, read through the proxy (its own fields are not the bean's). */
        public int[] counts() {
            return new int[] {quoted.get(), listed.get()};
        }
    }

    /** A bean without any {@code @RateLimit}. */
    @Service
    public static class Plain {
        public String hello() {
            return "hello";
        }
    }

    /** A controller with a limited handler, and one that calls the limited service. */
    @RestController
    public static class Twice {
        private final Quotes quotes;

        Twice(Quotes quotes) {
            this.quotes = quotes;
        }

        @RateLimit(limit = "2/1m", policy = "twice-handler")
        @GetMapping("/twice")
        public String twice() {
            return "twice\n";
        }

        @GetMapping("/quote")
        public String quote() {
            return quotes.quote() + "\n";
        }

        /** How an application maps the exception, as it does for JAX-RS resources. */
        @ExceptionHandler(RateLimitExceededException.class)
        ResponseEntity<String> refused(RateLimitExceededException e) {
            return ResponseEntity.status(e.getResponse().getStatus())
                    .header("Retry-After", e.getResponse().getHeaderString("Retry-After")).body(e.policy() + "\n");
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Import({Quotes.class, Plain.class, Twice.class})
    static class Beans {
    }

    /** A service whose limit asks for a request's key. */
    @Service
    public static class KeyedByIp {
        @RateLimit(limit = "2/1m", key = "header:X-Tenant")
        public String call() {
            return "call";
        }
    }

    private static final Class<?>[] APP = {BootApps.App.class, Beans.class};

    @Test
    void aServiceMethodRefusesTheCallAfterItsLimitAndLeavesOtherMethodsAlone() throws Exception {
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(), APP)) {
            Quotes quotes = app.getBean(Quotes.class);
            assertThat(AopUtils.isAopProxy(quotes)).isTrue();
            assertThat(app.getBean(PolicyRegistry.class).policy("quotes-quote")).as("listed at start-up").isPresent();
            assertThat(quotes.quote()).isEqualTo("quote");
            assertThat(quotes.quote()).isEqualTo("quote");
            assertThatThrownBy(quotes::quote).isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
                assertThat(e.policy()).isEqualTo("quotes-quote");
                assertThat(e.decision().retryAfter()).isGreaterThan(Duration.ZERO);
                assertThat(e.getResponse().getStatus()).isEqualTo(429);
                assertThat(e.getResponse().getHeaderString("Retry-After")).isNotBlank();
            });
            assertThat(quotes.counts()[0]).as("the refused call never ran").isEqualTo(2);
            // Through HTTP, mapped by the application: the same budget, still refused.
            HttpResponse<String> mapped = get(BootApps.port(app), "/quote");
            assertThat(mapped.statusCode()).isEqualTo(429);
            assertThat(mapped.headers().firstValue("Retry-After")).isPresent();
            assertThat(quotes.counts()[0]).isEqualTo(2);
            // The unannotated method of the same bean, and a bean without @RateLimit: untouched.
            for (int i = 0; i < 10; i++) {
                assertThat(quotes.list()).isEqualTo("list");
            }
            assertThat(quotes.counts()[1]).isEqualTo(10);
            assertThat(AopUtils.isAopProxy(app.getBean(Plain.class))).isFalse();
        }
    }

    @Test
    void aControllersHandlerIsStillDecidedOncePerRequest() throws Exception {
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(), APP)) {
            assertThat(AopUtils.isAopProxy(app.getBean(Twice.class))).as("no advice on a controller").isFalse();
            int port = BootApps.port(app);
            HttpResponse<String> first = get(port, "/twice");
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.headers().firstValue("RateLimit-Remaining")).hasValue("1");
            HttpResponse<String> second = get(port, "/twice");
            assertThat(second.statusCode()).isEqualTo(200);
            assertThat(second.headers().firstValue("RateLimit-Remaining")).hasValue("0");
            HttpResponse<String> third = get(port, "/twice");
            assertThat(third.statusCode()).isEqualTo(429);
            assertThat(third.headers().firstValue("Content-Type")).hasValueSatisfying(
                    type -> assertThat(type).startsWith("application/problem+json"));
        }
    }

    @Test
    void aServiceMethodKeyedByARequestSourceStopsStartUpNamingIt() {
        Throwable thrown = BootApps.failure(Map.of(), new Class<?>[] {BootApps.App.class, KeyedByIp.class});
        assertThat(BootApps.messages(thrown)).contains("@RateLimit on method '" + KeyedByIp.class.getName() + ".call'")
                .contains("got 'header:X-Tenant'");
    }

    private static HttpResponse<String> get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
