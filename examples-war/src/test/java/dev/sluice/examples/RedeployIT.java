package dev.sluice.examples;

import dev.sluice.testing.TestRedis;
import org.eclipse.jetty.ee11.webapp.WebAppContext;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redeploy hygiene: the examples WAR, on Redis, deployed and undeployed 20 times in one running
 * Jetty leaves no thread of its own and no class loader behind. The filters' and the feature's
 * Redisson client is created by the application, so it must be shut down with it.
 */
class RedeployIT {

    private static final int CYCLES = 20;

    @Test
    void twentyRedeploysLeaveNoThreadsOrClassLoadersBehind() throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        Handler.Sequence contexts = new Handler.Sequence();
        server.setHandler(contexts);
        server.start();
        Set<Long> before = threadIds();
        List<WeakReference<ClassLoader>> loaders = new ArrayList<>();
        try {
            URI base = URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/");
            Deployed running = new Deployed() {
                @Override
                public URI base() {
                    return base;
                }

                @Override
                public void close() {
                    // the loop undeploys; the server stops in finally
                }
            };
            for (int cycle = 0; cycle < CYCLES; cycle++) {
                WebAppContext webapp = new WebAppContext();
                webapp.setContextPath("/");
                webapp.setWar(Http.war().toAbsolutePath().toString());
                webapp.setInitParameter(StoreSetting.CONTEXT_PARAM, System.getProperty("redeploy.store", TestRedis.shared().url()));
                webapp.setThrowUnavailableOnStartupException(true);
                contexts.addHandler(webapp);
                webapp.start();
                HttpResponse<String> hello = Http.get(running, "hello", "redeploy-" + cycle);
                assertThat(hello.statusCode()).isEqualTo(200);
                assertThat(Http.header(hello, "RateLimit-Limit")).as("decided by the store").isEqualTo("5");
                assertThat(Http.get(running, "api/window", "redeploy-" + cycle).statusCode()).isEqualTo(200);
                loaders.add(new WeakReference<>(webapp.getClassLoader()));
                webapp.stop();
                contexts.removeHandler(webapp);
                webapp.destroy();
            }

            assertThat(awaitNoNewThreads(before)).as("threads started by the application and still alive").isEmpty();
            assertThat(awaitCollected(loaders)).as("web-application class loaders still reachable").isZero();
        } finally {
            server.stop();
        }
    }

    private static Set<Long> threadIds() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getId).collect(Collectors.toSet());
    }

    /** Threads not present before the deployments and still alive after up to 20 s. */
    private static List<String> awaitNoNewThreads(Set<Long> before) throws InterruptedException {
        List<String> extra = List.of();
        for (int i = 0; i < 200; i++) {
            extra = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.isAlive() && !before.contains(t.getId()))
                    // Threads of the server, the JDK and the test itself, one per JVM, not per deployment
                    // (whether one pins an application's class loader is the class-loader check's business):
                    .filter(t -> !t.getName().startsWith("qtp") && !t.getName().startsWith("Scheduler-"))
                    .filter(t -> !t.getName().startsWith("HttpClient") && !t.getName().startsWith("process reaper"))
                    .filter(t -> !t.getName().equals("CompletableFutureDelayScheduler"))
                    .filter(t -> !t.getName().startsWith("ForkJoinPool.commonPool"))
                    .map(t -> t.getName() + " (" + t.getClass().getName() + ")")
                    .toList();
            if (extra.isEmpty()) {
                break;
            }
            Thread.sleep(100);
        }
        return extra;
    }

    /** How many of the class loaders are still reachable after garbage collection (up to ~20 s). */
    private static long awaitCollected(List<WeakReference<ClassLoader>> loaders) throws InterruptedException {
        long alive = loaders.size();
        for (int i = 0; i < 40 && alive > 0; i++) {
            System.gc();
            Thread.sleep(500);
            alive = loaders.stream().filter(ref -> ref.get() != null).count();
        }
        return alive;
    }
}
