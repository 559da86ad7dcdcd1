package dev.sluice.javax;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.servlet.RateLimitFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code failure-mode=local} in the javax filter in Tomcat 9: a {@code web.xml} with
 * {@code failure-mode=local} and {@code local-share} deploys and limits, and a filter whose store
 * fails answers from its local budget (the store is a fault injection that always fails).
 */
class LocalModeTest {

    @TempDir
    Path tomcatBase;

    /** A store that always fails, as Redis does while it is down. */
    private static final class Down implements RateLimitStore {
        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return CompletableFuture.failedFuture(new IllegalStateException("connection refused"));
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aLocalFilterDeploysFromWebXmlAndDecidesLocallyWhenItsStoreFails() throws Exception {
        RateLimiter down = RateLimiter.builder().limit(Limit.of("down", "4/1h")).store(new Down())
                .failureMode(FailureMode.LOCAL).localShare(0.5).build();
        RateLimitFilter filter = new RateLimitFilter(down).withKey("header:X-API-Key,ip");
        try (Running running = Tomcat9.deploy(WebApp.named("local"), tomcatBase, (classes, context) ->
                context.addFilter("down", filter).addMappingForUrlPatterns(null, false, "/down/*"))) {
            List<Exchange> run = Exchange.run(running, List.of(
                    new Exchange.Step("/local/x", "k"),
                    new Exchange.Step("/down/x", "k"),
                    new Exchange.Step("/down/x", "k"),
                    new Exchange.Step("/down/x", "k")));
            assertThat(run).extracting(Exchange::status).containsExactly(200, 200, 200, 429);
            assertThat(run.get(0).headers()).as("web.xml's filter, its memory store answering")
                    .containsEntry("RateLimit-Limit", "4").containsEntry("RateLimit-Remaining", "3");
            assertThat(run.get(1).headers()).as("the local budget, 4 * 0.5")
                    .containsEntry("RateLimit-Limit", "2").containsEntry("RateLimit-Remaining", "1");
            assertThat(run.get(3).headers()).containsKey("Retry-After").containsEntry("RateLimit-Remaining", "0");
            assertThat(run.get(3).body()).contains("\"policy\":\"down\"");
        }
    }
}
