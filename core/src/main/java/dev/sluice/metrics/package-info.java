/**
 * Optional metrics: {@link dev.sluice.metrics.MicrometerMetrics} publishes decisions to
 * Micrometer when it is on the class path.
 */
package dev.sluice.metrics;
