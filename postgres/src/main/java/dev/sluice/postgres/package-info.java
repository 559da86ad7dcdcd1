/**
 * The Postgres store: one row per caller and limit in {@code sluice_rate_state}, computed by
 * Sluice's Java arithmetic ({@code dev.sluice.spi.algorithm}) and written by compare-and-swap on
 * a version column, on the database's clock; the tables' SQL ({@code schema.sql}) is a resource
 * beside this package.
 */
package dev.sluice.postgres;
