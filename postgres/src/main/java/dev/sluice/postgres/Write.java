package dev.sluice.postgres;

/**
 * One row to write by compare-and-swap: {@code next} replaces the row that {@code read} was, or
 * is inserted where there was none; {@code expiresAt} in microseconds.
 */
record Write(String key, Row read, long[] next, long expiresAt) {
}
