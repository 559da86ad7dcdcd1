package dev.sluice.benchmarks;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The outbound part's provider-quota trial on a real Redis and a real provider on loopback: it
 * counts what the provider accepted in the measured time and reports it as a share of the quota
 * beside the target. The share itself is a figure of the machine, not asserted here.
 */
class ProviderQuotaTest {

    @Test
    void aShortTrialCountsTheAcceptedCallsAndReportsTheirShareBesideTheTarget() {
        ProviderQuota.Row row = ProviderQuota.measure(BenchRedis.get(), Duration.ofMillis(500), Duration.ofSeconds(2));
        assertThat(row.failures()).as("failed calls").isZero();
        assertThat(row.accepted()).as("accepted in 2 s").isPositive()
                // the provider accepts at most 10 in any 1000 ms: 20 in 2 s
                .isLessThanOrEqualTo(2L * ProviderQuota.PROVIDER_PER_SECOND);
        assertThat(row.share()).isEqualTo(row.accepted() / 2.0 / ProviderQuota.PROVIDER_PER_SECOND);
        assertThat(ProviderQuota.table(row))
                .contains(String.format(java.util.Locale.ROOT, "| %.2f | ≥ 0.90 |", row.share()));
        assertThat(ProviderQuota.line(row)).contains("(target 0.90)");
    }
}
