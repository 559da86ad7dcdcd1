/**
 * The store test kit: the contract every {@link dev.sluice.spi.RateLimitStore} meets, as JUnit 5
 * tests a third-party store inherits. Add {@code dev.sluice:sluice-store-tck} with test scope,
 * then extend {@link dev.sluice.tck.RateLimitStoreKit}:
 *
 * <pre>{@code
 * class MyStoreKitTest extends RateLimitStoreKit {
 *     @Override
 *     protected RateLimitStore newStore(TimeSource time) {
 *         return MyStore.builder().timeSource(time).build(); // the kit moves the time
 *     }
 *
 *     @Override
 *     protected boolean supports(Capability capability) {
 *         return capability != Capability.LEASES; // then leases must be refused, clearly
 *     }
 * }
 * }</pre>
 *
 * <p>The tests come in groups by {@link dev.sluice.tck.Capability}; deciding every rate algorithm,
 * under one limit or several, is no capability and always runs. A group whose capability the store
 * leaves out does not run; its refusal is checked instead, so the kit reports nothing skipped.
 */
package dev.sluice.tck;
