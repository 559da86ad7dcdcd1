package dev.sluice.examples;

import java.net.URI;

/** The examples WAR running in some container; {@link #close()} undeploys it and stops the container. */
interface Deployed extends AutoCloseable {

    /** {@code http://127.0.0.1:<port>/}. */
    URI base();

    @Override
    void close();
}
