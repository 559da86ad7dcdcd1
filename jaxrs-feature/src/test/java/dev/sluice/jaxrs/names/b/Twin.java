package dev.sluice.jaxrs.names.b;

import dev.sluice.jaxrs.RateLimit;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;

/** Same simple name and method as {@link dev.sluice.jaxrs.names.a.Twin}, in another package. */
@Path("/b/twin")
public class Twin {
    @GET
    @RateLimit(limit = "2/1m", key = "header:X-Client")
    public String get() {
        return "b";
    }
}
