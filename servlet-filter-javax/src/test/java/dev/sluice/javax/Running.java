package dev.sluice.javax;

import java.net.URI;

/** A started web application; closing it stops the server and destroys the filters. */
interface Running extends AutoCloseable {

    URI uri(String path);

    @Override
    void close();
}
