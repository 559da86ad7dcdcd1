package dev.sluice.spring.boot;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code sluice.*} properties of a Spring Boot application: every parameter of Sluice's
 * vocabulary as {@code sluice.<parameter>}, the default of every filter and the setting of
 * {@code @RateLimit} handlers, plus one rate-limit filter per {@code sluice.filters.<name>} and the
 * tags of each policy's meters, {@code sluice.meter-tags.<policy>.<tag>}.
 *
 * <pre>{@code
 * sluice:
 *   store: redis://redis:6379
 *   filters:
 *     api:
 *       limit: 100/1m
 *       key: header:X-API-Key,ip
 *       url-patterns: /api/*
 *       exclude: /api/health
 *   meter-tags:
 *     api:
 *       team: payments
 * }</pre>
 *
 * A {@code sluice.*} name that is none of these stops start-up, naming it, as a typo in
 * {@code web.xml} does: {@code sluice.filter.api.limit} (singular) or {@code SLUICE_FAILURE_MODE}
 * (Spring reads it as {@code sluice.failure.mode}; the variable is {@code SLUICE_FAILUREMODE}).
 *
 * <p>Not thread-safe: Spring Boot binds it once, at start-up.
 */
@ConfigurationProperties(prefix = "sluice")
public class SluiceProperties extends SluiceParameters {

    /** Rate-limit filters by name; the name is the filter's and its default policy name. */
    private final Map<String, Filter> filters = new LinkedHashMap<>();

    /** How the health contributor 'sluice' reports a store outage. */
    private final Health health = new Health();

    /**
     * Tags added to the sluice.* meters of a policy, by policy name then tag name, such as
     * sluice.meter-tags.search.team=discovery. Meters of policies decided together (tagged
     * policy=a+b) carry the tags of each; where they give one tag different values, the values are
     * joined with + in the same order. The tag names policy, outcome and error.type are Sluice's own.
     */
    private final Map<String, Map<String, String>> meterTags = new LinkedHashMap<>();

    /** Bound by Spring Boot. */
    public SluiceProperties() {
    }

    /** The filters by name, in the order written. */
    public Map<String, Filter> getFilters() {
        return filters;
    }

    /** The health contributor's settings. */
    public Health getHealth() {
        return health;
    }

    /** The tags of each policy's meters, by policy name then tag name. */
    public Map<String, Map<String, String>> getMeterTags() {
        return meterTags;
    }

    /**
     * One rate-limit filter, {@code sluice.filters.<name>}: a servlet filter configured by these
     * parameters as by {@code web.xml} init-params; what it leaves unset, the application's
     * {@code sluice.<parameter>} gives.
     */
    public static class Filter extends SluiceParameters {

        /** The limit's name in keys and headers; default: the filter's name. */
        private String policy;

        /** URL patterns the filter is mapped to, as in web.xml; default /*. */
        private List<String> urlPatterns = new ArrayList<>();

        /**
         * Paths the filter leaves alone: exact (/health), prefix (/api/public/*) or extension (*.css).
         * A filter mapped to /* leaves the Actuator's base path alone without it.
         */
        private List<String> exclude = new ArrayList<>();

        /**
         * A SpEL expression giving each request's caller, such as request.header('X-Tenant'), over
         * request (header(name), param(name), path, method, remoteAddress) and principal (the user's name,
         * or null); null or blank: the key sources decide. Read-only: no types, constructors or beans.
         */
        private String keyExpression;

        /**
         * A SpEL expression over request and principal; where it is true, the filter leaves the
         * request alone (no headers, nothing charged), such as request.path == '/ping'.
         */
        private String skipExpression;

        /** Bound by Spring Boot. */
        public Filter() {
        }

        /** The {@code policy}, {@code null}: the filter's name. */
        public String getPolicy() {
            return policy;
        }

        /** Sets the {@code policy}. */
        public void setPolicy(String policy) {
            this.policy = policy;
        }

        @Override
        String policy() {
            return policy;
        }

        /** The URL patterns; empty: {@code /*}. */
        public List<String> getUrlPatterns() {
            return urlPatterns;
        }

        /** Sets the URL patterns. */
        public void setUrlPatterns(List<String> urlPatterns) {
            this.urlPatterns = urlPatterns;
        }

        /** The paths left alone. */
        public List<String> getExclude() {
            return exclude;
        }

        /** Sets the paths left alone. */
        public void setExclude(List<String> exclude) {
            this.exclude = exclude;
        }

        /** The {@code key-expression}, {@code null} when not set. */
        public String getKeyExpression() {
            return keyExpression;
        }

        /** Sets the {@code key-expression}. */
        public void setKeyExpression(String keyExpression) {
            this.keyExpression = keyExpression;
        }

        /** The {@code skip-expression}, {@code null} when not set. */
        public String getSkipExpression() {
            return skipExpression;
        }

        /** Sets the {@code skip-expression}. */
        public void setSkipExpression(String skipExpression) {
            this.skipExpression = skipExpression;
        }
    }

    /** {@code sluice.health.*}: what the health contributor {@code sluice} reports. */
    public static class Health {

        /**
         * Whether a Redis store that fails is DOWN even when every route on it fails open (it lets
         * requests through, unlimited). Off by default: the application still answers, so taking it out of
         * a load balancer would turn a degraded limiter into an outage.
         */
        private boolean downWhenFailingOpen;

        /** Bound by Spring Boot. */
        public Health() {
        }

        /** Whether a store outage behind fail-open routes is DOWN. */
        public boolean isDownWhenFailingOpen() {
            return downWhenFailingOpen;
        }

        /** Sets whether a store outage behind fail-open routes is DOWN. */
        public void setDownWhenFailingOpen(boolean downWhenFailingOpen) {
            this.downWhenFailingOpen = downWhenFailingOpen;
        }
    }
}
