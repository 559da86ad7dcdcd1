package dev.sluice.javax;

import dev.sluice.testing.RawHttp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The javax console in Tomcat 9, over raw HTTP (what a browser or an attacker may send): its
 * redirect to the page never leaves the site, a tier's policy is addressed as two path segments,
 * and without authentication only a loopback {@code Host} is served.
 */
class ConsoleTomcat9Test {

    @TempDir
    Path tomcatBase;

    @Test
    void theRedirectToThePageStaysOnTheSiteWhateverTheRequestTargetSays() throws Exception {
        try (Running running = Tomcat9.deploy(WebApp.named("console"), tomcatBase)) {
            int port = running.uri("/").getPort();
            String host = "127.0.0.1:" + port;
            RawHttp.Response plain = RawHttp.send(port, "GET", "/sluice", host, null);
            assertThat(plain.status()).isEqualTo(302);
            assertThat(running.uri("/sluice").resolve(plain.header("Location"))).isEqualTo(running.uri("/sluice/"));

            // Tomcat maps this to the console (the path normalises to /sluice) but keeps the target as sent.
            String target = "//evil.example/..;/sluice";
            RawHttp.Response hostile = RawHttp.send(port, "GET", target, host, null);
            assertThat(hostile.status()).as(hostile.head()).isEqualTo(302);
            String location = hostile.header("Location");
            URI followed = URI.create("http://" + host + target).resolve(location);
            assertThat(followed.getHost()).as("Location: " + location).isEqualTo("127.0.0.1");
            assertThat(followed.getPort()).isEqualTo(port);
        }
    }

    @Test
    void aTiersPolicyIsResetAndOverriddenAndAForeignHostIsRefused() throws Exception {
        try (Running running = Tomcat9.deploy(WebApp.named("console"), tomcatBase)) {
            int port = running.uri("/").getPort();
            String host = "127.0.0.1:" + port;
            assertThat(RawHttp.send(port, "GET", "/api/x", host, null, "X-API-Key: g1", "X-Plan: gold").status())
                    .isEqualTo(200);
            assertThat(RawHttp.send(port, "GET", "/api/x", host, null, "X-API-Key: g1", "X-Plan: gold").status())
                    .isEqualTo(429);
            RawHttp.Response reset = RawHttp.send(port, "POST", "/sluice/policies/api/gold/reset", host, "caller=g1");
            assertThat(reset.status()).as(reset.body()).isEqualTo(200);
            assertThat(reset.body()).contains("key~g1");
            assertThat(RawHttp.send(port, "GET", "/api/x", host, null, "X-API-Key: g1", "X-Plan: gold").status())
                    .isEqualTo(200);
            RawHttp.Response set = RawHttp.send(port, "PUT", "/sluice/policies/api/gold/override", host, "limit=7/1h");
            assertThat(set.status()).as(set.body()).isEqualTo(200);
            assertThat(RawHttp.send(port, "GET", "/api/x", host, null, "X-API-Key: g2", "X-Plan: gold")
                    .header("RateLimit-Limit")).isEqualTo("7");
            assertThat(RawHttp.send(port, "DELETE", "/sluice/policies/api/gold/override", host, null).status())
                    .isEqualTo(200);

            RawHttp.Response rebound = RawHttp.send(port, "GET", "/sluice/policies", "evil.example", null);
            assertThat(rebound.status()).isEqualTo(403);
            assertThat(rebound.body()).contains("allowed-hosts").doesNotContain("\"policies\"");
        }
    }
}
