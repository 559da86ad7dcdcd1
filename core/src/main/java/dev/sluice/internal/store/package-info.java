/**
 * Building blocks for {@link dev.sluice.RateLimitStore} implementations, shared by the in-memory
 * and Redis stores: a limit compiled once per instance ({@link dev.sluice.internal.store.CompiledLimit}),
 * the storage key of a limit's state ({@link dev.sluice.internal.store.LimitKeys}) and a local copy
 * of rejections any remote store can sit behind ({@link dev.sluice.internal.store.RejectionCache}).
 *
 * <p>Sits above the API and below the stores. Not API: this package may change in any release.
 */
package dev.sluice.internal.store;
