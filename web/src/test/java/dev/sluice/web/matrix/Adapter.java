package dev.sluice.web.matrix;

import java.net.URI;
import java.util.List;
import java.util.Set;

/**
 * One adapter under the {@link AdapterMatrix}: it starts, in its real container on 127.0.0.1, one
 * application serving {@code GET /<app>/<route>} (200, {@code text/plain} "ok") for every
 * {@link Routes.App} it is given and every route of {@link Routes#ALL}, each route limited by its
 * {@link Routes.Route#limits()} and the app's {@link Routes.App#settings()}, expressed the way a user
 * of this adapter would write them (init-params, {@code sluice.*} properties, annotations).
 */
public interface Adapter {

    /** The adapter's name in test reports, e.g. {@code servlet-ee11}. */
    String name();

    /**
     * The stores this adapter's test class path can reach; a scenario runs once per store. The
     * default is both: the Redis store is the one {@code TestRedis} starts.
     */
    default Set<Routes.Store> stores() {
        return Set.of(Routes.Store.values());
    }

    /** Starts the applications; closing the answer stops the container. */
    Running start(List<Routes.App> apps) throws Exception;

    /** A started container. */
    interface Running extends AutoCloseable {
        /** The address of {@code path} on this container. */
        URI uri(String path);

        @Override
        void close() throws Exception;
    }
}
