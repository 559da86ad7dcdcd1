/**
 * JMH benchmarks of Sluice beside its peers, measured in one run against one Redis.
 *
 * <p>{@link dev.sluice.benchmarks.Main} is the entry point of {@code benchmarks.jar}: it starts a
 * Redis (or uses {@code REDIS_URL}), counts bytes and round trips per decision
 * ({@link dev.sluice.benchmarks.Footprint}), runs {@link dev.sluice.benchmarks.RedisBenchmark} and
 * {@link dev.sluice.benchmarks.MemoryBenchmark}, checks that the one-EVALSHA floor is a floor
 * (against a plain {@code evalSha} loop and {@code redis-benchmark}), and writes Markdown tables
 * of raw results, Sluice/peer ratios and per-iteration steadiness. Nothing here runs during
 * {@code mvn verify}; see {@code docs/benchmarks.md}.
 */
package dev.sluice.benchmarks;
