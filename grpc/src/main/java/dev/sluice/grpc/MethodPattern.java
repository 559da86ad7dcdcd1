package dev.sluice.grpc;

import java.util.regex.Pattern;

/**
 * Which calls a policy covers, by the method's full name: one method ({@code pkg.Service/Method}),
 * every method of a service ({@code pkg.Service/*}, or {@code pkg.Service} alone), or every call
 * ({@code *}). Immutable.
 *
 * @param service the full service name, or {@code null} for every call
 * @param method  the method's simple name, or {@code null} for every method of {@link #service}
 */
record MethodPattern(String service, String method) {

    private static final Pattern SERVICE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*");
    private static final Pattern METHOD = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /**
     * Parses {@code text}.
     *
     * @throws IllegalArgumentException naming the value when it is none of the four forms
     */
    static MethodPattern parse(String text) {
        String trimmed = text == null ? "" : text.trim();
        if (trimmed.equals("*")) {
            return new MethodPattern(null, null);
        }
        int slash = trimmed.indexOf('/');
        String service = slash < 0 ? trimmed : trimmed.substring(0, slash);
        String method = slash < 0 ? "*" : trimmed.substring(slash + 1);
        if (!SERVICE.matcher(service).matches() || !(method.equals("*") || METHOD.matcher(method).matches())) {
            throw new IllegalArgumentException("a gRPC method must look like package.Service/Method,"
                    + " package.Service/* or *, got '" + text + "'");
        }
        return new MethodPattern(service, method.equals("*") ? null : method);
    }

    /** The pattern as written in its canonical form, such as {@code pkg.Service/*}. */
    @Override
    public String toString() {
        return service == null ? "*" : service + "/" + (method == null ? "*" : method);
    }

    /**
     * The default {@code policy} of the pattern's limits: {@code pkg.Service.Method},
     * {@code pkg.Service}, or {@code grpc} for every call.
     */
    String policyName() {
        return service == null ? "grpc" : method == null ? service : service + "." + method;
    }
}
