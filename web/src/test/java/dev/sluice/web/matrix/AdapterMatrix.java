package dev.sluice.web.matrix;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The HTTP behaviour every adapter shares, written once: each {@link Scenarios scenario} runs for
 * every adapter a module declares and every store that adapter reaches, each adapter started once
 * in its real container (as Caffeine's {@code CacheSpec} runs one test over a declared matrix). A
 * module runs it by extending this class and naming its adapters.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AdapterMatrix {

    private final Map<Adapter, Adapter.Running> running = new LinkedHashMap<>();

    /** The adapters of this module, e.g. one per container it supports. */
    protected abstract List<Adapter> adapters();

    @BeforeAll
    final void startEveryAdapter() throws Exception {
        for (Adapter adapter : adapters()) {
            List<Routes.App> apps = new ArrayList<>();
            adapter.stores().stream().sorted().forEach(store -> apps.addAll(Routes.apps(store)));
            running.put(adapter, adapter.start(apps));
        }
    }

    @AfterAll
    final void stopEveryAdapter() throws Exception {
        for (Adapter.Running each : running.values()) {
            each.close();
        }
    }

    @TestFactory
    final Stream<DynamicContainer> everyScenarioOnEveryAdapterAndStore() {
        return running.entrySet().stream().flatMap(entry -> entry.getKey().stores().stream().sorted()
                .map(store -> DynamicContainer.dynamicContainer(entry.getKey().name() + ", " + store.suffix(),
                        Scenarios.ALL.stream().map(scenario -> DynamicTest.dynamicTest(scenario.name(),
                                () -> scenario.check().run(new Target(entry.getValue(), store)))))));
    }
}
