package dev.sluice.examples.boot;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.metrics.MicrometerMetrics;
import dev.sluice.outbound.Permits;
import dev.sluice.spring.client.RateLimitClientInterceptor;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

import java.net.http.HttpClient;
import java.time.Duration;

/**
 * The application's own calls to a provider with a quota: a {@link RestClient} whose every request
 * first takes a permit of {@link Permits}, so that this application never sends the provider more
 * than {@code quotes.limit} allows. {@code quotes.url} is where the provider is (the tests start a
 * fake one on 127.0.0.1). The limiter is on the memory store, right for one instance; several
 * instances sharing the provider's quota build it on one Redis store
 * ({@code .store(RedisStore.connect("redis://..."))}) instead.
 */
@Configuration(proxyBeanMethods = false)
class QuoteProvider {

    /**
     * The provider's quota, {@code quotes.limit} calls a period, at most {@code quotes.burst} at once;
     * a call waits at most half a second for its permit. The decisions are counted in Micrometer
     * as {@code sluice.decisions{policy=quotes}}.
     */
    @Bean
    Permits quotePermits(@Value("${quotes.limit}") String limit, @Value("${quotes.burst:1}") long burst,
                         MeterRegistry registry) {
        RateLimiter limiter = RateLimiter.builder()
                .limit(Limit.of("quotes", limit).withBurst(burst))
                .listener(MicrometerMetrics.of(registry, "quotes"))
                .build();
        return Permits.of(limiter, Duration.ofMillis(500));
    }

    /** The client of the provider at {@code quotes.url}: every request under one key, {@code quotes}. */
    @Bean
    RestClient quoteClient(@Value("${quotes.url}") String url, Permits quotePermits) {
        JdkClientHttpRequestFactory requests = new JdkClientHttpRequestFactory(HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build());
        requests.setReadTimeout(Duration.ofSeconds(10));
        return RestClient.builder()
                .baseUrl(url)
                .requestFactory(requests)
                .requestInterceptor(RateLimitClientInterceptor.named(quotePermits, "quotes"))
                .build();
    }
}
