package dev.sluice.redis;

import dev.sluice.internal.Secrets;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A store's Redisson client: made from a {@code store} value (and then owned, connected off the
 * calling thread and shut down on {@link #close()}), or borrowed from the application (then
 * connected as the application chose, and left alone).
 */
final class RedisConnection {

    // The store's category, as users have configured it.
    private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);
    /** The highest database index of a Redis server with its default {@code databases 16}. */
    private static final int MAX_DATABASE = 15;
    private static final Pattern YAML_PLACE = Pattern.compile("line (\\d+), column (\\d+)");

    private final RedissonClient client;
    private final boolean owned;
    private final Runnable warmUp;
    private final AtomicBoolean connecting = new AtomicBoolean();
    private volatile boolean ready;
    private volatile boolean warm;
    private volatile boolean closed;

    /**
     * @param warmUp   run to get ready (it loads the scripts, opens connections, measures round
     *                 trips); throws while Redis is unreachable
     * @param deadline when (in {@link System#nanoTime()}) to stop waiting for the warm-up
     */
    RedisConnection(RedissonClient client, boolean owned, Runnable warmUp, long deadline) {
        this.client = client;
        this.owned = owned;
        this.warmUp = warmUp;
        // Warm up on a thread of our own and wait for it until the deadline, so that a store whose
        // Redis is up decides its first requests as it decides later ones. Our client connects
        // lazily, and Redisson makes the first connection on the calling thread: a request must
        // never pay for that (or wait out a connect timeout). Until our client has warmed up,
        // decisions fail fast (the failure mode) and it keeps trying in the background. The
        // application's client is connected (or connecting) as it chose: its store decides at once
        // whatever the warm-up's outcome, which is tried once.
        this.ready = !owned;
        connectInBackground();
        awaitWarm(deadline);
    }

    /** The Redisson configuration for a {@code store} value; see {@link RedisStore#connect}. */
    static Config config(String store) {
        Config config;
        // Messages show the value redacted (Secrets), and carry no cause whose text could quote it.
        String shown = Secrets.redact(store);
        if (store.startsWith("redisson:")) {
            File file = new File(store.substring("redisson:".length()));
            try {
                config = Config.fromYAML(file);
            } catch (IOException e) {
                // The JDK's text: the path and why it cannot be opened.
                throw new IllegalArgumentException("'store' names a Redisson YAML file that cannot be read ("
                        + e.getMessage() + "), got '" + shown + "'");
            } catch (RuntimeException e) {
                // The YAML parser's text quotes the file's lines, which may hold the password: only where it failed.
                throw new IllegalArgumentException("'store' names a file that is not a Redisson YAML configuration ("
                        + e.getClass().getSimpleName() + yamlPlace(e) + "; the file's text is not repeated here, as it "
                        + "may hold a password), got '" + shown + "'");
            }
        } else {
            URI uri;
            try {
                uri = URI.create(store);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'store' must be redis://host:port[/db], got '" + shown + "'");
            }
            if (!("redis".equals(uri.getScheme()) || "rediss".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new IllegalArgumentException("'store' must be redis://host:port[/db] or rediss://host:port[/db], got '"
                        + shown + "'");
            }
            int port = uri.getPort() < 0 ? 6379 : uri.getPort();
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("'store' has port " + port + ", outside 1 to 65535, got '" + shown + "'");
            }
            config = new Config();
            var single = config.useSingleServer()
                    .setAddress(uri.getScheme() + "://" + uri.getHost() + ":" + port)
                    .setDatabase(database(uri, shown))
                    .setConnectTimeout(2_000)
                    .setTimeout(1_000)
                    .setRetryAttempts(0)
                    .setConnectionMinimumIdleSize(2)
                    .setSubscriptionConnectionMinimumIdleSize(0)
                    .setSubscriptionConnectionPoolSize(1);
            if (uri.getUserInfo() != null) {
                String[] user = uri.getUserInfo().split(":", 2);
                single.setUsername(user.length == 2 && !user[0].isEmpty() ? user[0] : null);
                single.setPassword(user.length == 2 ? user[1] : user[0]);
            }
        }
        config.setLazyInitialization(true);
        return config;
    }

    /** Where a YAML parser's message says it failed, {@code " at line 3, column 5"}, or nothing. */
    private static String yamlPlace(RuntimeException e) {
        Matcher place = YAML_PLACE.matcher(String.valueOf(e.getMessage()));
        return place.find() ? " at line " + place.group(1) + ", column " + place.group(2) : "";
    }

    /** The database of a {@code redis://} URI's path: none, {@code /} or {@code /0} to {@code /15}. */
    private static int database(URI uri, String shown) {
        String path = uri.getPath() == null ? "" : uri.getPath();
        if (path.isEmpty() || path.equals("/")) {
            return 0;
        }
        String digits = path.substring(1);
        if (!digits.matches("[0-9]{1,2}") || Integer.parseInt(digits) > MAX_DATABASE) {
            throw new IllegalArgumentException("'store' names database '" + digits + "'; Redis numbers them 0 to "
                    + MAX_DATABASE + " (use a redisson: YAML file for a server configured with more), got '" + shown + "'");
        }
        return Integer.parseInt(digits);
    }

    /**
     * {@code Redisson.create}, on a short-lived thread of our own. Creating a client leaves netty's
     * {@code InternalThreadLocalMap} (a class of the client's loader) in a plain {@code ThreadLocal}
     * of the calling thread. In a servlet container that thread is the container's deployment
     * thread, which outlives the application: it would keep every undeployed application's class
     * loader reachable. Our thread ends here, and its thread-locals with it.
     */
    static RedissonClient createOffThread(Config config) {
        RedissonClient[] created = new RedissonClient[1];
        Throwable[] failed = new Throwable[1];
        Thread creator = new Thread(() -> {
            try {
                created[0] = Redisson.create(config);
            } catch (RuntimeException | Error e) {
                failed[0] = e;
            }
        }, "sluice-redis-create");
        creator.setDaemon(true);
        creator.start();
        boolean interrupted = false;
        while (true) {
            try {
                creator.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the client must not be left behind half-made: finish, then re-assert
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failed[0] instanceof RuntimeException e) {
            throw e;
        }
        if (failed[0] instanceof Error e) {
            throw e;
        }
        return created[0];
    }

    RedissonClient client() {
        return client;
    }

    /** Whether Redis has answered at least once; if not, starts connecting in the background. */
    boolean checkReady() {
        if (!ready) {
            connectInBackground();
        }
        return ready;
    }

    /** Whether Redis has answered at least once. */
    boolean ready() {
        return ready;
    }

    /**
     * Starts the warm-up on a daemon thread, unless it has succeeded or is under way; our client's
     * is tried every 500 ms until it succeeds, the application's once.
     */
    private void connectInBackground() {
        if (warm || closed || !connecting.compareAndSet(false, true)) {
            return;
        }
        Thread connector = new Thread(() -> {
            try {
                while (!warm && !closed) {
                    try {
                        warmUp.run();
                        warm = true;
                        ready = true;
                    } catch (RuntimeException e) {
                        if (!owned) {
                            LOG.debug("Redis is not reachable yet; its first decisions may be slow: {}", e.toString());
                            return;
                        }
                        LOG.debug("Redis is not reachable yet; retrying in 500 ms: {}", e.toString());
                        Thread.sleep(500);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                connecting.set(false);
            }
        }, "sluice-redis-connect");
        connector.setDaemon(true);
        connector.start();
    }

    private void awaitWarm(long deadline) {
        while (!warm && connecting.get() && deadline - System.nanoTime() > 0) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Shuts the client down if it is ours; a borrowed client is left alone. */
    void close() {
        closed = true;
        if (owned) {
            client.shutdown();
        }
    }
}
