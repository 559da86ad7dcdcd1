package dev.sluice.postgres;

import dev.sluice.internal.Secrets;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Provides {@code store=postgresql://[user[:password]@]host[:port]/database[?parameters]} and
 * {@code store=jdbc:postgresql://...} (a PostgreSQL JDBC URL as the driver takes it): a
 * {@link PostgresStore} on connections of its own, opened through the PostgreSQL JDBC driver
 * ({@code org.postgresql:postgresql}, which the application adds). The parameter
 * {@code create-table=true} creates the tables at start-up ({@link PostgresStore.Builder#createTable});
 * the others go to the driver. An application with a pool of its own builds the store on it with
 * {@link PostgresStore#builder} instead. A password is never written into a message.
 */
public final class PostgresStoreProvider implements StoreProvider {

    private static final Pattern URL = Pattern.compile(
            "(postgresql|jdbc:postgresql)://([^@/\\s]*@)?[^:/?\\s]+(:\\d{1,5})?/[^?\\s]+(\\?\\S*)?");
    private static final String CREATE_TABLE = "create-table";

    /** The driver's defaults wait longer than a rate limiter should: seconds, not tens of them. */
    private static final String CONNECT_TIMEOUT_SECONDS = "5";

    @Override
    public Set<String> schemes() {
        return Set.of("postgresql", "jdbc");
    }

    @Override
    public void check(String store) {
        String url = connection(store).url();
        try {
            DriverManager.getDriver(url);
        } catch (SQLException e) {
            throw new IllegalArgumentException("'store' " + Secrets.redact(store) + " needs the PostgreSQL JDBC "
                    + "driver (org.postgresql:postgresql) on the class path, got '" + Secrets.redact(store) + "'");
        }
    }

    @Override
    public RateLimitStore open(String store) {
        check(store);
        Connection connection = connection(store);
        UrlDataSource dataSource = new UrlDataSource(connection.url(), connection.properties(),
                PostgresStore.DEFAULT_THREADS);
        try {
            return PostgresStore.builder(dataSource).createTable(connection.createTable()).closing(dataSource).build();
        } catch (RuntimeException e) {
            dataSource.close();
            throw new IllegalArgumentException("'store' " + Secrets.redact(store) + " could not be configured: "
                    + e.getMessage(), e);
        }
    }

    /** What a {@code store} value says: the driver's URL, its credentials and whether to create the tables. */
    record Connection(String url, Properties properties, boolean createTable) {
    }

    /**
     * Reads a value.
     *
     * @throws IllegalArgumentException naming {@code 'store'} and the redacted value if it is malformed
     */
    static Connection connection(String store) {
        if (store == null || !URL.matcher(store).matches()) {
            throw new IllegalArgumentException("'store' must be postgresql://[user[:password]@]host[:port]/database"
                    + "[?parameters] or jdbc:postgresql://host[:port]/database[?parameters], got '"
                    + Secrets.redact(store) + "'");
        }
        boolean jdbc = store.startsWith("jdbc:");
        URI uri;
        try {
            uri = URI.create(jdbc ? store.substring("jdbc:".length()) : store);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'store' must be a URL, got '" + Secrets.redact(store) + "'");
        }
        Properties properties = new Properties();
        properties.setProperty("connectTimeout", CONNECT_TIMEOUT_SECONDS);
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            properties.setProperty("user", decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
            if (colon >= 0) {
                properties.setProperty("password", decode(userInfo.substring(colon + 1)));
            }
        }
        boolean createTable = false;
        List<String> kept = new ArrayList<>();
        if (uri.getRawQuery() != null) {
            for (String parameter : uri.getRawQuery().split("&")) {
                if (parameter.startsWith(CREATE_TABLE + "=")) {
                    String value = parameter.substring(CREATE_TABLE.length() + 1);
                    if (!value.equals("true") && !value.equals("false")) {
                        throw new IllegalArgumentException("'store' parameter 'create-table' must be true or false, "
                                + "got '" + value + "'");
                    }
                    createTable = value.equals("true");
                } else if (!parameter.isEmpty()) {
                    kept.add(parameter);
                }
            }
        }
        String hostPort = uri.getRawAuthority().substring(userInfo == null ? 0 : userInfo.length() + 1);
        String url = "jdbc:postgresql://" + hostPort + uri.getRawPath()
                + (kept.isEmpty() ? "" : "?" + String.join("&", kept));
        return new Connection(url, properties, createTable);
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }
}
