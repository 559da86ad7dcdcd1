package dev.sluice.web;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.web.SluiceConfig.HeaderStyle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The HTTP side of a decision, shared by the servlet filter and the JAX-RS feature: the
 * rate-limit headers, {@code Retry-After}, and the RFC 9457 problem bodies of 429 and 503.
 *
 * <h2>Layers</h2>
 *
 * <p>Every Sluice filter and rate-limited resource method that decides one request is a
 * <em>layer</em>; their decisions are collected in one request attribute ({@link #LAYERS}), and
 * each layer rewrites the headers from all of them, so that the last one to write reports every
 * limit that applies to the request, not only its own.
 *
 * <h2>{@code legacy}</h2>
 *
 * <p>{@code RateLimit-Limit} (the most the binding limit can grant at once: its burst for a
 * bucket, its count for a window), {@code RateLimit-Remaining} and {@code RateLimit-Reset} of the
 * <em>binding</em> limit across all layers: of the limits that refused the request the one with
 * the longest wait, else the one with the least remaining. {@code RateLimit-Reset} is the time
 * until that limit grants one more unit, as {@code t} below.
 *
 * <h2>{@code draft-10}</h2>
 *
 * <p>draft-ietf-httpapi-ratelimit-headers-10: {@code RateLimit-Policy} and {@code RateLimit} are
 * lists with one member per limit of every layer, {@code RateLimit-Policy: "name";q=100;w=60} and
 * {@code RateLimit: "name";r=7;t=2}. Section 4.1.2 (Reset Parameter): "The "t" parameter indicates
 * the number of seconds until additional quota associated with the quota policy is made
 * available." So {@code t} is the time until the limit grants one unit more than {@code r}
 * ({@link Decision.Quota#nextUnit()}, rounded up; 0 for a whole budget), not the time until the
 * budget is whole. Section 6: "If a response contains both the Retry-After and the RateLimit
 * header fields, the Retry-After field value SHOULD NOT reference a point in time earlier than the
 * reset parameter." A limit that refused the request reports the time until it admits the
 * request, so the binding one's {@code t} is exactly {@code Retry-After}. Section 3.1.3 (Window
 * Parameter): "Sub-second precision is not supported", so a sub-second period is published as the
 * equivalent whole-second policy ({@code 20/500ms} is {@code q=40;w=1}). The optional {@code pk}
 * (sections 3.1.4, 4.1.3: "The value MUST be a Byte Sequence") is a keyed hash of the caller, see
 * {@link PartitionKeys}. On 429, the problem type of section 5.1, {@code quota-exceeded}, with
 * {@code violated-policies} naming the limits that refused the request (with {@code draft-10};
 * {@code both} keeps the {@code about:blank} body of {@code legacy}).
 *
 * <p>Nothing from the request is ever written into a header or a body, except as the keyed hash
 * {@code pk}: policy names are validated at start-up.
 *
 * <p>Not API: this package may change in any release.
 */
public final class HttpAnswers {

    /** The media type of problem bodies. */
    public static final String PROBLEM_JSON = "application/problem+json";
    /** The request attribute (JAX-RS property) holding the {@link Layers} of a request. */
    public static final String LAYERS = "dev.sluice.layers";
    /** The draft's problem type for a request over one or more quota policies (draft-10 section 5.1). */
    public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    /** The largest delay-seconds an SF Integer (15 digits) holds; larger waits are omitted from {@code t}. */
    private static final long SF_INTEGER_MAX = 999_999_999_999_999L;
    private static final Logger LOG = LoggerFactory.getLogger(HttpAnswers.class);
    private static final Map<Limit, long[]> WINDOWS = new ConcurrentHashMap<>();

    private HttpAnswers() {
    }

    /** One layer's decision of a request, with the partition key it reports ({@code null}: none). */
    public record Layer(Decision decision, String partitionKey) {
    }

    /** The layers that decided one request, in the order they decided it; thread-safe. */
    public static final class Layers {
        private final List<Layer> layers = new ArrayList<>(2);

        /**
         * Adds one layer's decision and returns every layer so far, this one last. A layer whose
         * {@code headers} is {@code none} publishes nothing, not even to the layers around it: it
         * is not added.
         */
        public synchronized List<Layer> add(Decision decision, String partitionKey, HeaderStyle style) {
            if (style != HeaderStyle.NONE) {
                layers.add(new Layer(decision, partitionKey));
            }
            return List.copyOf(layers);
        }

        /** Every layer so far. */
        public synchronized List<Layer> all() {
            return List.copyOf(layers);
        }

        /**
         * The layers of a request, created on first use through the request's attributes (the
         * servlet request's, or the JAX-RS properties, which a servlet container backs by them).
         */
        public static Layers of(Function<String, Object> getAttribute, BiConsumer<String, Object> setAttribute) {
            if (getAttribute.apply(LAYERS) instanceof Layers layers) {
                return layers;
            }
            Layers layers = new Layers();
            setAttribute.accept(LAYERS, layers);
            return layers;
        }
    }

    /** Whole seconds, rounded up; saturates rather than overflowing for {@link Decision#NEVER}. */
    public static long ceilSeconds(Duration d) {
        long seconds = d.getSeconds();
        return d.getNano() > 0 && seconds < Long.MAX_VALUE ? seconds + 1 : seconds;
    }

    /** The {@code Retry-After} value: whole seconds, rounded up, at least 1. */
    public static long retryAfterSeconds(Decision decision) {
        return Math.max(1, ceilSeconds(decision.retryAfter()));
    }

    /**
     * The {@code t} of one quota: for a limit that refused the request, its wait for this request
     * (the {@code Retry-After} of that limit alone); otherwise the time until one more unit.
     */
    static long resetSeconds(Decision.Quota quota) {
        return quota.allowed() ? ceilSeconds(quota.nextUnit()) : Math.max(1, ceilSeconds(quota.retryAfter()));
    }

    /**
     * Writes the rate-limit headers of one decided request with one layer (none when the store
     * failed). A rejected request, or one let through by shadow mode, reports remaining 0 for
     * each limit that refused it, as the documented header contract says: the limit may still
     * hold a few units when the request cost more than that, but none is available to this
     * request.
     */
    public static void writeHeaders(Decision decision, HeaderStyle style, BiConsumer<String, String> header) {
        writeHeaders(List.of(new Layer(decision, null)), style, header);
    }

    /** Writes the rate-limit headers of every layer of a request; see the class description. */
    public static void writeHeaders(List<Layer> layers, HeaderStyle style, BiConsumer<String, String> header) {
        if (style == HeaderStyle.NONE) {
            return;
        }
        Decision.Quota binding = null;
        for (Layer layer : layers) {
            for (Decision.Quota quota : layer.decision().quotas()) {
                if (binding == null || (binding.allowed()
                        ? !quota.allowed() || quota.remaining() < binding.remaining()
                        : !quota.allowed() && quota.retryAfter().compareTo(binding.retryAfter()) > 0)) {
                    binding = quota;
                }
            }
        }
        if (binding == null) {
            return;
        }
        if (style.legacy()) {
            header.accept("RateLimit-Limit", Long.toString(binding.limit().capacity()));
            header.accept("RateLimit-Remaining", Long.toString(binding.allowed() ? binding.remaining() : 0));
            header.accept("RateLimit-Reset", Long.toString(Math.min(SF_INTEGER_MAX, resetSeconds(binding))));
        }
        if (style.draft()) {
            StringBuilder policies = new StringBuilder();
            StringBuilder limits = new StringBuilder();
            for (Layer layer : layers) {
                String pk = layer.partitionKey() == null ? "" : ";pk=" + layer.partitionKey();
                for (Decision.Quota quota : layer.decision().quotas()) {
                    if (policies.length() > 0) {
                        policies.append(", ");
                        limits.append(", ");
                    }
                    long[] qw = quotaAndWindow(quota.limit());
                    policies.append('"').append(quota.limit().policy()).append("\";q=").append(qw[0])
                            .append(";w=").append(qw[1]).append(pk);
                    limits.append('"').append(quota.limit().policy()).append("\";r=")
                            .append(quota.allowed() ? quota.remaining() : 0);
                    long t = resetSeconds(quota);
                    if (t <= SF_INTEGER_MAX) {
                        limits.append(";t=").append(t);
                    }
                    limits.append(pk);
                }
            }
            header.accept("RateLimit-Policy", policies.toString());
            header.accept("RateLimit", limits.toString());
        }
    }

    /**
     * The draft's {@code q} and {@code w} of a limit: {@link Limit#capacity()} units over the
     * period, or for a bucket whose burst differs from its count, over the time the rate takes
     * to grant the whole burst ({@code 1/s burst 5} is {@code q=5;w=5}), so that {@code r} never
     * exceeds {@code q}. A window of a fraction of a second (which {@code w} cannot express) is
     * published as the same rate over whole seconds: {@code 20/500ms} is {@code q=40;w=1},
     * {@code 3/1500ms} is {@code q=6;w=3}; when that would take more than an hour of window, the
     * window is rounded up to whole seconds and {@code q} rounded down, which understates the rate
     * by less than one unit per window.
     */
    static long[] quotaAndWindow(Limit limit) {
        long[] cached = WINDOWS.get(limit);
        if (cached == null) {
            cached = computeQuotaAndWindow(limit);
            if (WINDOWS.size() < 1_000) { // limits are made at start-up; costs given per call could vary
                WINDOWS.put(limit, cached);
            }
        }
        return cached;
    }

    private static long[] computeQuotaAndWindow(Limit limit) {
        long capacity = limit.capacity();
        long period = limit.periodMicros();
        // the window that grants the capacity: capacity * period / count microseconds, maybe fractional
        BigInteger[] window = BigInteger.valueOf(capacity).multiply(BigInteger.valueOf(period))
                .divideAndRemainder(BigInteger.valueOf(limit.count()));
        if (window[1].signum() == 0 && window[0].mod(BigInteger.valueOf(1_000_000)).signum() == 0) {
            return new long[] {capacity, Math.max(1, window[0].divide(BigInteger.valueOf(1_000_000)).longValue())};
        }
        // count per period is q per w when w is a multiple of the period's shortest whole-second multiple
        long step = period / gcd(period, 1_000_000);
        long least = Math.max(1, window[0].add(BigInteger.valueOf(999_999)).divide(BigInteger.valueOf(1_000_000))
                .min(BigInteger.valueOf(Long.MAX_VALUE / 2_000_000)).longValue());
        long w = ((least + step - 1) / step) * step;
        if (step <= 3_600 && w <= 3_600) {
            return new long[] {limit.count() * (w * 1_000_000 / period), w};
        }
        return new long[] {Math.max(1, (long) Math.floor((double) limit.count() * least * 1_000_000 / period)), least};
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /**
     * Logs a warning for each policy name that is not an SF Token ({@code ALPHA} or {@code *}
     * first): the draft identifies policies by String today, but changing that to Token is an
     * open question of the working group (ietf-wg-httpapi/ratelimit-headers issue 158), which
     * would reject names starting with a digit or {@code . - _ ~}. Such names are still used.
     *
     * @param where the layer, for the log line, such as {@code filter 'search'}
     */
    public static void warnOfNonTokenPolicies(List<Limit> limits, HeaderStyle style, String where) {
        if (!style.draft()) {
            return;
        }
        for (Limit limit : limits) {
            char first = limit.policy().charAt(0);
            if (!((first >= 'A' && first <= 'Z') || (first >= 'a' && first <= 'z'))) {
                LOG.warn("{}: policy name '{}' starts with '{}'; the draft RateLimit headers quote it as a String, which "
                        + "is valid, but a later revision may identify policies by Token, which must start with a "
                        + "letter; consider renaming the policy", where, limit.policy(), first);
            }
        }
    }

    /** The 429 body in {@code legacy} form (problem type {@code about:blank}). */
    public static String tooManyRequests(Decision decision) {
        return tooManyRequests(decision, HeaderStyle.LEGACY);
    }

    /**
     * The 429 body: with {@code draft-10} headers, the draft's {@code quota-exceeded} problem type
     * listing in {@code violated-policies} every limit that refused the request; otherwise
     * ({@code legacy}, {@code none}, and {@code both}, whose bodies stay what they were before the
     * draft defined problem types) {@code about:blank}.
     * (An unsatisfiable cost, which only a cost given in Java can be, is decided without the
     * store: its list is empty.)
     */
    public static String tooManyRequests(Decision decision, HeaderStyle style) {
        List<String> violated = new ArrayList<>();
        for (Decision.Quota quota : decision.quotas()) {
            if (!quota.allowed()) {
                violated.add(quota.limit().policy());
            }
        }
        boolean draft = style == HeaderStyle.DRAFT;
        String type = draft ? QUOTA_EXCEEDED : "about:blank";
        String title = draft ? "Quota Exceeded" : "Too Many Requests";
        String extra = draft ? ",\"violated-policies\":[" + String.join(",", violated.stream()
                .map(p -> "\"" + p + "\"").toList()) + "]" : "";
        if (decision.outcome() == Decision.Outcome.UNSATISFIABLE) {
            return problem(type, 429, title, "This request costs more than the rate limit can ever grant.", null, extra);
        }
        Decision.Quota binding = decision.binding();
        String policy = binding == null ? null : binding.limit().policy();
        return problem(type, 429, title, "Rate limit exceeded"
                + (policy == null ? "" : " for policy '" + policy + "'") + "; retry after "
                + retryAfterSeconds(decision) + " s.", policy, extra);
    }

    /** The 503 body of a fail-closed route whose store could not decide. */
    public static String serviceUnavailable() {
        return problem("about:blank", 503, "Service Unavailable", "The rate limiter cannot decide right now; retry shortly.",
                null, "");
    }

    private static String problem(String type, int status, String title, String detail, String policy, String extra) {
        // Policy names are limited to [A-Za-z0-9._~-] at start-up; nothing here needs escaping.
        return "{\"type\":\"" + type + "\",\"title\":\"" + title + "\",\"status\":" + status + ",\"detail\":\"" + detail
                + "\"" + (policy == null ? "" : ",\"policy\":\"" + policy + "\"") + extra + "}";
    }

    /**
     * The draft's partition key {@code pk}: the first 12 bytes of HMAC-SHA256 of the caller's key
     * under a random 256-bit secret drawn once per class loader (so per web application when Sluice
     * is in {@code WEB-INF/lib}), as an SF Byte Sequence {@code :base64:}. Equal callers get equal
     * keys while the application runs; without the secret, the key cannot be recomputed from a
     * guessed caller (an address space is small enough to hash exhaustively, so a plain hash
     * would disclose the address). The key changes when the application restarts and differs
     * between instances behind one load balancer.
     */
    public static final class PartitionKeys {
        private static final byte[] SECRET = new byte[32];
        private static final ThreadLocal<Mac> MAC;

        static {
            new SecureRandom().nextBytes(SECRET);
            MAC = ThreadLocal.withInitial(() -> {
                try {
                    Mac mac = Mac.getInstance("HmacSHA256");
                    mac.init(new SecretKeySpec(SECRET, "HmacSHA256"));
                    return mac;
                } catch (GeneralSecurityException e) {
                    throw new IllegalStateException("HmacSHA256 is required of every Java platform", e);
                }
            });
        }

        private PartitionKeys() {
        }

        /** The {@code pk} value of a caller key, such as {@code :q0Jx5y8Pq2mUo8cW:}. */
        public static String of(String callerKey) {
            byte[] mac = MAC.get().doFinal(callerKey.getBytes(StandardCharsets.UTF_8));
            return ":" + Base64.getEncoder().encodeToString(Arrays.copyOf(mac, 12)) + ":";
        }
    }
}
