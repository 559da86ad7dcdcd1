package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.Decision;
import dev.sluice.Limit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.math.BigInteger;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The rate-limit headers of a decided request, from every {@link Layers layer} that decided it.
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
 * {@link PartitionKeys}.
 *
 * <p>A rejected request, or one let through by shadow mode, reports remaining 0 for each limit
 * that refused it, as the documented header contract says: the limit may still hold a few units
 * when the request cost more than that, but none is available to this request. Nothing from the
 * request is ever written into a header, except as the keyed hash {@code pk}.
 */
final class RateLimitHeaders {

    /** The largest delay-seconds an SF Integer (15 digits) holds; larger waits are omitted from {@code t}. */
    private static final long SF_INTEGER_MAX = 999_999_999_999_999L;
    private static final Logger LOG = LoggerFactory.getLogger(RateLimitHeaders.class);
    /** The decimal text of 0 to 1023: limits, what remains and resets in seconds are mostly that small. */
    private static final String[] SMALL = java.util.stream.IntStream.range(0, 1024).mapToObj(Integer::toString)
            .toArray(String[]::new);

    private RateLimitHeaders() {
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
     *
     * @param quota  {@code q}, units
     * @param window {@code w}, whole seconds
     */
    record QuotaWindow(long quota, long window) {

        static QuotaWindow of(Limit limit) {
            long capacity = limit.capacity();
            long period = limit.periodMicros();
            // the window that grants the capacity: capacity * period / count microseconds, maybe fractional
            BigInteger[] window = BigInteger.valueOf(capacity).multiply(BigInteger.valueOf(period))
                    .divideAndRemainder(BigInteger.valueOf(limit.count()));
            if (window[1].signum() == 0 && window[0].mod(BigInteger.valueOf(1_000_000)).signum() == 0) {
                return new QuotaWindow(capacity,
                        Math.max(1, window[0].divide(BigInteger.valueOf(1_000_000)).longValue()));
            }
            // count per period is q per w when w is a multiple of the period's shortest whole-second multiple
            long step = period / gcd(period, 1_000_000);
            long least = Math.max(1, window[0].add(BigInteger.valueOf(999_999)).divide(BigInteger.valueOf(1_000_000))
                    .min(BigInteger.valueOf(Long.MAX_VALUE / 2_000_000)).longValue());
            long w = ((least + step - 1) / step) * step;
            if (step <= 3_600 && w <= 3_600) {
                return new QuotaWindow(limit.count() * (w * 1_000_000 / period), w);
            }
            return new QuotaWindow(Math.max(1, (long) Math.floor((double) limit.count() * least * 1_000_000 / period)),
                    least);
        }

        private static long gcd(long a, long b) {
            return b == 0 ? a : gcd(b, a % b);
        }
    }

    /** The {@code q} and {@code w} of each limit, by policy: computed once, when a guard is built. */
    static Map<String, QuotaWindow> windows(List<Limit> limits) {
        Map<String, QuotaWindow> windows = new HashMap<>();
        for (Limit limit : limits) {
            windows.put(limit.policy(), QuotaWindow.of(limit));
        }
        return Map.copyOf(windows);
    }

    /** Whole seconds, rounded up; saturates rather than overflowing for {@link Decision#NEVER}. */
    static long ceilSeconds(Duration d) {
        long seconds = d.getSeconds();
        return d.getNano() > 0 && seconds < Long.MAX_VALUE ? seconds + 1 : seconds;
    }

    /** The {@code Retry-After} value: whole seconds, rounded up, at least 1. */
    static long retryAfterSeconds(Decision decision) {
        return Math.max(1, ceilSeconds(decision.retryAfter()));
    }

    /**
     * The {@code t} of one quota: for a limit that refused the request, its wait for this request
     * (the {@code Retry-After} of that limit alone); otherwise the time until one more unit.
     */
    private static long resetSeconds(Decision.Quota quota) {
        return quota.allowed() ? ceilSeconds(quota.nextUnit()) : Math.max(1, ceilSeconds(quota.retryAfter()));
    }

    /** Writes the rate-limit headers of every layer of a request; see the class description. */
    static void write(List<Layers.Layer> layers, HeaderStyle style, BiConsumer<String, String> header) {
        for (HttpAnswer.Header h : headers(layers, style)) {
            header.accept(h.name(), h.value());
        }
    }

    /**
     * The rate-limit headers of every layer of a request, in order, as one immutable list (which
     * {@link HttpAnswer} keeps without copying); see the class description.
     */
    static List<HttpAnswer.Header> headers(List<Layers.Layer> layers, HeaderStyle style) {
        if (style == HeaderStyle.NONE) {
            return List.of();
        }
        Decision.Quota binding = null;
        for (Layers.Layer layer : layers) {
            for (Decision.Quota quota : layer.decision().quotas()) {
                if (binding == null || (binding.allowed()
                        ? !quota.allowed() || quota.remaining() < binding.remaining()
                        : !quota.allowed() && quota.retryAfter().compareTo(binding.retryAfter()) > 0)) {
                    binding = quota;
                }
            }
        }
        if (binding == null) {
            return List.of();
        }
        HttpAnswer.Header limit = null;
        HttpAnswer.Header remaining = null;
        HttpAnswer.Header reset = null;
        if (style.legacy()) {
            limit = new HttpAnswer.Header("RateLimit-Limit", decimal(binding.limit().capacity()));
            remaining = new HttpAnswer.Header("RateLimit-Remaining",
                    decimal(binding.allowed() ? binding.remaining() : 0));
            reset = new HttpAnswer.Header("RateLimit-Reset", decimal(Math.min(SF_INTEGER_MAX, resetSeconds(binding))));
            if (!style.draft()) {
                return List.of(limit, remaining, reset);
            }
        }
        StringBuilder policies = new StringBuilder();
        StringBuilder limits = new StringBuilder();
        for (Layers.Layer layer : layers) {
            String pk = layer.partitionKey() == null ? "" : ";pk=" + layer.partitionKey();
            for (Decision.Quota quota : layer.decision().quotas()) {
                if (policies.length() > 0) {
                    policies.append(", ");
                    limits.append(", ");
                }
                String policy = quota.limit().policy();
                QuotaWindow qw = layer.windows().get(policy);
                if (qw == null) { // a limit its guard was not built with; never in a running application
                    qw = QuotaWindow.of(quota.limit());
                }
                policies.append('"').append(policy).append("\";q=").append(qw.quota()).append(";w=")
                        .append(qw.window()).append(pk);
                limits.append('"').append(policy).append("\";r=").append(quota.allowed() ? quota.remaining() : 0);
                long t = resetSeconds(quota);
                if (t <= SF_INTEGER_MAX) {
                    limits.append(";t=").append(t);
                }
                limits.append(pk);
            }
        }
        HttpAnswer.Header policy = new HttpAnswer.Header("RateLimit-Policy", policies.toString());
        HttpAnswer.Header rateLimit = new HttpAnswer.Header("RateLimit", limits.toString());
        return style.legacy() ? List.of(limit, remaining, reset, policy, rateLimit) : List.of(policy, rateLimit);
    }

    /** {@code n} in decimal; the small numbers most headers carry are built once. */
    static String decimal(long n) {
        return n >= 0 && n < SMALL.length ? SMALL[(int) n] : Long.toString(n);
    }

    /**
     * Logs a warning for each policy name that is not an SF Token ({@code ALPHA} or {@code *}
     * first): the draft identifies policies by String today, but changing that to Token is an
     * open question of the working group (ietf-wg-httpapi/ratelimit-headers issue 158), which
     * would reject names starting with a digit or {@code . - _ ~}. Such names are still used.
     *
     * @param where the layer, for the log line, such as {@code filter 'search'}
     */
    static void warnOfNonTokenPolicies(List<Limit> limits, HeaderStyle style, String where) {
        if (!style.draft()) {
            return;
        }
        for (Limit limit : limits) {
            char first = limit.policy().charAt(0);
            if (!((first >= 'A' && first <= 'Z') || (first >= 'a' && first <= 'z'))) {
                LOG.warn("{}: policy name '{}' starts with '{}'; the draft RateLimit headers quote it as a String, "
                        + "which is valid, but a later revision may identify policies by Token, which must start "
                        + "with a "
                        + "letter; consider renaming the policy", where, limit.policy(), first);
            }
        }
    }
}
