package dev.sluice.servlet;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The containers the tests run in. Each surefire execution (see the pom) selects one with the
 * system property {@code sluice.test.ee} and puts that container's Servlet API jar (6.0 for EE10,
 * 6.1 for EE11) in place of the 5.0 one the filter compiles against. Without the property both
 * run, which needs a Servlet 6.x API on the test classpath.
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
