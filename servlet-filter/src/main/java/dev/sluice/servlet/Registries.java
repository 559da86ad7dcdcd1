package dev.sluice.servlet;

import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.PolicyRegistry;
import jakarta.servlet.ServletContext;

/** The application's {@link PolicyRegistry}, kept in its {@code ServletContext}, created on first use. */
final class Registries {

    private Registries() {
    }

    /** The registry of {@code context}'s application. */
    static ApplicationPolicies of(ServletContext context) {
        synchronized (Registries.class) {
            if (context.getAttribute(PolicyRegistry.ATTRIBUTE) instanceof ApplicationPolicies known) {
                return known;
            }
            ApplicationPolicies created = new ApplicationPolicies();
            context.setAttribute(PolicyRegistry.ATTRIBUTE, created);
            return created;
        }
    }
}
