package dev.sluice.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * When a route's rate limits charge a request ({@code charge}, {@code charge-when}). With
 * {@code charge=before} (the default) every admitted request is charged as it is decided. With
 * {@code charge=after} a request is still decided up front, and so refused only when the budget is
 * already spent (counting the requests in flight), but once its response status is known it is
 * refunded unless that status is in {@code charge-when} (default {@value #DEFAULT_WHEN}: every
 * client or server error): a login route with {@code charge-when=401,403} counts failed attempts
 * only. A response that ends in an exception counts as 500, unless its status was already sent (the
 * response committed): the status the client received decides.
 *
 * @param after whether charging waits for the response status
 * @param when  the statuses that are charged, as inclusive ranges; empty with {@code before}
 */
public record Charging(boolean after, List<Charging.Range> when) {

    /** {@code charge-when} when {@code charge=after} names none: every client and server error. */
    public static final String DEFAULT_WHEN = "4xx,5xx";
    /** Today's default: charged as decided. */
    public static final Charging BEFORE = new Charging(false, List.of());

    /**
     * Statuses {@code from} to {@code to}, inclusive: one code ({@code 401}) or a class ({@code 4xx}).
     *
     * @param from the lowest status
     * @param to   the highest status
     */
    public record Range(int from, int to) {
        @Override
        public String toString() {
            return from == to ? Integer.toString(from) : from / 100 + "xx";
        }
    }

    /** Validates and copies the components. */
    public Charging {
        when = List.copyOf(when);
        if (after == when.isEmpty()) {
            throw new IllegalArgumentException("'charge-when' must name statuses exactly with charge=after");
        }
    }

    /**
     * Reads {@code charge} and {@code charge-when} ({@code null} or blank: absent).
     *
     * @throws IllegalArgumentException naming the parameter and the value: {@code charge} other than
     *                                  {@code before} or {@code after}; {@code charge-when} without
     *                                  {@code charge=after}, or not a list of status codes (100 to 599)
     *                                  and classes ({@code 1xx} to {@code 5xx})
     */
    public static Charging parse(String charge, String chargeWhen) {
        String mode = charge == null || charge.isBlank() ? "before" : charge.trim().toLowerCase(Locale.ROOT);
        boolean blankWhen = chargeWhen == null || chargeWhen.isBlank();
        if (mode.equals("before")) {
            if (!blankWhen) {
                throw new IllegalArgumentException("'charge-when' applies only with charge=after, got '"
                        + chargeWhen.trim()
                        + "'");
            }
            return BEFORE;
        }
        if (!mode.equals("after")) {
            throw new IllegalArgumentException("'charge' must be before or after, got '" + charge.trim() + "'");
        }
        return new Charging(true, parseWhen(blankWhen ? DEFAULT_WHEN : chargeWhen.trim()));
    }

    private static List<Range> parseWhen(String value) {
        List<Range> ranges = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String token = part.trim().toLowerCase(Locale.ROOT);
            Range range = null;
            if (token.matches("[1-5]xx")) {
                int base = (token.charAt(0) - '0') * 100;
                range = new Range(base, base + 99);
            } else if (token.matches("[1-5][0-9][0-9]")) {
                range = new Range(Integer.parseInt(token), Integer.parseInt(token));
            }
            if (range == null) {
                throw new IllegalArgumentException("'charge-when' must be comma-separated status codes (100 to 599) or "
                        + "classes (1xx to 5xx), such as 401,403 or 4xx, got '" + value + "'");
            }
            ranges.add(range);
        }
        return ranges;
    }

    /**
     * Whether a response of {@code status} is charged: always with {@code before}; with {@code after}, if in
     * {@code when}.
     */
    public boolean counts(int status) {
        if (!after) {
            return true;
        }
        for (Range range : when) {
            if (status >= range.from && status <= range.to) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return after ? "charge after, when " + String.join(",", when.stream().map(Range::toString).toList())
                : "charge before";
    }
}
