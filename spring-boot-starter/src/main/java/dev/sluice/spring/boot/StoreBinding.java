package dev.sluice.spring.boot;

/**
 * Puts stores the application owns into Sluice's store registry before any limiter acquires one;
 * idempotent. An interface so that classes without Redisson on the class path never load its
 * implementation ({@link RedissonClientStores}).
 */
interface StoreBinding {

    /** Binds the stores, once. */
    void bind();
}
