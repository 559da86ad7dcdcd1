package dev.sluice.web.internal;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The web layer shows a password in {@code store} as {@code ***}: in its settings and its errors. */
class StoreSecretsTest {

    @Test
    void settingsShowTheStoreRedacted() {
        WebSettings web = WebSettings.parse(Map.of("store", "redis://app:s3cret@127.0.0.1:6379/1")::get);
        assertThat(web.store()).isEqualTo("redis://app:s3cret@127.0.0.1:6379/1"); // whole, for connecting
        assertThat(web.toString()).contains("store=redis://app:***@127.0.0.1:6379/1").doesNotContain("s3cret");
    }

    @Test
    void aBadStoreIsNamedRedacted() {
        assertThatThrownBy(() -> WebSettings.parse(Map.of("store", "redis://app:s3cret@127.0.0.1:99999")::get))
                .isInstanceOf(ParameterException.class)
                .hasMessage("'store' has port 99999, outside 1 to 65535, got 'redis://app:***@127.0.0.1:99999'")
                .satisfies(e -> {
                    for (Throwable t = e; t != null; t = t.getCause()) {
                        assertThat(String.valueOf(t.getMessage())).doesNotContain("s3cret");
                    }
                });
    }
}
