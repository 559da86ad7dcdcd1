package dev.sluice.servlet;

import dev.sluice.web.matrix.Adapter;
import dev.sluice.web.matrix.AdapterMatrix;
import dev.sluice.web.matrix.Routes;

import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The adapter matrix on {@code RateLimitFilter}: one filter per app and route, by init-params, in real Jetty. */
class ServletMatrixTest extends AdapterMatrix {

    @Override
    protected List<Adapter> adapters() {
        return Container.selected().stream().map(ServletMatrixTest::adapter).toList();
    }

    private static Adapter adapter(Container container) {
        return new Adapter() {
            @Override
            public String name() {
                return "servlet-" + container.name().toLowerCase(Locale.ROOT);
            }

            @Override
            public Running start(List<Routes.App> apps) throws Exception {
                TestApp app = new TestApp();
                for (Routes.App each : apps) {
                    for (Routes.Route route : Routes.ALL) {
                        app.filter(each.name() + "-" + route.name(), "/" + each.name() + "/" + route.name(),
                                initParams(each.parameters(route)));
                    }
                }
                TestApp.Running running = container.start(app);
                return new Running() {
                    @Override
                    public URI uri(String path) {
                        return running.uri(path);
                    }

                    @Override
                    public void close() {
                        running.close();
                    }
                };
            }
        };
    }

    /** {@code name, value, name, value...}, as {@link TestApp#filter} takes them. */
    static String[] initParams(Map<String, String> params) {
        return params.entrySet().stream().flatMap(e -> java.util.stream.Stream.of(e.getKey(), e.getValue()))
                .toArray(String[]::new);
    }
}
