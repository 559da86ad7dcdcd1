package dev.sluice.redis;

import dev.sluice.internal.Secrets;
import org.redisson.config.Config;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Redisson configuration of a {@code store} value: {@code redis://}, {@code rediss://} or
 * {@code redisson:PATH}. A value that does not parse is refused naming it, redacted: it can hold
 * a password, which no message (nor any cause it carries) repeats.
 */
final class StoreConfig {

    /** The highest database index of a Redis server with its default {@code databases 16}. */
    private static final int MAX_DATABASE = 15;
    private static final Pattern YAML_PLACE = Pattern.compile("line (\\d+), column (\\d+)");

    private StoreConfig() {
    }

    /** The Redisson configuration for a {@code store} value; see {@link RedisStore#connect}. */
    static Config of(String store) {
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
                throw new IllegalArgumentException(
                        "'store' must be redis://host:port[/db] or rediss://host:port[/db], got '" + shown + "'");
            }
            int port = uri.getPort() < 0 ? 6379 : uri.getPort();
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("'store' has port " + port + ", outside 1 to 65535, got '"
                        + shown + "'");
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
                    + MAX_DATABASE + " (use a redisson: YAML file for a server configured with more), got '"
                    + shown + "'");
        }
        return Integer.parseInt(digits);
    }
}
