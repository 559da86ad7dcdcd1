package dev.sluice.jaxrs;

import jakarta.ws.rs.core.Application;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.glassfish.jersey.servlet.ServletContainer;

/** The JAX-RS contract on Jersey's servlet container. */
class JerseyContractIT extends JaxRsContract {

    @Override
    ServletHolder servlet(Class<? extends Application> application, String prefix) {
        ServletHolder holder = new ServletHolder(ServletContainer.class);
        holder.setInitParameter("jakarta.ws.rs.Application", application.getName());
        return holder;
    }
}
