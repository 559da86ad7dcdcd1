package dev.sluice.spring.boot;

import java.util.List;

/**
 * What owns limiters on the application's stores (filters, {@code @RateLimit} handlers): their
 * circuits, which the health contributor {@code sluice} reads when it is asked.
 */
interface StoreCircuits {

    /** The circuits of the limiters built so far. */
    List<FilterRegistrations.Circuit> circuits();
}
