package dev.sluice.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The launcher hands the Redis URL to every forked JVM on its command line, and JMH prints each
 * fork's "VM options": a password in {@code REDIS_URL} would reach the run's output. It is refused,
 * and the refusal shows the URL redacted.
 */
class BenchRedisTest {

    @Test
    void aRedisUrlWithAPasswordIsRefusedWithoutShowingIt() {
        assertThatThrownBy(() -> BenchRedis.withoutSecrets("redis://app:s3cret@10.0.0.7:6379"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("REDIS_URL 'redis://app:***@10.0.0.7:6379' carries a password")
                .message().doesNotContain("s3cret");
        assertThatThrownBy(() -> BenchRedis.withoutSecrets("redis://10.0.0.7:6379?password=s3cret"))
                .message().contains("password=***").doesNotContain("s3cret");
    }

    @Test
    void aRedisUrlWithoutSecretsIsKept() {
        assertThat(BenchRedis.withoutSecrets("redis://127.0.0.1:6379")).isEqualTo("redis://127.0.0.1:6379");
    }
}
