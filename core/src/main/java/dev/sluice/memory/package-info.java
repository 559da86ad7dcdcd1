/**
 * The in-memory store: state in this JVM, bounded by a Caffeine cache, one per-caller atomic
 * update per decision. It runs the algorithms of {@link dev.sluice.spi.algorithm} on each caller's
 * states under that caller's lock; the Redis scripts compute the same, held to identical decisions
 * by the conformance suite.
 */
package dev.sluice.memory;
