package dev.sluice.jaxrs;

import dev.sluice.testing.TestRedis;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimit} inherited from interfaces and superclasses, following Jakarta REST's
 * annotation inheritance, in Jersey on Jetty over real HTTP, deciding on a real Redis.
 */
class AnnotationInheritanceTest {

    private static JerseyApp app;

    @BeforeAll
    static void start() throws Exception {
        app = JerseyApp.start(new ResourceConfig(Inherited.WidgetsImpl.class, Inherited.GadgetsImpl.class,
                Inherited.QuotasImpl.class, Inherited.PricedImpl.class)
                .register(RateLimitFeature.class)
                .property("sluice.store", TestRedis.shared().url())
                .property("sluice.timeout", "2s"));
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
    }

    private static String client() {
        return UUID.randomUUID().toString();
    }

    private static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    /** {@code limit} requests pass, showing that limit, and the next is a 429; returns its body. */
    private static String assertLimitedTo(String path, int limit) {
        String me = client();
        for (int i = 1; i <= limit; i++) {
            HttpResponse<String> ok = app.get(path, "X-Client", me);
            assertThat(ok.statusCode()).as("%s, request %d", path, i).isEqualTo(200);
            assertThat(header(ok, "RateLimit-Limit")).as("%s, request %d", path, i).isEqualTo(Integer.toString(limit));
            assertThat(header(ok, "RateLimit-Remaining")).as("%s, request %d", path, i)
                    .isEqualTo(Integer.toString(limit - i));
        }
        HttpResponse<String> rejected = app.get(path, "X-Client", me);
        assertThat(rejected.statusCode()).as("%s, request %d", path, limit + 1).isEqualTo(429);
        return rejected.body();
    }

    @Test
    void aLimitOnAnInterfaceMethodCarryingTheJaxRsAnnotationsApplies() {
        // The interface method's 2/1m replaces the implementing class's 4/1m, as a method's replaces its class's.
        assertThat(assertLimitedTo("/api/widgets", 2)).contains("\"policy\":\"WidgetsImpl.list~400ebc8f\"");
    }

    @Test
    void theImplementingClassLimitAppliesToInterfaceMethodsWithoutOneAndBeatsTheInterfaceClassLimit() {
        assertThat(assertLimitedTo("/api/widgets/7", 4)).contains("\"policy\":\"WidgetsImpl.get~1fb674a3\"");
    }

    @Test
    void theImplementingMethodsOwnLimitReplacesTheInterfaceMethods() {
        assertLimitedTo("/api/widgets/special/7", 1);
    }

    @Test
    void aClassLevelLimitOnTheInterfaceAppliesToEachMethodWithoutOne() {
        assertThat(assertLimitedTo("/api/gadgets", 3)).contains("\"policy\":\"GadgetsImpl.list~dff42b24\"");
        assertLimitedTo("/api/gadgets/hot", 1);
    }

    @Test
    void theSuperclassMethodTakesPrecedenceOverTheInterfaceMethod() {
        assertThat(assertLimitedTo("/priced", 3)).contains("\"policy\":\"PricedImpl.price~85298346\"");
    }

    @Test
    void anInterfaceLimitIsIgnoredWhenTheImplementingMethodHasJaxRsAnnotationsOfItsOwn() {
        String me = client();
        for (int i = 0; i < 4; i++) { // more than the interface's 2/1m
            HttpResponse<String> ok = app.get("/quotas", "X-Client", me);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("quotas");
            assertThat(header(ok, "RateLimit-Limit")).isNull();
        }
    }

    @Test
    void anIgnoredInterfaceLimitIsLoggedAtStartUpNamingBothMethods() throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(new Tee(original, captured), true, StandardCharsets.UTF_8));
        try (JerseyApp quotas =
                JerseyApp.start(new ResourceConfig(Inherited.QuotasImpl.class).register(RateLimitFeature.class))) {
            assertThat(quotas.get("/quotas").statusCode()).isEqualTo(200);
        } finally {
            System.setErr(original);
        }
        assertThat(captured.toString(StandardCharsets.UTF_8))
                .contains("WARN")
                .contains("dev.sluice.jaxrs.Inherited$QuotasApi.list")
                .contains("dev.sluice.jaxrs.Inherited$QuotasImpl.list")
                .contains("is ignored");
    }

    /** Writes to two streams. */
    private static final class Tee extends OutputStream {
        private final OutputStream one;
        private final OutputStream two;

        Tee(OutputStream one, OutputStream two) {
            this.one = one;
            this.two = two;
        }

        @Override
        public void write(int b) throws java.io.IOException {
            one.write(b);
            two.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws java.io.IOException {
            one.write(b, off, len);
            two.write(b, off, len);
        }
    }
}
