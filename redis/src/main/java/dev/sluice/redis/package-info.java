/**
 * The Redis store: one atomic Lua script ({@code decide.lua}, a resource beside this package) per
 * decision, sent with EVALSHA, on the Redis server's clock, with hash-tagged keys that all carry a
 * TTL; by Redisson ({@link dev.sluice.redis.RedisStore}) or by Lettuce
 * ({@link dev.sluice.redis.LettuceStore}), the same scripts and the same Java side of them either way.
 */
package dev.sluice.redis;
