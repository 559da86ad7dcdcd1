package dev.sluice.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Store values as logs and messages show them: the user-info's secret replaced by {@code ***}. */
class SecretsTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "redis://app:s3cret@host:6379|redis://app:***@host:6379",
            "rediss://app:s3cret@host:6380/2|rediss://app:***@host:6380/2",
            "redis://:s3cret@host|redis://:***@host",
            "redis://s3cret@host|redis://***@host",
            "redis://app:s3c@ret@host:6379|redis://app:***@host:6379",
            "redis://app:s3c/ret@host:6379|redis://app:***@host:6379",
            "redis://app:s3cret@host:6379/0?password=s3cret|redis://app:***@host:6379/0?password=***",
            "redis://host:6379?user=app&password=s3cret&db=1|redis://host:6379?user=app&password=***&db=1",
            "redis//app:s3cret@host|redis//app:***@host",
            "mongodb://app:s3cret@host|mongodb://app:***@host",
            "redis://host:6379/1|redis://host:6379/1",
            "memory|memory",
            "redisson:/etc/app/redis.yaml|redisson:/etc/app/redis.yaml",
    })
    void theSecretIsReplaced(String store, String shown) {
        assertThat(Secrets.redact(store)).isEqualTo(shown).doesNotContain("s3c");
    }

    @Test
    void blankAndNullStayWhatTheyAre() {
        assertThat(Secrets.redact("")).isEmpty();
        assertThat(Secrets.redact(null)).isEqualTo("null");
    }
}
