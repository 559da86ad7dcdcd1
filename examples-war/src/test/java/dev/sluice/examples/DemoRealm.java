package dev.sluice.examples;

import org.eclipse.jetty.security.HashLoginService;
import org.eclipse.jetty.security.UserStore;
import org.eclipse.jetty.util.security.Password;

/**
 * The realm of the WAR's BASIC login (its console at {@code /sluice/}): one demo user in role
 * {@code sluice-admin}, never for production. Every Jetty that deploys the WAR needs it, since a
 * {@code <login-config>} without a login service fails the deployment.
 */
final class DemoRealm {

    static final String USER = "admin";
    static final String PASSWORD = "demo";

    private DemoRealm() {
    }

    static HashLoginService create() {
        HashLoginService realm = new HashLoginService("Sluice demo");
        UserStore users = new UserStore();
        users.addUser(USER, new Password(PASSWORD), new String[] {"sluice-admin"});
        realm.setUserStore(users);
        return realm;
    }
}
