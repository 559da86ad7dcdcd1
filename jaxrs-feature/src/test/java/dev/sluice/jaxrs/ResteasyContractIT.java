package dev.sluice.jaxrs;

import jakarta.ws.rs.core.Application;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.jboss.resteasy.plugins.server.servlet.HttpServletDispatcher;

/** The JAX-RS contract on RESTEasy's {@code HttpServletDispatcher}. */
class ResteasyContractIT extends JaxRsContract {

    @Override
    ServletHolder servlet(Class<? extends Application> application, String prefix) {
        ServletHolder holder = new ServletHolder(HttpServletDispatcher.class);
        holder.setInitParameter("jakarta.ws.rs.Application", application.getName());
        holder.setInitParameter("resteasy.servlet.mapping.prefix", prefix);
        return holder;
    }
}
