package dev.sluice.jaxrs;

import dev.sluice.Limit;
import dev.sluice.web.internal.PolicyNames;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The shape of default policy names at their edges; their use over HTTP is in {@link DefaultPolicyNamesTest}. */
class DefaultPolicyNameTest {

    @Test
    void aLongNameIsCutToFitAndKeepsItsHashAndSuffix() throws Exception {
        String base = "A".repeat(100) + ".get";
        String name = PolicyNames.forResourceMethod(base, "com.example.Long.get()", "-12");
        assertThat(name).hasSize(64).startsWith("AAAA").matches("A{52}~[0-9a-f]{8}-12");
        assertThat(Limit.of(name, "1/s").policy()).isEqualTo(name);
        // Another method cut to the same start stays apart.
        assertThat(PolicyNames.forResourceMethod(base, "com.example.Long.get(int)", "-12")).hasSize(64)
                .isNotEqualTo(name);
    }

    @Test
    void charactersOutsideThePolicyCharsetAreReplaced() {
        String name = PolicyNames.forResourceMethod("Ünïcode$Inner.get", "x.Ünïcode$Inner.get()", "");
        assertThat(name).matches("_n_code_Inner\\.get~[0-9a-f]{8}");
        assertThat(Limit.of(name, "1/s").policy()).isEqualTo(name);
    }

    @Test
    void theSignatureNamesTheClassTheMethodAndTheParameterTypes() throws Exception {
        assertThat(PolicyNames.signature(Resources.Overloads.class,
                Resources.Overloads.class.getMethod("item", String.class, int.class)))
                .isEqualTo("dev.sluice.jaxrs.Resources$Overloads.item(java.lang.String,int)");
        assertThat(PolicyNames.signature(DefaultPolicyNameTest.class,
                DefaultPolicyNameTest.class.getDeclaredMethod("arrays", String[].class, long[][].class)))
                .isEqualTo("dev.sluice.jaxrs.DefaultPolicyNameTest.arrays(java.lang.String[],long[][])");
    }

    @SuppressWarnings("unused")
    private static void arrays(String[] a, long[][] b) {
    }
}
