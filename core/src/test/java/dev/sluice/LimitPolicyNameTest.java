package dev.sluice;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Policy names: the set of characters, and one {@code /} between two names for a tier's policy. */
class LimitPolicyNameTest {

    @ParameterizedTest
    @ValueSource(strings = {"api", "Orders.get~1a2b3c4d", "a-b_c.d~e", "api/premium", "a/b"})
    void namesOfTheSetAndTierNamesAreAccepted(String policy) {
        assertThat(Limit.of(policy, "1/s").policy()).isEqualTo(policy);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "has space", "{tag}", "a:b", "/api", "api/", "a//b", "a/b/c"})
    void othersAreRefusedNamingTheValue(String policy) {
        assertThatThrownBy(() -> Limit.of(policy, "1/s"))
                .hasMessageStartingWith("'policy' must be 1 to 64 characters of A-Z a-z 0-9 . _ ~ -")
                .hasMessageEndingWith("got '" + policy + "'");
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 65})
    void sixtyFourCharactersAtMostWithTheSlash(int length) {
        String policy = "p".repeat(length - 9) + "/" + "premium1";
        if (length <= 64) {
            assertThat(Limit.of(policy, "1/s").policy()).hasSize(length);
        } else {
            assertThatThrownBy(() -> Limit.of(policy, "1/s")).hasMessageContaining("'policy' must be 1 to 64");
        }
    }
}
