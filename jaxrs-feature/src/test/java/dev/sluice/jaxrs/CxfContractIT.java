package dev.sluice.jaxrs;

import jakarta.ws.rs.core.Application;
import org.apache.cxf.jaxrs.servlet.CXFNonSpringJaxrsServlet;
import org.eclipse.jetty.ee11.servlet.ServletHolder;

/** The JAX-RS contract on Apache CXF's {@code CXFNonSpringJaxrsServlet}. */
class CxfContractIT extends JaxRsContract {

    @Override
    ServletHolder servlet(Class<? extends Application> application, String prefix) {
        ServletHolder holder = new ServletHolder(CXFNonSpringJaxrsServlet.class);
        holder.setInitParameter("jakarta.ws.rs.Application", application.getName());
        return holder;
    }
}
