package dev.sluice.tck;

import dev.sluice.spi.RateLimitStore;

/**
 * What a store may leave out of the {@link RateLimitStore} contract: each is a group of the kit's
 * tests (or a few tests of another group) that a store declares it does not support by overriding
 * {@link RateLimitStoreKit#supports(Capability)}. Those tests then do not run, and the kit checks
 * the gap instead: each operation of the capability must refuse with an
 * {@link UnsupportedOperationException} whose message names the store and the operation (as the
 * SPI's defaults do), leaving the caller's state as it was. Nothing is reported skipped.
 * {@link #GIVE_BACK} may also do nothing, as the SPI's default does, but never give back; a store
 * without {@link #CHANGED_LIMITS} must still decide under a changed limit, within it.
 *
 * <p>Deciding (every rate algorithm, one limit or several together) is not a capability: every
 * store must do it, and its groups always run.
 */
public enum Capability {

    /** Keeps a caller's state when its policy's limit changes (a redeploy, an override in the store). */
    CHANGED_LIMITS("a caller's state kept under a changed limit"),

    /** {@link RateLimitStore#refund}: a request's units given back (charge after the response). */
    REFUNDS("RateLimitStore.refund"),

    /** {@link RateLimitStore#acquireLease} and {@link RateLimitStore#releaseLease}: the concurrency algorithm. */
    LEASES("RateLimitStore.acquireLease and releaseLease"),

    /** {@link RateLimitStore#reserve} and {@link RateLimitStore#book}: waiting for a slot (outbound calls). */
    RESERVATIONS("RateLimitStore.reserve and book"),

    /** {@link RateLimitStore#giveBack}: a slot given up by its waiter goes to the next caller. */
    GIVE_BACK("RateLimitStore.giveBack"),

    /** {@link RateLimitStore#pause}: a provider's pause holds every reservation until it ends. */
    PAUSES("RateLimitStore.pause"),

    /** {@link RateLimitStore#reset}: a caller's budgets made whole (the console's reset). */
    RESETS("RateLimitStore.reset"),

    /** {@link RateLimitStore#overrides} and {@link RateLimitStore#putOverride}: limits an operator changed. */
    OVERRIDES("RateLimitStore.overrides and putOverride");

    private final String what;

    Capability(String what) {
        this.what = what;
    }

    /** What the capability covers, for the name of its refusals. */
    String what() {
        return what;
    }
}
