package dev.sluice.web.internal;

import dev.sluice.web.RequestAttributes;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Function;

/**
 * How an adapter answers a request it refuses (429, or 503 when a closed route's store cannot
 * decide), the {@code reject} parameter. The status, {@code Retry-After} and the rate-limit headers
 * are the same in every form; what differs is who writes the body.
 */
public enum Rejection {
    /** {@code problem}, the default: Sluice answers with an RFC 9457 {@code application/problem+json} body. */
    PROBLEM("problem"),
    /**
     * {@code send-error} (servlet filter): Sluice sets the headers, then calls
     * {@code sendError(status)}, so the application's {@code <error-page>} (or Spring Boot's
     * {@code /error}) writes the body, reading the request attributes of {@link RequestAttributes}.
     */
    SEND_ERROR("send-error"),
    /**
     * {@code exception} (JAX-RS feature): Sluice throws an exception carrying the decision, the
     * status and the headers, so the application's {@code ExceptionMapper} writes the response.
     */
    EXCEPTION("exception");

    private final String configName;

    Rejection(String configName) {
        this.configName = configName;
    }

    /** The value of {@code reject}: {@code problem}, {@code send-error} or {@code exception}. */
    public String configName() {
        return configName;
    }

    /**
     * Parses {@code reject} from raw values ({@code null} or blank: {@link #PROBLEM}), accepting the
     * forms the adapter can give.
     *
     * @param lookup  the raw values, e.g. {@code filterConfig::getInitParameter}
     * @param adapter the adapter, for the message, such as {@code a servlet filter}
     * @param forms   the forms the adapter gives; {@link #PROBLEM} among them
     * @throws ParameterException naming {@code 'reject'}, the value and the forms the adapter gives
     */
    public static Rejection parse(Function<String, String> lookup, String adapter, Rejection... forms) {
        return Parameter.REJECT.parse(lookup, value -> {
            String normal = value.toLowerCase(Locale.ROOT);
            for (Rejection form : forms) {
                if (form.configName.equals(normal)) {
                    return form;
                }
            }
            String known = String.join(" or ", Arrays.stream(forms).map(Rejection::configName).toList());
            boolean other = Arrays.stream(values()).anyMatch(r -> r.configName.equals(normal));
            throw new IllegalArgumentException("'reject' must be " + known + (other ? " in " + adapter + " ('"
                    + normal + "' is for the other adapter)" : "") + ", got '" + value + "'");
        }, PROBLEM);
    }
}
