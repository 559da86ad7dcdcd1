/**
 * Implementation shared by Sluice's modules (fixed-point units, keys, caller resolution, HTTP
 * answers, shared stores). Not API: anything here may change in any release.
 */
package dev.sluice.internal;
