package dev.sluice.outbound;

/**
 * How urgent an outbound call is, for {@link Permits} built with a
 * {@linkplain Permits.Builder#highPriorityShare high-priority share}: {@link #HIGH} for calls
 * someone waits on (interactive), {@link #LOW} for calls that can wait (batch jobs, backfills).
 * A call that names no priority is {@link #HIGH}: only calls marked {@link #LOW} are held in the
 * low-priority lane. Without a share, both are served alike.
 */
public enum Priority {
    /** Books the shared limit directly; never queued behind more than the lane's burst of {@link #LOW} calls. */
    HIGH,
    /** Waits first in the low-priority lane (the limit scaled by one minus the share), then books the shared limit. */
    LOW
}
