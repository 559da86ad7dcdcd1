package dev.sluice.webflux;

import dev.sluice.web.HttpLimiter;
import dev.sluice.web.matrix.Adapter;
import dev.sluice.web.matrix.AdapterMatrix;
import dev.sluice.web.matrix.Routes;
import org.springframework.web.server.WebFilter;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * The adapter matrix on the WebFlux filter: one Reactor Netty server, one filter per app and route,
 * each mapped to {@code /<app>/<route>}, under BlockHound like every test of this module.
 */
class WebFluxMatrixTest extends AdapterMatrix {

    @Override
    protected List<Adapter> adapters() {
        return List.of(new Adapter() {
            @Override
            public String name() {
                return "webflux-netty";
            }

            @Override
            public Running start(List<Routes.App> apps) {
                List<RateLimitWebFilter> filters = new ArrayList<>();
                for (Routes.App app : apps) {
                    for (Routes.Route route : Routes.ALL) {
                        String name = app.name() + "-" + route.name();
                        HttpLimiter limiter = HttpLimiter.builder("filter '" + name + "'").name(name)
                                .parameters(app.parameters(route)::get).build();
                        filters.add(new RateLimitWebFilter(limiter, List.of("/" + app.name() + "/" + route.name())));
                    }
                }
                Netty netty = new Netty(new ArrayList<WebFilter>(filters));
                return new Running() {
                    @Override
                    public URI uri(String path) {
                        return netty.uri(path);
                    }

                    @Override
                    public void close() {
                        netty.close();
                        filters.forEach(RateLimitWebFilter::close);
                    }
                };
            }
        });
    }
}
