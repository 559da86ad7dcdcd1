/**
 * The in-memory store: state in this JVM, bounded by a Caffeine cache, one per-caller atomic
 * update per decision. Its algorithms are the Java twins of the Redis script, held to identical
 * decisions by the conformance suite.
 */
package dev.sluice.memory;
