package dev.sluice.tck;

import dev.sluice.TimeSource;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectNestedClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * A store that declares a capability unsupported gets the tests that need it reported as skipped,
 * with the capability in the message, and every other test run: the kit run on the memory store,
 * its leases group only, under a launcher of its own.
 */
class CapabilityTest {

    /** The memory store, declaring that it does not support one capability. */
    abstract static class Without extends RateLimitStoreKit {
        private final Capability missing;

        Without(Capability missing) {
            this.missing = missing;
        }

        @Override
        protected RateLimitStore newStore(TimeSource time) {
            return MemoryStore.builder().timeSource(time).build();
        }

        @Override
        protected boolean supports(Capability capability) {
            return capability != missing;
        }
    }

    static final class WithoutLeases extends Without {
        WithoutLeases() {
            super(Capability.LEASES);
        }
    }

    static final class WithoutChangedLimits extends Without {
        WithoutChangedLimits() {
            super(Capability.CHANGED_LIMITS);
        }
    }

    /** The outcome of each test of the leases group: "SUCCESSFUL", or "ABORTED: " and the skip's message. */
    private static List<String> leasesOn(Class<? extends RateLimitStoreKit> kit) {
        List<String> outcomes = Collections.synchronizedList(new ArrayList<>());
        LauncherFactory.create().execute(request()
                .selectors(selectNestedClass(List.of(kit), RateLimitStoreKit.Leases.class))
                .build(), new TestExecutionListener() {
                    @Override
                    public void executionFinished(TestIdentifier test, TestExecutionResult result) {
                        if (test.isTest()) {
                            outcomes.add(result.getStatus() + result.getThrowable().map(e -> ": " + e.getMessage())
                                    .orElse(""));
                        }
                    }
                });
        return outcomes;
    }

    @Test
    void aGroupWhoseCapabilityIsMissingIsSkippedNamingIt() {
        assertThat(leasesOn(WithoutLeases.class)).hasSize(7).allSatisfy(outcome -> assertThat(outcome)
                .isEqualTo("ABORTED: Assumption failed: WithoutLeases does not support LEASES "
                        + "(RateLimitStore.acquireLease and releaseLease): skipped"));
    }

    @Test
    void aTestNeedingAnotherCapabilityIsSkippedAloneAndTheRestOfItsGroupRuns() {
        List<String> outcomes = leasesOn(WithoutChangedLimits.class);
        assertThat(outcomes).hasSize(7);
        assertThat(outcomes).filteredOn(outcome -> outcome.equals("SUCCESSFUL")).as("without a limit change")
                .hasSize(3);
        assertThat(outcomes).filteredOn(outcome -> outcome.startsWith("ABORTED")).as("the cap and lease changes")
                .hasSize(4).allSatisfy(outcome -> assertThat(outcome).contains("does not support CHANGED_LIMITS"));
    }
}
