package dev.sluice.web.internal;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.LogCapture;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every instance tells of an override it applies instead of its configured limit: a warning
 * in its log (when it starts with one in the store, and when one changes), and in the console
 * whether the configured limit changed since the override was set and whether the override is
 * applied at all. Two registries on one memory store stand for two instances on one Redis.
 */
class OverrideInForceTest {

    /** A store address with a password, as an application could configure it: never logged. */
    private static final String STORE_VALUE = "redis://:s3cret-pw@127.0.0.1:1";

    private final List<Runnable> cleanUp = new ArrayList<>();

    @AfterEach
    void stop() {
        cleanUp.forEach(Runnable::run);
    }

    private ApplicationPolicies instance(RateLimitStore store, Guard... guards) {
        ApplicationPolicies registry = new ApplicationPolicies();
        for (Guard guard : guards) {
            registry.register(guard, store, STORE_VALUE);
            cleanUp.add(() -> registry.unregister(guard));
        }
        registry.refresh(); // as its refresh thread does within 2 s; at once here
        return registry;
    }

    private static Guard guard(RateLimitStore store, String policy, Algorithm algorithm, String limit) {
        // A registry per guard, as each instance has its own: a second registration would be the override's.
        return Guard.of(List.of(RouteSpec.of(policy, algorithm, limit, 0, 1, "ip", FailureMode.OPEN)),
                WebSettings.DEFAULTS, store, "filter '" + policy + "'", new SimpleMeterRegistry());
    }

    private static String json(ApplicationPolicies registry) {
        return new String(Console.handle(registry, "GET", "/policies", null, null, null).body(),
                StandardCharsets.UTF_8);
    }

    private static int count(String text, String part) {
        Matcher matcher = Pattern.compile(Pattern.quote(part)).matcher(text);
        int n = 0;
        while (matcher.find()) {
            n++;
        }
        return n;
    }

    @Test
    void anOverrideOtherThanTheConfiguredLimitIsWarnedOnEveryInstanceOnceAtStartAndOnEachChange() {
        MemoryStore store = MemoryStore.create();
        try (LogCapture log = LogCapture.start()) {
            ApplicationPolicies first = instance(store, guard(store, "api", Algorithm.TOKEN_BUCKET, "5/1h"));
            first.override("api", "4000/1h", null, "alice");
            String warning = "WARN dev.sluice.web.internal.ApplicationPolicies - Sluice policy 'api': the override "
                    + "4000/1h burst 4000 decides instead of the configured limit 5/1h burst 5 (set by alice at ";
            assertThat(count(log.text(), warning)).as("the instance that set it:\n%s", log.text()).isEqualTo(1);

            // A new deployment starts, configured as before, and finds the override in the store.
            ApplicationPolicies second = instance(store, guard(store, "api", Algorithm.TOKEN_BUCKET, "5/1h"));
            second.refresh();
            first.refresh();
            assertThat(count(log.text(), warning)).as("both instances, once each:\n%s", log.text()).isEqualTo(2);

            // Changed on one: each instance warns of the new one once.
            first.override("api", "3000/1h", "3000", "bob");
            second.refresh();
            second.refresh();
            assertThat(count(log.text(), "Sluice policy 'api': the override 3000/1h burst 3000 decides instead of the "
                    + "configured limit 5/1h burst 5 (set by bob at ")).as(log.text()).isEqualTo(2);

            // The same as configured: nothing to warn of. Cleared: the configured limit decides again.
            first.override("api", "5/1h", null, "carol");
            second.refresh();
            assertThat(log.text()).doesNotContain("(set by carol");
            String again = "INFO dev.sluice.web.internal.ApplicationPolicies - Sluice policy 'api': the configured "
                    + "limit 5/1h burst 5 decides again";
            assertThat(count(log.text(), again)).as(log.text()).isEqualTo(2);
            first.clearOverride("api", "carol");
            second.refresh();
            assertThat(count(log.text(), again)).as("no news: %s", log.text()).isEqualTo(2);
            assertThat(log.text()).doesNotContain("s3cret-pw").doesNotContain("already registered");
        }
    }

    @Test
    void theConsoleShowsAConfiguredLimitChangedSinceTheOverrideWasSet() {
        MemoryStore store = MemoryStore.create();
        ApplicationPolicies old = instance(store, guard(store, "api", Algorithm.TOKEN_BUCKET, "5/1h"));
        old.override("api", "4000/1h", null, "alice");
        assertThat(json(old)).contains("\"override\":{\"limit\":\"4000/1h\",\"burst\":null,\"by\":\"alice\",\"at\":\"")
                .contains("\"configuredWhenSet\":{\"limit\":\"5/1h\",\"burst\":5},\"configuredChanged\":false,"
                        + "\"applied\":true,\"notApplied\":null}");

        // The next deployment configures 10/1h: the forgotten override still decides, and says so.
        ApplicationPolicies next = instance(store, guard(store, "api", Algorithm.TOKEN_BUCKET, "10/1h"));
        String shown = json(next);
        assertThat(shown).contains("\"configured\":{\"limit\":\"10/1h\"", "\"effective\":{\"limit\":\"4000/1h\"")
                .contains("\"configuredWhenSet\":{\"limit\":\"5/1h\",\"burst\":5},\"configuredChanged\":true,"
                        + "\"applied\":true,\"notApplied\":null}");
        assertThat(next.policy("api").orElseThrow().override().configuredChanged()).isTrue();

        // Written by an older version, without the configured limit: not known, so not said to have changed.
        store.putOverride("api", "20/1h||2026-01-01T00:00:00Z|dave").toCompletableFuture().join();
        next.refresh();
        assertThat(json(next)).contains("\"by\":\"dave\",\"at\":\"2026-01-01T00:00:00Z\",\"configuredWhenSet\":null,"
                + "\"configuredChanged\":false,\"applied\":true,\"notApplied\":null}");
    }

    @Test
    void anOverrideTheApplicationCannotApplyIsShownAsNotApplied() {
        MemoryStore store = MemoryStore.create();
        try (LogCapture log = LogCapture.start()) {
            // One written by hand, and one of a policy that caps requests in flight.
            store.putOverride("api", "lots|||mallory").toCompletableFuture().join();
            store.putOverride("cap", "10/1m||2026-01-01T00:00:00Z|erin").toCompletableFuture().join();
            ApplicationPolicies registry = instance(store, guard(store, "api", Algorithm.TOKEN_BUCKET, "5/1h"),
                    guard(store, "cap", Algorithm.CONCURRENCY, "2"));

            String shown = json(registry);
            assertThat(shown).contains("\"effective\":{\"limit\":\"5/1h\"")
                    .contains("\"by\":\"mallory\",\"at\":null,\"configuredWhenSet\":null,\"configuredChanged\":false,"
                            + "\"applied\":false,\"notApplied\":\"'limit' must look like "
                            + "\\u003ccount\\u003e/\\u003cperiod\\u003e "
                            + "(e.g. 100/1m), got 'lots'\"}") // < and > escaped, as in all the console's JSON
                    .contains("\"by\":\"erin\",\"at\":\"2026-01-01T00:00:00Z\",\"configuredWhenSet\":null,"
                            + "\"configuredChanged\":false,\"applied\":false,\"notApplied\":\"policy 'cap' caps "
                            + "requests "
                            + "in flight; overrides apply to rate limits\"}");
            assertThat(registry.policy("api").orElseThrow().override().applied()).isFalse();
            // Not applied: no warning that it decides, one that it is not applied.
            assertThat(log.text()).doesNotContain("decides instead of the configured limit")
                    .contains("Sluice policy 'api': the override in the store is not applied: 'limit' must look like")
                    .contains("Sluice policy 'cap': the override in the store is not applied: policy 'cap' caps "
                    + "requests "
                            + "in flight; overrides apply to rate limits; the configured limit 2 in flight decides");
        }
    }
}
