package dev.sluice.internal;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The configuration vocabulary's durations and rates ({@code 50ms}, {@code 100/1m}): parsed and
 * written back in one place, for {@code Limit.of} and for the web layer's settings.
 *
 * <p>Not API: this package may change in any release.
 */
public final class Durations {

    /** The default of {@code timeout}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(100);

    private static final Pattern RATE = Pattern.compile("(\\d{1,18})\\s*/\\s*(\\d{0,18})\\s*(ms|s|m|h|d)");
    private static final Pattern DURATION = Pattern.compile("(\\d{1,18})\\s*(ms|s|m|h|d)");

    private Durations() {
    }

    /** A count per period, as written in {@code limit}. */
    public record Rate(long count, Duration period) {
    }

    /** Parses {@code <count>/<period>}, such as {@code 10/s}, {@code 100/1m} or {@code 20/500ms}. */
    public static Rate parseRate(String value) {
        Matcher m = value == null ? null : RATE.matcher(value.trim());
        if (m == null || !m.matches()) {
            throw new IllegalArgumentException("'limit' must look like <count>/<period> (e.g. 100/1m), got '" + value
                    + "'");
        }
        long count = Long.parseLong(m.group(1));
        long amount = m.group(2).isEmpty() ? 1 : Long.parseLong(m.group(2));
        if (count < 1 || amount < 1) {
            throw new IllegalArgumentException(
                    "'limit' must have a count and a period of at least 1 (e.g. 100/1m), got '"
                    + value + "'");
        }
        return new Rate(count, toDuration("limit", value, amount, m.group(3)));
    }

    /**
     * Parses a duration such as {@code 50ms}, {@code 2s}, {@code 1m}, {@code 1h} or {@code 1d}.
     *
     * @param parameter the parameter named in an error
     */
    public static Duration parseDuration(String parameter, String value) {
        Matcher m = value == null ? null : DURATION.matcher(value.trim());
        if (m == null || !m.matches()) {
            throw new IllegalArgumentException("'" + parameter
                    + "' must look like <amount><unit> with unit ms, s, m, h "
                    + "or d (e.g. 50ms), got '" + value + "'");
        }
        return toDuration(parameter, value, Long.parseLong(m.group(1)), m.group(2));
    }

    private static Duration toDuration(String parameter, String raw, long amount, String unit) {
        try {
            return switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("'" + parameter + "' is too long, got '" + raw + "'");
        }
    }

    /** Writes a duration in the vocabulary's syntax, in the largest exact unit: {@code 1m}, {@code 500ms}. */
    public static String formatDuration(Duration d) {
        long nanos = d.toNanosPart();
        long seconds = d.getSeconds();
        if (nanos % 1_000_000 != 0) {
            return (seconds * 1_000_000 + nanos / 1_000) + "us";
        }
        if (nanos != 0 || seconds == 0) {
            return d.toMillis() + "ms";
        }
        if (seconds % 86_400 == 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds % 3_600 == 0) {
            return seconds / 3_600 + "h";
        }
        if (seconds % 60 == 0) {
            return seconds / 60 + "m";
        }
        return seconds + "s";
    }

    /** Throws unless {@code timeout} is between 1 ms and 1 minute. */
    public static Duration checkTimeout(Duration timeout) {
        return checkTimeout(timeout, timeout == null ? null : formatDuration(timeout));
    }

    /** Parses a {@code timeout}: a duration from 1 ms to 1 minute, such as {@code 50ms}. */
    public static Duration parseTimeout(String value) {
        return checkTimeout(parseDuration("timeout", value), value);
    }

    private static Duration checkTimeout(Duration timeout, String raw) {
        if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0
                || timeout.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException("'timeout' must be between 1ms and 1m, got '" + raw + "'");
        }
        return timeout;
    }
}
