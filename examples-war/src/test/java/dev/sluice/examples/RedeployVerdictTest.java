package dev.sluice.examples;

import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.sluice.examples.HeapPaths.How.AWAITING_FINALIZATION;
import static dev.sluice.examples.HeapPaths.How.STRONGLY;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RedeployIT}'s verdict on the class loaders a heap dump still shows: it judges the counted
 * deployments only. The last, uncounted deployment may be held by the JDK's and the container's
 * caches of "the last one", and its path must neither fail the run nor stand in for a counted
 * survivor's.
 */
class RedeployVerdictTest {

    private static final String FINALIZER =
            "class java.lang.ref.Finalizer .static unfinalized -> java.lang.ref.Finalizer"
            + " .referent -> io.netty.buffer.AdaptivePoolingAllocator .<class> -> class ... .<loader>"
            + " -> WebAppClassLoader";
    private static final String CACHE =
            "class java.lang.runtime.ObjectMethods .static OBJECT_EQ -> ... -> WebAppClassLoader";

    @Test
    void theUncountedLastDeploymentHeldByACacheDoesNotFailAToleratedSurvivor() {
        List<HeapPaths.Held> held = List.of(
                new HeapPaths.Held(AWAITING_FINALIZATION, RedeployIT.deployment(15), FINALIZER),
                new HeapPaths.Held(STRONGLY, RedeployIT.UNCOUNTED, CACHE));
        assertThatCode(() -> RedeployIT.judge(held, 1, 20, "")).doesNotThrowAnyException();
    }

    @Test
    void theUncountedLastDeploymentsPathDoesNotExcuseACountedSurvivor() {
        // the counted survivor's own path is missing: nothing shows that only the JVM holds it
        List<HeapPaths.Held> held = List.of(new HeapPaths.Held(AWAITING_FINALIZATION, RedeployIT.UNCOUNTED, FINALIZER));
        assertThatThrownBy(() -> RedeployIT.judge(held, 1, 20, "")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("judged");
    }

    @Test
    void aCountedSurvivorTheProgramHoldsFails() {
        List<HeapPaths.Held> held = List.of(new HeapPaths.Held(STRONGLY, RedeployIT.deployment(3), CACHE),
                new HeapPaths.Held(AWAITING_FINALIZATION, RedeployIT.UNCOUNTED, FINALIZER));
        assertThatThrownBy(() -> RedeployIT.judge(held, 1, 20, "")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("held");
    }

    @Test
    void twoCountedSurvivorsFailEvenAwaitingFinalization() {
        List<HeapPaths.Held> held = List.of(
                new HeapPaths.Held(AWAITING_FINALIZATION, RedeployIT.deployment(3), FINALIZER),
                new HeapPaths.Held(AWAITING_FINALIZATION, RedeployIT.deployment(4), FINALIZER));
        assertThatThrownBy(() -> RedeployIT.judge(held, 2, 20, "")).isInstanceOf(AssertionError.class)
                .hasMessageContaining("still reachable");
    }
}
