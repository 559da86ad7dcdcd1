package dev.sluice.redis;

/**
 * {@code size} identical requests of one caller under one set of limits ({@code key}), decided one
 * after another in one script call: what the {@link Coalescer} gathers and {@link DecideScript}
 * encodes.
 */
record Batch(StorageKey key, int size) {
}
