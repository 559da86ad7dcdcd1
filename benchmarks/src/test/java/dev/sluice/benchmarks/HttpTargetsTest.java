package dev.sluice.benchmarks;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 26, item 5: the report opens with the HTTP targets, each route divided by its own endpoint
 * without the filter: the trivial servlet on memory (0.95x) and on Redis (0.85x), and the endpoint
 * doing a millisecond of work on Redis (0.97x), the figure a user feels. Item 3 likewise: a lone
 * decision's Redis time beside the floor's, from the same run's commandstats.
 */
class HttpTargetsTest {

    private static HttpBenchmark.Route route(String path, double median) {
        return new HttpBenchmark.Route(path, median, new double[] {median});
    }

    @Test
    void eachRouteIsDividedByItsOwnEndpointWithoutTheFilter() {
        List<HttpBenchmark.Route> routes = List.of(
                route("/plain", 10_000), route("/memory", 9_600), route("/redis", 5_000),
                route("/work/plain", 1_800), route("/work/memory", 1_790), route("/work/redis", 1_710));
        assertThat(HttpBenchmark.withoutFilter(routes, routes.get(2)).path()).isEqualTo("/plain");
        assertThat(HttpBenchmark.withoutFilter(routes, routes.get(5)).path()).isEqualTo("/work/plain");
        assertThat(HttpBenchmark.table(true, 16, 3, routes))
                .contains("| /work/redis | 1710 | 0.95 |", "| /redis | 5000 | 0.50 |");
    }

    @Test
    void theReportOpensWithTheHttpTargetsAndWhetherTheyWereMet() {
        List<HttpBenchmark.Route> routes = List.of(
                route("/plain", 10_000), route("/memory", 9_600), route("/redis", 5_000),
                route("/work/plain", 1_800), route("/work/memory", 1_790), route("/work/redis", 1_710));
        Report report = new Report("now", BenchRedis.get(), "7.0", false, "--only=http");
        report.http(HttpBenchmark.table(true, 16, 3, routes), routes);
        String md = report.markdown();
        String targets = md.substring(md.indexOf("The targets, this run"), md.indexOf("HTTP: a servlet"));
        assertThat(targets).contains(
                "| HTTP req/s, trivial servlet, filter on memory ÷ no filter | 0.96 | ≥ 0.95 | yes |",
                "| HTTP req/s, trivial servlet, filter on redis ÷ no filter | 0.50 | ≥ 0.85 | no |",
                "| HTTP req/s, endpoint doing 1000 µs of work, filter on redis ÷ no filter | 0.95 | ≥ 0.97 | no |");
        assertThat(targets).doesNotContain("work, filter on memory");
    }

    @Test
    void aLoneDecisionsRedisTimeIsSetBesideTheFloorsInTheTargets() {
        Report report = new Report("now", BenchRedis.get(), "7.0", false, "--only=script");
        report.scriptCost(List.of(new ScriptCost.Row("token-bucket", ScriptCost.LONE, 1_000, 1_000, 24_000),
                new ScriptCost.Row(ScriptCost.FLOOR, ScriptCost.LONE, 1_000, 1_000, 12_000)));
        assertThat(report.markdown())
                .contains("| Redis µs per lone decision ÷ the floor's, token-bucket (commandstats) "
                        + "| 2.00 | ≤ 1.20 | no |")
                .doesNotContain("lone decision ÷ the floor's, floor");
    }

    @Test
    void theFloorsSanityCheckIsATargetAtEachThreadCount() {
        Report report = new Report("now", BenchRedis.get(), "7.0", false, "--only=sanity");
        report.sanity(List.of(sanityRow(1, 900, 1_000), sanityRow(16, 800, 1_000)));
        assertThat(report.markdown())
                .contains("| the floor passes its sanity check: floor ÷ plain evalSha loop, 1 thread(s) "
                        + "(median of rounds) | 0.90 | ≥ 0.90 | yes |")
                .contains("| the floor passes its sanity check: floor ÷ plain evalSha loop, 16 thread(s) "
                        + "(median of rounds) | 0.80 | ≥ 0.90 | no |");
    }

    @Test
    void redisKeptBusyIsNotMetWithoutItsReference() {
        Report report = new Report("now", BenchRedis.get(), "7.0", false, "--only=sanity");
        report.pipelined(new SanityCheck.Measured(Double.NaN, "redis-benchmark is not installed"));
        assertThat(report.markdown()).contains("÷ redis-benchmark's pipelined EVALSHA of the floor "
                + "(50 connections, pipeline 16) | – | ≥ 0.50 | – |");
    }

    private static SanityCheck.Row sanityRow(int threads, double floor, double plain) {
        return new SanityCheck.Row(threads, List.of(new SanityCheck.Measured(floor, "floor")),
                List.of(new SanityCheck.Measured(plain, "plain")), new SanityCheck.Measured(Double.NaN, "none"));
    }
}
