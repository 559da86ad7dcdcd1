package dev.sluice.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;

/**
 * Turns a bad {@code sluice.*} property into Spring Boot's "APPLICATION FAILED TO START" report:
 * the problem, the property, its value (a password masked) and where it was set, and the fix.
 * Registered in {@code META-INF/spring.factories}; ahead of Spring Boot's own analyzers, which would
 * otherwise describe the servlet container that failed to start instead.
 */
final class SluiceFailureAnalyzer extends AbstractFailureAnalyzer<SluiceConfigurationException> implements Ordered {

    SluiceFailureAnalyzer() {
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, SluiceConfigurationException cause) {
        StringBuilder description = new StringBuilder("Sluice's configuration is invalid: ")
                .append(cause.getMessage()).append("\n\n    Property: ").append(cause.property());
        if (cause.value() != null) {
            description.append("\n    Value: \"").append(cause.value()).append('"');
        }
        if (cause.origin() != null) {
            description.append("\n    Origin: ").append(cause.origin());
        }
        return new FailureAnalysis(description.toString(), cause.action(), cause);
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
