package dev.sluice.outbound;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The pause a provider's answer asks for: {@code Retry-After} on a 429 or 503 (seconds or an
 * HTTP date in any of the three formats HTTP recipients must accept: IMF-fixdate, RFC 850's and
 * asctime's), and, on any answer, the {@code RateLimit} headers saying the budget is spent: the
 * IETF draft's structured {@code RateLimit: "policy";r=0;t=30} (the longest {@code t} of the
 * policies with {@code r=0}), its earlier dictionary {@code remaining=0, reset=30}, and the legacy
 * {@code RateLimit-Remaining: 0} with {@code RateLimit-Reset} (or {@code X-RateLimit-*}), whose
 * reset is seconds, or an epoch second when above 10<sup>9</sup> (GitHub's), either possibly with
 * a fraction. The longest of them; zero when none asks, a value is unreadable, or a date has
 * passed. A value asking for more than {@link #LONGEST_MEANT} cannot be meant (an epoch in
 * milliseconds reads as tens of thousands of years of seconds): it asks for no pause and is
 * reported as bad input. Headers that show budget left are ignored: a provider's answer only
 * ever holds calls back.
 */
final class ProviderPause {

    /** A reset above this is an epoch second, not a number of seconds (2001-09-09). */
    private static final long EPOCH_SECONDS = 1_000_000_000L;
    /**
     * The longest pause a provider can mean: a year. Quotas reset within a day or a month; a
     * reset further ahead is a unit mistaken (milliseconds for seconds) or a broken clock.
     */
    static final Duration LONGEST_MEANT = Duration.ofDays(366);
    private static final long LONGEST_MEANT_MILLIS = LONGEST_MEANT.toMillis();
    /** What a value that cannot be meant asks for, to tell it from a readable one. */
    private static final long UNMEANT = -1;
    /** A reported value is cut to this many characters: it is the provider's, not ours. */
    private static final int REPORTED_LENGTH = 64;

    /** RFC 850's date but for its two-digit year, which depends on the current year. */
    private static final String RFC_850_DAY = "EEEE, dd-MMM-";
    private static final DateTimeFormatter ASCTIME = new DateTimeFormatterBuilder().parseCaseInsensitive()
            .appendPattern("EEE MMM ppd HH:mm:ss uuuu").toFormatter(Locale.ENGLISH);

    private ProviderPause() {
    }

    /**
     * @param header    a response header's value by name, whatever its case; {@code null} if absent
     * @param nowMillis the epoch millisecond of the answer, for dates
     * @param unmeant   told the first header that asks for a pause that cannot be meant, as
     *                  {@code Name: value} (the value cut to 64 printable characters)
     */
    static Duration requested(int status, Function<String, String> header, long nowMillis, Consumer<String> unmeant) {
        long millis = 0;
        String bad = null;
        if (status == 429 || status == 503) {
            String value = header.apply("Retry-After");
            long asked = value == null ? 0 : retryAfter(value, nowMillis);
            bad = asked == UNMEANT ? "Retry-After: " + value : null;
            millis = Math.max(millis, asked);
        }
        String structured = header.apply("RateLimit");
        if (structured != null) {
            long asked = structured(structured, nowMillis);
            bad = bad == null && asked == UNMEANT ? "RateLimit: " + structured : bad;
            millis = Math.max(millis, asked);
        }
        for (String prefix : new String[] {"", "X-"}) {
            String reset = header.apply(prefix + "RateLimit-Reset");
            long asked = legacy(header.apply(prefix + "RateLimit-Remaining"), reset, nowMillis);
            bad = bad == null && asked == UNMEANT ? prefix + "RateLimit-Reset: " + reset : bad;
            millis = Math.max(millis, asked);
        }
        if (bad != null) {
            unmeant.accept(printable(bad));
        }
        return Duration.ofMillis(millis);
    }

    private static long retryAfter(String value, long nowMillis) {
        long millis = millis(value);
        if (millis >= 0) {
            return meant(millis);
        }
        Instant at = httpDate(value.trim(), nowMillis);
        return at == null ? 0 : meant(Math.max(0, at.toEpochMilli() - nowMillis));
    }

    /** An HTTP date in any of its three formats (RFC 9110, section 5.6.7), or {@code null}. */
    private static Instant httpDate(String value, long nowMillis) {
        try {
            return ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT)).toInstant();
        } catch (DateTimeParseException notImfFixdate) {
            // the obsolete formats, tried only when the current one fails
        }
        try {
            if (value.indexOf('-') > 0) {
                return LocalDateTime.parse(value, rfc850(nowMillis)).toInstant(ZoneOffset.UTC);
            }
            return LocalDateTime.parse(value, ASCTIME).toInstant(ZoneOffset.UTC);
        } catch (DateTimeParseException unreadable) {
            return null;
        }
    }

    /**
     * RFC 850's format: its two-digit year is the one from 49 years before now to 50 after (a
     * year that would be more than 50 years ahead is the most recent past one with those digits).
     */
    private static DateTimeFormatter rfc850(long nowMillis) {
        int year = Instant.ofEpochMilli(nowMillis).atOffset(ZoneOffset.UTC).getYear();
        return new DateTimeFormatterBuilder().parseCaseInsensitive().appendPattern(RFC_850_DAY)
                .appendValueReduced(ChronoField.YEAR, 2, 2, year - 49).appendPattern(" HH:mm:ss 'GMT'")
                .toFormatter(Locale.ENGLISH);
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
                String number = parameter.substring(eq + 1);
                switch (name) {
                    case "r" -> r = seconds(number);
                    case "t" -> t = millis(number);
                    case "remaining" -> remaining = seconds(number);
                    case "reset" -> reset = millis(number);
                    default -> { }
                }
            }
            if (r == 0 && t >= 0) {
                if (meant(t) == UNMEANT) {
                    return UNMEANT;
                }
                millis = Math.max(millis, t);
            }
        }
        if (remaining == 0 && reset >= 0) {
            long asked = reset(reset, nowMillis);
            return asked == UNMEANT ? UNMEANT : Math.max(millis, asked);
        }
        return millis;
    }

    private static long legacy(String remaining, String reset, long nowMillis) {
        if (remaining == null || reset == null || seconds(remaining) != 0) {
            return 0;
        }
        long millis = millis(reset);
        return millis < 0 ? 0 : reset(millis, nowMillis);
    }

    /** A reset of {@code millis}: the time until it when it is an epoch, else itself; unmeant beyond a year. */
    private static long reset(long millis, long nowMillis) {
        return meant(millis > EPOCH_SECONDS * 1_000 ? Math.max(0, millis - nowMillis) : millis);
    }

    private static long meant(long millis) {
        return millis > LONGEST_MEANT_MILLIS ? UNMEANT : millis;
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

    /**
     * A non-negative number of seconds, whole or with a fraction ({@code 1800000060.5}), in
     * milliseconds rounded up (a pause is never cut short); -1 if it is none.
     */
    private static long millis(String value) {
        String trimmed = value.trim();
        int dot = trimmed.indexOf('.');
        String whole = dot < 0 ? trimmed : trimmed.substring(0, dot);
        String fraction = dot < 0 ? "" : trimmed.substring(dot + 1);
        if (whole.isEmpty() || !fraction.chars().allMatch(Character::isDigit) || (dot >= 0 && fraction.isEmpty())) {
            return -1;
        }
        long seconds = seconds(whole);
        if (seconds < 0) {
            return -1;
        }
        if (seconds >= Long.MAX_VALUE / 1_000 - 1) {
            return Long.MAX_VALUE / 1_000;
        }
        long millis = seconds * 1_000;
        String first = (fraction + "000").substring(0, 3);
        millis += Long.parseLong(first);
        return fraction.length() > 3 && !fraction.substring(3).chars().allMatch(c -> c == '0') ? millis + 1 : millis;
    }

    /** {@code text} cut to {@link #REPORTED_LENGTH} characters, anything unprintable as {@code ?}: it goes to a log. */
    private static String printable(String text) {
        StringBuilder printable = new StringBuilder(Math.min(text.length(), REPORTED_LENGTH + 3));
        for (int i = 0; i < text.length() && i < REPORTED_LENGTH; i++) {
            char c = text.charAt(i);
            printable.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return text.length() > REPORTED_LENGTH ? printable.append("...").toString() : printable.toString();
    }
}
