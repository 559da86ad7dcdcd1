package dev.sluice.web.internal;

/**
 * A bad value of one {@link Parameter}. The message names the parameter and the raw value
 * ({@code 'timeout' must be between 1ms and 1m, got '0ms'}); adapters prefix where the value came
 * from, such as {@code JAX-RS property 'sluice.timeout': }, which needs {@link #parameter()}.
 *
 * <p>Not API: this package may change in any release.
 */
public final class ParameterException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final Parameter parameter;

    ParameterException(Parameter parameter, IllegalArgumentException cause) {
        super(cause.getMessage(), cause);
        this.parameter = parameter;
    }

    /** The parameter whose value is bad. */
    public Parameter parameter() {
        return parameter;
    }
}
