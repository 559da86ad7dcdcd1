package dev.sluice.outbound;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.function.Function;

/**
 * The pause a provider's answer asks for: {@code Retry-After} on a 429 or 503 (seconds or an
 * HTTP date), and, on any answer, the {@code RateLimit} headers saying the budget is spent: the
 * IETF draft's structured {@code RateLimit: "policy";r=0;t=30} (the longest {@code t} of the
 * policies with {@code r=0}), its earlier dictionary {@code remaining=0, reset=30}, and the legacy
 * {@code RateLimit-Remaining: 0} with {@code RateLimit-Reset} (or {@code X-RateLimit-*}), whose
 * reset is seconds, or an epoch second when above 10<sup>9</sup> (GitHub's). The longest of
 * them; zero when none asks, a value is unreadable, or a date has passed. Headers that show
 * budget left are ignored: a provider's answer only ever holds calls back.
 */
final class ProviderPause {

    /** A reset above this is an epoch second, not a number of seconds (2001-09-09). */
    private static final long EPOCH_SECONDS = 1_000_000_000L;

    private ProviderPause() {
    }

    /**
     * @param header    a response header's value by name, whatever its case; {@code null} if absent
     * @param nowMillis the epoch millisecond of the answer, for dates
     */
    static Duration requested(int status, Function<String, String> header, long nowMillis) {
        long millis = 0;
        if (status == 429 || status == 503) {
            millis = retryAfter(header.apply("Retry-After"), nowMillis);
        }
        String structured = header.apply("RateLimit");
        if (structured != null) {
            millis = Math.max(millis, structured(structured, nowMillis));
        }
        millis = Math.max(millis, legacy(header.apply("RateLimit-Remaining"), header.apply("RateLimit-Reset"), nowMillis));
        millis = Math.max(millis, legacy(header.apply("X-RateLimit-Remaining"), header.apply("X-RateLimit-Reset"), nowMillis));
        return Duration.ofMillis(millis);
    }

    private static long retryAfter(String value, long nowMillis) {
        if (value == null) {
            return 0;
        }
        long seconds = seconds(value);
        if (seconds >= 0) {
            return millis(seconds);
        }
        try {
            long at = ZonedDateTime.parse(value.trim(), DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT))
                    .toInstant().toEpochMilli();
            return Math.max(0, at - nowMillis);
        } catch (DateTimeParseException e) {
            return 0;
        }
    }

    /** The draft's {@code "p";r=0;t=30, ...} or its earlier {@code remaining=0, reset=30}. */
    private static long structured(String value, long nowMillis) {
        long millis = 0;
        long remaining = -1;
        long reset = -1;
        for (String member : value.split(",")) {
            long r = -1;
            long t = -1;
            for (String parameter : member.split(";")) {
                int eq = parameter.indexOf('=');
                if (eq < 0) {
                    continue;
                }
                String name = parameter.substring(0, eq).trim().toLowerCase(Locale.ROOT);
                long number = seconds(parameter.substring(eq + 1));
                switch (name) {
                    case "r" -> r = number;
                    case "t" -> t = number;
                    case "remaining" -> remaining = number;
                    case "reset" -> reset = number;
                    default -> { }
                }
            }
            if (r == 0 && t >= 0) {
                millis = Math.max(millis, millis(t));
            }
        }
        if (remaining == 0 && reset >= 0) {
            millis = Math.max(millis, reset(reset, nowMillis));
        }
        return millis;
    }

    private static long legacy(String remaining, String reset, long nowMillis) {
        if (remaining == null || reset == null || seconds(remaining) != 0) {
            return 0;
        }
        long seconds = seconds(reset);
        return seconds < 0 ? 0 : reset(seconds, nowMillis);
    }

    private static long reset(long seconds, long nowMillis) {
        return seconds > EPOCH_SECONDS ? Math.max(0, millis(seconds) - nowMillis) : millis(seconds);
    }

    /** A non-negative whole number of seconds, or -1. */
    private static long seconds(String value) {
        String trimmed = value.trim();
        if (trimmed.isEmpty() || trimmed.length() > 15) {
            return trimmed.length() > 15 && trimmed.chars().allMatch(Character::isDigit) ? Long.MAX_VALUE / 1_000 : -1;
        }
        for (int i = 0; i < trimmed.length(); i++) {
            if (!Character.isDigit(trimmed.charAt(i))) {
                return -1;
            }
        }
        return Long.parseLong(trimmed);
    }

    private static long millis(long seconds) {
        return seconds >= Long.MAX_VALUE / 1_000 ? Long.MAX_VALUE / 1_000 : seconds * 1_000;
    }
}
