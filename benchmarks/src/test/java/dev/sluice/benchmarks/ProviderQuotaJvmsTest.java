package dev.sluice.benchmarks;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The outbound part's three-JVM trial on a real Redis and a real provider on loopback: three new
 * JVMs of each contender call the provider, and the trial counts what the provider accepted in
 * the measured time, with the JVMs undisturbed and paused in turn. The shares are figures of the
 * machine; what holds at any load is asserted: every instance reports, and the provider never
 * accepts more than its own limit.
 */
class ProviderQuotaJvmsTest {

    @Test
    void oneRoundOfThreeJvmsPerContenderCountsWhatTheProviderAccepted() {
        List<String> warnings = new ArrayList<>();
        List<ProviderQuotaJvms.Row> rows = ProviderQuotaJvms.measure(BenchRedis.get(), 1, Duration.ofMillis(500),
                Duration.ofSeconds(2), warnings::add);

        assertThat(warnings).isEmpty();
        assertThat(rows).extracting(ProviderQuotaJvms.Row::contender)
                .containsExactly("sluice", "bucket4j", "sluice", "bucket4j");
        assertThat(rows).extracting(ProviderQuotaJvms.Row::paused).containsExactly(false, false, true, true);
        for (ProviderQuotaJvms.Row row : rows) {
            assertThat(row.problem()).isNull();
            assertThat(row.accepted()).as("%s: accepted in 2 s", row.contender()).isPositive()
                    // the provider accepts at most 10 in any 1000 ms: 20 in 2 s
                    .isLessThanOrEqualTo(2L * ProviderQuota.PROVIDER_PER_SECOND);
        }
        assertThat(ProviderQuotaJvms.table(rows)).contains(String.format(java.util.Locale.ROOT,
                "| sluice | no | %.2f | %,d |", rows.get(0).share(), rows.get(0).tooMany()));
    }

    @Test
    void theTargetsCompareMediansAndCountSluicesCallsWithoutAPermit() {
        List<ProviderQuotaJvms.Row> rows = List.of(
                new ProviderQuotaJvms.Row("sluice", false, 30, 240, 0, 2, 0, 4.0, null),
                new ProviderQuotaJvms.Row("bucket4j", false, 30, 270, 3, 0, 0, 4.0, null),
                new ProviderQuotaJvms.Row("sluice", false, 30, 260, 1, 0, 0, 4.0, null),
                new ProviderQuotaJvms.Row("bucket4j", false, 30, 250, 0, 0, 0, 4.0, null),
                new ProviderQuotaJvms.Row("sluice", true, 30, 200, 0, 1, 0, 4.0, null),
                new ProviderQuotaJvms.Row("bucket4j", true, 30, 250, 9, 0, 0, 4.0, null),
                new ProviderQuotaJvms.Row("sluice", true, 30, 0, 0, 0, 0, Double.NaN, "did not finish"));

        assertThat(ProviderQuotaJvms.sluiceToBucket4j(rows, false)).isEqualTo(250.0 / 260.0);
        assertThat(ProviderQuotaJvms.sluiceToBucket4j(rows, true)).isEqualTo(200.0 / 250.0);
        assertThat(ProviderQuotaJvms.sluiceWithoutPermit(rows)).isEqualTo(3L);
        assertThat(ProviderQuotaJvms.sluiceToBucket4j(rows.subList(0, 1), false)).isNull();
        assertThat(ProviderQuotaJvms.table(rows)).contains("| sluice | yes | no figures: did not finish |");
    }

    @Test
    void theReportSetsSluiceBesideBucket4jAndCountsItsCallsWithoutAPermitInTheTargets() {
        Report report = new Report("now", BenchRedis.get(), "7.0", false, "--only=outbound");
        report.providerQuotaJvms(List.of(new ProviderQuotaJvms.Row("sluice", false, 30, 243, 0, 1, 0, 12.5, null),
                new ProviderQuotaJvms.Row("bucket4j", false, 30, 270, 2, 0, 0, 12.5, null)));
        String md = report.markdown();

        assertThat(md).contains("| outbound, three JVMs x 8 threads at 9/s, provider 10/s: Sluice's accepted ÷ "
                        + "Bucket4j's (medians of rounds) | 0.90 | ≥ 1.00 | no |",
                "| outbound, three JVMs x 8 threads at 9/s, provider 10/s, paused in turn: Sluice's accepted ÷ "
                        + "Bucket4j's (medians of rounds) | – | ≥ 1.00 | – |",
                "| outbound, three JVMs: Sluice's calls without a permit within 10 s (a waiter that lost its place), "
                        + "all rounds | 1 | 0 | no |",
                "| sluice | no | 0.81 | 0 | 1 | 0 | 12.5 |", "| bucket4j | no | 0.90 | 2 | 0 | 0 | 12.5 |");
    }
}
