package dev.sluice.webflux;

import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.util.ClassUtils;

import java.security.Principal;

/**
 * A principal's roles as Spring Security grants them: the authority {@code ROLE_x} is the role
 * {@code x}, as {@code isUserInRole} reads them in a servlet application secured by Spring
 * Security. Touched only when Spring Security is on the class path, which it need not be.
 */
final class SecurityRoles {

    /** Whether Spring Security is on the class path. */
    static final boolean PRESENT = ClassUtils.isPresent("org.springframework.security.core.Authentication",
            SecurityRoles.class.getClassLoader());

    private static final String PREFIX = "ROLE_";

    private SecurityRoles() {
    }

    /** Whether {@code principal} is an {@code Authentication} granted the role {@code role}. */
    static boolean has(Principal principal, String role) {
        if (!(principal instanceof Authentication authentication) || role == null) {
            return false;
        }
        String wanted = PREFIX + role;
        for (GrantedAuthority authority : authentication.getAuthorities()) {
            if (wanted.equals(authority.getAuthority())) {
                return true;
            }
        }
        return false;
    }
}
