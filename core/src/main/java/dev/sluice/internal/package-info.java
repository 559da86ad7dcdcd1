/**
 * The lowest layer, shared by Sluice's modules and free of Sluice's own types: the vocabulary's
 * durations and rates, fixed-point units, storage keys, the decision timer, the failure of a
 * store that cannot read one caller's state. The API builds on it; it builds on nothing of
 * Sluice's, so no package cycle can pass through it. Nothing here is HTTP. Not API: anything here
 * may change in any release.
 */
package dev.sluice.internal;
