package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * What the kit does with a capability a store declares unsupported: the tests that need it do
 * not run, nothing is reported skipped, and the store's refusal is checked instead, which a store
 * fails when it answers anyway, refuses without naming itself and the operation, or loses the
 * caller's state on the way. The kit runs on stores over the memory store under a launcher of
 * its own.
 */
class CapabilityTest {

    /**
     * The memory store without reservations, given-up slots and leases (the SPI's defaults: a
     * refusal, or nothing for {@code giveBack}), as the Postgres store is.
     */
    static class Partial implements RateLimitStore {
        final MemoryStore memory;

        Partial(TimeSource time) {
            memory = MemoryStore.builder().timeSource(time).build();
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return memory.decide(caller, limits);
        }

        @Override
        public CompletionStage<Void> reset(String caller, List<Limit> limits) {
            return memory.reset(caller, limits);
        }

        @Override
        public CompletionStage<Void> refund(String caller, List<Limit> limits) {
            return memory.refund(caller, limits);
        }

        @Override
        public CompletionStage<Void> pause(String caller, List<Limit> limits, Duration pause) {
            return memory.pause(caller, limits, pause);
        }

        @Override
        public CompletionStage<Map<String, String>> overrides() {
            return memory.overrides();
        }

        @Override
        public CompletionStage<Void> putOverride(String policy, String value) {
            return memory.putOverride(policy, value);
        }

        @Override
        public void close() {
            memory.close();
        }
    }

    /** A kit over a store, declaring some capabilities unsupported. */
    abstract static class Kit extends RateLimitStoreKit {
        private final Set<Capability> unsupported;

        Kit(Capability... unsupported) {
            this.unsupported = Set.of(unsupported);
        }

        @Override
        protected boolean supports(Capability capability) {
            return !unsupported.contains(capability);
        }
    }

    static final class PartialKit extends Kit {
        PartialKit() {
            super(Capability.RESERVATIONS, Capability.GIVE_BACK, Capability.LEASES);
        }

        @Override
        protected RateLimitStore newStore(TimeSource time) {
            return new Partial(time);
        }
    }

    /** The memory store, which holds leases, declaring that it does not. */
    static final class LeasesAnyway extends Kit {
        LeasesAnyway() {
            super(Capability.LEASES);
        }

        @Override
        protected RateLimitStore newStore(TimeSource time) {
            return MemoryStore.builder().timeSource(time).build();
        }
    }

    /** A refusal that names neither the store nor the operation. */
    static final class MuteRefusal extends Kit {
        MuteRefusal() {
            super(Capability.LEASES);
        }

        @Override
        protected RateLimitStore newStore(TimeSource time) {
            return new Partial(time) {
                @Override
                public CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
                    return CompletableFuture.failedFuture(new UnsupportedOperationException("not supported"));
                }
            };
        }
    }

    /** A reset refused after it deleted the caller's state. */
    static final class CostlyRefusal extends Kit {
        CostlyRefusal() {
            super(Capability.RESETS);
        }

        @Override
        protected RateLimitStore newStore(TimeSource time) {
            return new Partial(time) {
                @Override
                public CompletionStage<Void> reset(String caller, List<Limit> limits) {
                    memory.reset(caller, limits).toCompletableFuture().join();
                    return CompletableFuture.failedFuture(
                            new UnsupportedOperationException(getClass().getName() + " cannot reset a caller"));
                }
            };
        }
    }

    /** The memory store, declaring that it does not keep state over a changed limit. */
    static final class WithoutChangedLimits extends Kit {
        WithoutChangedLimits() {
            super(Capability.CHANGED_LIMITS);
        }

        @Override
        protected RateLimitStore newStore(TimeSource time) {
            return MemoryStore.builder().timeSource(time).build();
        }
    }

    /** What one run reported: each test's outcome, by its display name within its parents. */
    record Report(List<String> successful, List<String> failed, List<String> skipped) {
    }

    private static Report run(DiscoverySelector... selectors) {
        List<String> successful = Collections.synchronizedList(new ArrayList<>());
        List<String> failed = Collections.synchronizedList(new ArrayList<>());
        List<String> skipped = Collections.synchronizedList(new ArrayList<>());
        LauncherFactory.create().execute(request().selectors(selectors).build(), new TestExecutionListener() {
            @Override
            public void executionSkipped(TestIdentifier test, String reason) {
                skipped.add(test.getDisplayName() + ": " + reason);
            }

            @Override
            public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                String name = test.getDisplayName();
                switch (result.getStatus()) {
                    case SUCCESSFUL -> {
                        if (test.isTest()) {
                            successful.add(name);
                        }
                    }
                    case ABORTED -> skipped.add(name + ": " + result.getThrowable().map(Throwable::getMessage)
                            .orElse(""));
                    case FAILED -> failed.add(name + ": " + result.getThrowable().map(Throwable::getMessage)
                            .orElse(""));
                }
            }
        });
        return new Report(List.copyOf(successful), List.copyOf(failed), List.copyOf(skipped));
    }

    private static Report group(Class<? extends RateLimitStoreKit> kit, Class<?> group) {
        return run(selectNestedClass(List.of(kit), group));
    }

    @Test
    void aStoreWithGapsRunsTheWholeKitWithNothingSkippedAndItsRefusalsChecked() {
        Report report = run(DiscoverySelectors.selectClass(PartialKit.class));
        assertThat(report.skipped()).as("skipped").isEmpty();
        assertThat(report.failed()).as("failed").isEmpty();
        assertThat(report.successful()).as("the refusals").containsOnlyOnce(
                "reserve refused, naming the store and the operation; nothing lost",
                "book refused, naming the store and the operation; nothing lost",
                "giveBack refused or doing nothing: nothing given back",
                "acquireLease refused, naming the store and the operation; nothing lost",
                "releaseLease refused, naming the store and the operation; nothing lost");
        assertThat(report.successful()).as("decisions, refunds, pauses, resets and overrides run")
                .hasSizeGreaterThan(60)
                .contains("aPausedSlidingLogLetsUnitsGoOneByOneFromThePausesEnd()",
                        "anOverrideIsReadBackUntilItIsCleared()")
                .doesNotContain("aLeaseLeftBehindExpiresAfterTheLease()");
    }

    @Test
    void aGroupWhoseCapabilityIsMissingRunsNothingAndReportsNothing() {
        Report leases = group(PartialKit.class, RateLimitStoreKit.Leases.class);
        assertThat(leases).isEqualTo(new Report(List.of(), List.of(), List.of()));
    }

    @Test
    void aStoreThatDeclaresAGapButAnswersFailsItsRefusals() {
        Report report = group(LeasesAnyway.class, RateLimitStoreKit.Refusals.class);
        assertThat(report.successful()).isEmpty();
        assertThat(report.failed()).hasSize(2).allSatisfy(f -> assertThat(f)
                .contains("LeasesAnyway without LEASES").contains("declared unsupported, yet it answered"));
    }

    @Test
    void aRefusalMustNameTheStoreAndTheOperation() {
        Report report = group(MuteRefusal.class, RateLimitStoreKit.Refusals.class);
        assertThat(report.failed()).singleElement().satisfies(f -> assertThat(f)
                .startsWith("acquireLease refused").contains("the refusal's message names the store"));
        assertThat(report.successful()).containsExactly(
                "releaseLease refused, naming the store and the operation; nothing lost");
    }

    @Test
    void aRefusalMustLeaveTheCallersStateAsItWas() {
        Report report = group(CostlyRefusal.class, RateLimitStoreKit.Refusals.class);
        assertThat(report.failed()).singleElement().satisfies(f -> assertThat(f)
                .startsWith("reset refused").contains("after the refusal, the caller's state as it was")
                .contains("expected: 3").contains("but was: 4"));
    }

    @Test
    void aTestNeedingAnotherCapabilityDoesNotRunAndTheRestOfItsGroupDoes() {
        Report leases = group(WithoutChangedLimits.class, RateLimitStoreKit.Leases.class);
        assertThat(leases.skipped()).isEmpty();
        assertThat(leases.failed()).isEmpty();
        assertThat(leases.successful()).as("without a limit change").hasSize(3);
        Report refusals = group(WithoutChangedLimits.class, RateLimitStoreKit.Refusals.class);
        assertThat(refusals.failed()).isEmpty();
        assertThat(refusals.successful()).as("a decision under a changed limit, per rate algorithm").hasSize(5)
                .allSatisfy(name -> assertThat(name).endsWith(": decided under a changed limit, within it"));
    }
}
