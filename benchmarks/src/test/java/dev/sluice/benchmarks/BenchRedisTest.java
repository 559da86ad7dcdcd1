package dev.sluice.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The launcher hands the Redis URL to every forked JVM on its command line, and JMH prints each
 * fork's "VM options": a password in {@code REDIS_URL} or in {@code -Dsluice.bench.redis} would
 * reach the run's output. It is refused, and the refusal names where the URL came from and shows it
 * redacted.
 */
class BenchRedisTest {

    @Test
    void aRedisUrlWithAPasswordIsRefusedWithoutShowingIt() {
        assertThatThrownBy(() -> BenchRedis.withoutSecrets("REDIS_URL", "redis://app:s3cret@10.0.0.7:6379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("REDIS_URL 'redis://app:***@10.0.0.7:6379' carries a password")
                .message().doesNotContain("s3cret");
        assertThatThrownBy(() -> BenchRedis.withoutSecrets("REDIS_URL", "redis://10.0.0.7:6379?password=s3cret"))
                .message().contains("password=***").doesNotContain("s3cret");
        // Given straight to the launcher, the URL would reach JMH's printed "VM options" the same way.
        assertThatThrownBy(() -> BenchRedis.withoutSecrets("-Dsluice.bench.redis", "redis://:s3cret@127.0.0.1:6379"))
                .hasMessageStartingWith("-Dsluice.bench.redis 'redis://:***@127.0.0.1:6379' carries a password")
                .message().doesNotContain("s3cret");
    }

    @Test
    void aRedisUrlWithoutSecretsIsKept() {
        assertThat(BenchRedis.withoutSecrets("REDIS_URL", "redis://127.0.0.1:6379"))
                .isEqualTo("redis://127.0.0.1:6379");
    }
}
