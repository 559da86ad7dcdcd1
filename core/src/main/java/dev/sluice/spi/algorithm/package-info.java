/**
 * The arithmetic of each rate algorithm, one class per algorithm, for store authors: pure functions
 * of a stored state, an instant and a cost, so that any store able to read a value and write it
 * back atomically (a lock in memory, a compare-and-swap on a database row or a versioned Redis
 * string) decides exactly as the memory store and the Lua scripts do.
 *
 * <p>Units: every time is an integer number of microseconds on the store's clock; bucket levels are
 * fixed-point units ({@link dev.sluice.spi.CompiledLimit#unitsPerToken()}); window counts and log
 * entries are whole units. Sums and products that a year of idle time could overflow saturate or are
 * compared without the product.
 *
 * <p>State: a {@code long[]} whose layout each algorithm documents, a few longs (the sliding log: two
 * more than its entries); an all-zero array is the absent state (a key never written, or expired).
 * Encode it as those longs; the functions never read a clock and never write the array they are
 * given unless it is passed again as the one to write ({@code into}), which the memory store does
 * under its per-caller lock to allocate nothing per decision.
 *
 * <p>Entry point: {@link dev.sluice.spi.algorithm.RateAlgorithm#of(dev.sluice.spi.CompiledLimit)}.
 * Adding an algorithm is one class here and its case there.
 */
package dev.sluice.spi.algorithm;
