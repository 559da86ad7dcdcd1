package dev.sluice;

/**
 * The state of a limiter's circuit breaker on its store, as {@link DecisionListener#onCircuit}
 * hears its changes.
 */
public enum CircuitState {
    /** The store is asked for every decision. */
    CLOSED,
    /** After repeated failures the store is not asked: decisions follow the failure mode at once. */
    OPEN,
    /** Open, with one probe sent to the store: its answer closes the circuit, its failure opens it again. */
    HALF_OPEN
}
