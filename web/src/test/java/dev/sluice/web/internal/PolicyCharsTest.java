package dev.sluice.web.internal;

import dev.sluice.Limit;
import dev.sluice.internal.PolicyChars;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Policies, default policy names and tier names are made of the one character set of {@link PolicyChars}. */
class PolicyCharsTest {

    private static boolean isPolicy(String name) {
        try {
            Limit.of(name, "5/1m");
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static boolean isTier(String name) {
        try {
            Tier.parseList(name + ":5/1m", Limit.of("p", "1/1m"));
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Test
    void limitsDefaultNamesAndTiersAcceptTheSameCharacters() {
        for (char c = 0; c < 0x250; c++) {
            String name = "a" + c + "b";
            boolean allowed = PolicyChars.allowed(c);
            assertThat(isPolicy(name)).as("policy %s", name).isEqualTo(allowed || c == '/');
            assertThat(PolicyNames.forFilter(name)).as("default of filter %s", name).isEqualTo(allowed ? name : "a-b");
            assertThat(isTier(name)).as("tier %s", name).isEqualTo(allowed);
        }
        assertThat(isPolicy("a".repeat(PolicyChars.MAX_LENGTH))).isTrue();
        assertThat(isPolicy("a".repeat(PolicyChars.MAX_LENGTH + 1))).isFalse();
        assertThat(isPolicy("a/b/c")).isFalse();
        assertThat(isPolicy("/b")).isFalse();
        assertThat(isPolicy("a/")).isFalse();
        // the tier's policy, "p/" and its name, is a policy too: at most 64 characters
        assertThat(isTier("t".repeat(PolicyChars.MAX_LENGTH - 2))).isTrue();
        assertThat(isTier("t".repeat(PolicyChars.MAX_LENGTH - 1))).isFalse();
    }
}
