package dev.sluice.servlet;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The containers the tests run in. Each surefire execution selects one with the system property
 * {@code sluice.test.ee} (its Servlet API jar must match); without it, both run.
 */
enum Container {
    EE10 {
        @Override
        TestApp.Running start(TestApp app) throws Exception {
            return Ee10.start(app);
        }
    },
    EE11 {
        @Override
        TestApp.Running start(TestApp app) throws Exception {
            return Ee11.start(app);
        }
    };

    abstract TestApp.Running start(TestApp app) throws Exception;

    /** The containers selected for this run: the parameter source of every container test. */
    static List<Container> selected() {
        String property = System.getProperty("sluice.test.ee", "ee10,ee11");
        return Arrays.stream(property.split(","))
                .map(s -> Container.valueOf(s.trim().toUpperCase(Locale.ROOT)))
                .toList();
    }
}
