/**
 * The Redis store: one atomic Lua script ({@code decide.lua}, a resource beside this package) per
 * decision, sent by Redisson with EVALSHA, on the Redis server's clock, with hash-tagged keys that
 * all carry a TTL.
 */
package dev.sluice.redis;
