package dev.sluice.webflux;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The servlet url-pattern rules, as the starter's {@code url-patterns} mean them on Tomcat. */
class UrlPatternsTest {

    @Test
    void prefixExtensionExactAndDefault() {
        UrlPatterns p = UrlPatterns.of(List.of("/api/*", "*.json", "/orders", ""));
        assertThat(p.matches("/api")).isTrue();
        assertThat(p.matches("/api/")).isTrue();
        assertThat(p.matches("/api/v1/x")).isTrue();
        assertThat(p.matches("/apix")).isFalse();
        assertThat(p.matches("/a/b.json")).isTrue();
        assertThat(p.matches("/a.json/b")).isFalse();
        assertThat(p.matches("/orders")).isTrue();
        assertThat(p.matches("/orders/1")).isFalse();
        assertThat(p.matches("/")).isTrue();
        assertThat(p.matches("/other")).isFalse();
        assertThat(UrlPatterns.of(List.of()).matches("/anything")).isTrue();
        assertThat(UrlPatterns.of(List.of("/*")).matches("/anything")).isTrue();
        assertThat(UrlPatterns.of(List.of("/")).matches("/anything")).isTrue();
    }

    @Test
    void anythingElseIsRefused() {
        for (String bad : List.of("api/*", "/a/*/b", "*.", "*.a/b", "/a*", "**")) {
            assertThatThrownBy(() -> UrlPatterns.of(List.of(bad))).hasMessageContaining("got '" + bad + "'");
        }
    }
}
