package dev.sluice.spring.boot;

import dev.sluice.web.internal.Parameter;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Sluice's configuration vocabulary as typed properties: what {@code sluice.<parameter>} (every
 * filter's default) and {@code sluice.filters.<name>.<parameter>} (one filter) take. Every value is
 * the text of the parameter of the same name in {@code web.xml} ({@code 100/1m}, {@code 50ms},
 * {@code header:X-API-Key,ip}), parsed by the same code as there, so a bad value fails start-up with
 * the same message; unset ({@code null}) means the default. Spring's relaxed binding applies:
 * {@code failure-mode}, {@code failureMode} and the environment variable's {@code FAILUREMODE} are one
 * name.
 *
 * <p>Not thread-safe: Spring Boot binds it once, at start-up.
 */
public abstract class SluiceParameters {

    /** How requests are counted. */
    private String algorithm;

    /** <count>/<period>, required. */
    private String limit;

    /** The bucket's capacity. */
    private String burst;

    /** Where the caller's identity comes from. */
    private String key;

    /** Units one request spends. */
    private String cost;

    /** Open, closed or local when the store fails. */
    private String failureMode;

    /** Before the request runs, or after its response status is known. */
    private String charge;

    /** With charge=after, the statuses that are charged, such as 401,403 or 4xx. */
    private String chargeWhen;

    /** With algorithm=concurrency, the longest a request holds its place. */
    private String lease;

    /** Memory, a Redis URI or redisson:PATH. */
    private String store;

    /** The longest one decision waits on the store. */
    private String timeout;

    /** Which rate-limit headers to send. */
    private String headers;

    /** Whether draft headers carry pk. */
    private String partitionKey;

    /** Peers whose forwarding header is believed. */
    private String trustedProxies;

    /** The one forwarding header trusted proxies write. */
    private String forwardedHeader;

    /** The network an IPv6 client is keyed by. */
    private String ipv6Prefix;

    /** Enforce or shadow. */
    private String mode;

    /** How a refusal is answered, problem, send-error (servlet) or exception (JAX-RS). */
    private String reject;

    /** Whether to publish to Micrometer. */
    private String metrics;

    /** The share of each limit failure-mode=local grants in this JVM. */
    private String localShare;

    /** Where a request's tier comes from, role, attribute:NAME or header:NAME. */
    private String tier;

    /** Named tiers' limits, premium:1000/1h,internal:unlimited. */
    private String tierLimits;

    /** Client networks never limited. */
    private String exempt;

    /** The HTTP methods limited; default all. */
    private String methods;

    /**
     * The name of a KeyResolver bean asked for each request's caller first; where it names
     * none, key decides.
     */
    private String keyResolver;

    /** The name of a LimitResolver bean choosing each request's limits. */
    private String limitResolver;

    /** Bound by Spring Boot. */
    protected SluiceParameters() {
    }

    /** The {@code algorithm} value, {@code null} when not set. */
    public String getAlgorithm() {
        return algorithm;
    }

    /** Sets {@code algorithm}. */
    public void setAlgorithm(String algorithm) {
        this.algorithm = algorithm;
    }

    /** The {@code limit} value, {@code null} when not set. */
    public String getLimit() {
        return limit;
    }

    /** Sets {@code limit}. */
    public void setLimit(String limit) {
        this.limit = limit;
    }

    /** The {@code burst} value, {@code null} when not set. */
    public String getBurst() {
        return burst;
    }

    /** Sets {@code burst}. */
    public void setBurst(String burst) {
        this.burst = burst;
    }

    /** The {@code key} value, {@code null} when not set. */
    public String getKey() {
        return key;
    }

    /** Sets {@code key}. */
    public void setKey(String key) {
        this.key = key;
    }

    /** The {@code cost} value, {@code null} when not set. */
    public String getCost() {
        return cost;
    }

    /** Sets {@code cost}. */
    public void setCost(String cost) {
        this.cost = cost;
    }

    /** The {@code failure-mode} value, {@code null} when not set. */
    public String getFailureMode() {
        return failureMode;
    }

    /** Sets {@code failure-mode}. */
    public void setFailureMode(String failureMode) {
        this.failureMode = failureMode;
    }

    /** The {@code charge} value, {@code null} when not set. */
    public String getCharge() {
        return charge;
    }

    /** Sets {@code charge}. */
    public void setCharge(String charge) {
        this.charge = charge;
    }

    /** The {@code charge-when} value, {@code null} when not set. */
    public String getChargeWhen() {
        return chargeWhen;
    }

    /** Sets {@code charge-when}. */
    public void setChargeWhen(String chargeWhen) {
        this.chargeWhen = chargeWhen;
    }

    /** The {@code lease} value, {@code null} when not set. */
    public String getLease() {
        return lease;
    }

    /** Sets {@code lease}. */
    public void setLease(String lease) {
        this.lease = lease;
    }

    /** The {@code store} value, {@code null} when not set. */
    public String getStore() {
        return store;
    }

    /** Sets {@code store}. */
    public void setStore(String store) {
        this.store = store;
    }

    /** The {@code timeout} value, {@code null} when not set. */
    public String getTimeout() {
        return timeout;
    }

    /** Sets {@code timeout}. */
    public void setTimeout(String timeout) {
        this.timeout = timeout;
    }

    /** The {@code headers} value, {@code null} when not set. */
    public String getHeaders() {
        return headers;
    }

    /** Sets {@code headers}. */
    public void setHeaders(String headers) {
        this.headers = headers;
    }

    /** The {@code partition-key} value, {@code null} when not set. */
    public String getPartitionKey() {
        return partitionKey;
    }

    /** Sets {@code partition-key}. */
    public void setPartitionKey(String partitionKey) {
        this.partitionKey = partitionKey;
    }

    /** The {@code trusted-proxies} value, {@code null} when not set. */
    public String getTrustedProxies() {
        return trustedProxies;
    }

    /** Sets {@code trusted-proxies}. */
    public void setTrustedProxies(String trustedProxies) {
        this.trustedProxies = trustedProxies;
    }

    /** The {@code forwarded-header} value, {@code null} when not set. */
    public String getForwardedHeader() {
        return forwardedHeader;
    }

    /** Sets {@code forwarded-header}. */
    public void setForwardedHeader(String forwardedHeader) {
        this.forwardedHeader = forwardedHeader;
    }

    /** The {@code ipv6-prefix} value, {@code null} when not set. */
    public String getIpv6Prefix() {
        return ipv6Prefix;
    }

    /** Sets {@code ipv6-prefix}. */
    public void setIpv6Prefix(String ipv6Prefix) {
        this.ipv6Prefix = ipv6Prefix;
    }

    /** The {@code mode} value, {@code null} when not set. */
    public String getMode() {
        return mode;
    }

    /** Sets {@code mode}. */
    public void setMode(String mode) {
        this.mode = mode;
    }

    /** The {@code reject} value, {@code null} when not set. */
    public String getReject() {
        return reject;
    }

    /** Sets {@code reject}. */
    public void setReject(String reject) {
        this.reject = reject;
    }

    /** The {@code metrics} value, {@code null} when not set. */
    public String getMetrics() {
        return metrics;
    }

    /** Sets {@code metrics}. */
    public void setMetrics(String metrics) {
        this.metrics = metrics;
    }

    /** The {@code local-share} value, {@code null} when not set. */
    public String getLocalShare() {
        return localShare;
    }

    /** Sets {@code local-share}. */
    public void setLocalShare(String localShare) {
        this.localShare = localShare;
    }

    /** The {@code tier} value, {@code null} when not set. */
    public String getTier() {
        return tier;
    }

    /** Sets {@code tier}. */
    public void setTier(String tier) {
        this.tier = tier;
    }

    /** The {@code tier-limits} value, {@code null} when not set. */
    public String getTierLimits() {
        return tierLimits;
    }

    /** Sets {@code tier-limits}. */
    public void setTierLimits(String tierLimits) {
        this.tierLimits = tierLimits;
    }

    /** The {@code exempt} value, {@code null} when not set. */
    public String getExempt() {
        return exempt;
    }

    /** Sets {@code exempt}. */
    public void setExempt(String exempt) {
        this.exempt = exempt;
    }

    /** The {@code methods} value, {@code null} when not set. */
    public String getMethods() {
        return methods;
    }

    /** Sets {@code methods}. */
    public void setMethods(String methods) {
        this.methods = methods;
    }

    /** The {@code KeyResolver} bean's name, {@code null} when not set. */
    public String getKeyResolver() {
        return keyResolver;
    }

    /** Sets the {@code KeyResolver} bean's name. */
    public void setKeyResolver(String keyResolver) {
        this.keyResolver = keyResolver;
    }

    /** The {@code LimitResolver} bean's name, {@code null} when not set. */
    public String getLimitResolver() {
        return limitResolver;
    }

    /** Sets the {@code LimitResolver} bean's name. */
    public void setLimitResolver(String limitResolver) {
        this.limitResolver = limitResolver;
    }

    /** The value of {@code parameter}, {@code null} when not set; {@code policy} is only a filter's. */
    String get(Parameter parameter) {
        return switch (parameter) {
            case POLICY -> policy();
            case ALGORITHM -> algorithm;
            case LIMIT -> limit;
            case BURST -> burst;
            case KEY -> key;
            case COST -> cost;
            case FAILURE_MODE -> failureMode;
            case CHARGE -> charge;
            case CHARGE_WHEN -> chargeWhen;
            case LEASE -> lease;
            case STORE -> store;
            case TIMEOUT -> timeout;
            case HEADERS -> headers;
            case PARTITION_KEY -> partitionKey;
            case TRUSTED_PROXIES -> trustedProxies;
            case FORWARDED_HEADER -> forwardedHeader;
            case IPV6_PREFIX -> ipv6Prefix;
            case MODE -> mode;
            case REJECT -> reject;
            case METRICS -> metrics;
            case LOCAL_SHARE -> localShare;
            case TIER -> tier;
            case TIER_LIMITS -> tierLimits;
            case EXEMPT -> exempt;
            case METHODS -> methods;
        };
    }

    /** The filter's {@code policy}; {@code null} for the application's settings. */
    String policy() {
        return null;
    }

    /** The parameters set, by their names in the vocabulary, in its order. */
    Map<String, String> parameters() {
        Map<String, String> set = new LinkedHashMap<>();
        for (Parameter p : Parameter.values()) {
            String value = get(p);
            if (value != null && !value.isBlank()) {
                set.put(p.configName(), value);
            }
        }
        return set;
    }
}
