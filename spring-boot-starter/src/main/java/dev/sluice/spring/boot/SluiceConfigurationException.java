package dev.sluice.spring.boot;

/**
 * A {@code sluice.*} property that stops start-up: an unknown name or a bad value. It carries the
 * property, the value as shown (a password in a store URI masked), where it came from and the fix,
 * for {@link SluiceFailureAnalyzer} to print in Spring Boot's "APPLICATION FAILED TO START" report.
 */
final class SluiceConfigurationException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String property;
    private final String value;
    private final String origin;
    private final String action;

    /**
     * @param message  the problem, naming the property and the value
     * @param property the property as the application wrote it, such as {@code sluice.failure.mode}
     * @param value    the value, with any password masked; {@code null} when unknown
     * @param origin   where it was set (a file and line, an environment variable); {@code null} when unknown
     * @param action   what to do about it
     */
    SluiceConfigurationException(String message, String property, String value, String origin, String action,
                                 Throwable cause) {
        super(message, cause);
        this.property = property;
        this.value = value;
        this.origin = origin;
        this.action = action;
    }

    String property() {
        return property;
    }

    String value() {
        return value;
    }

    String origin() {
        return origin;
    }

    String action() {
        return action;
    }
}
