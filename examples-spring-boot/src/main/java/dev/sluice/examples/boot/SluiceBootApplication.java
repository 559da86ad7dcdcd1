package dev.sluice.examples.boot;

import dev.sluice.servlet.RateLimitFilter;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

import java.util.Map;

/**
 * The recipe of docs/spring-boot.md: Sluice's {@link RateLimitFilter} registered in a Spring Boot
 * application with {@link FilterRegistrationBean}s, configured by the same init-params as in
 * {@code web.xml}. Two policies guard {@code /search}: 5 a minute per API key (or address), and
 * 300 a minute per address, so that invented API keys still run into a budget. Both name the
 * same {@code store}, so they share one store (and, on Redis, one client).
 */
@SpringBootApplication
public class SluiceBootApplication {

    public static void main(String[] args) {
        SpringApplication.run(SluiceBootApplication.class, args);
    }

    /** 5 a minute per API key, or per address without one; a 429 with Retry-After beyond. */
    @Bean
    FilterRegistrationBean<RateLimitFilter> searchRateLimit(@Value("${sluice.store:memory}") String store,
                                                    @Value("${sluice.timeout:100ms}") String timeout) {
        FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(new RateLimitFilter());
        registration.setName("search");                  // the policy name, like <filter-name> in web.xml
        registration.addUrlPatterns("/search/*");        // matches /search and everything under it
        registration.setAsyncSupported(true);
        registration.setInitParameters(Map.of(
                "limit", "5/1m",
                "key", "header:X-API-Key,ip",
                "headers", "both",
                "store", store,
                "timeout", timeout));
        registration.setOrder(2);                        // after search-per-ip (and after Spring Security's -100)
        return registration;
    }

    /** 300 a minute per address, whatever API key the client sends. */
    @Bean
    FilterRegistrationBean<RateLimitFilter> searchPerIpRateLimit(@Value("${sluice.store:memory}") String store,
                                                         @Value("${sluice.timeout:100ms}") String timeout) {
        FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(new RateLimitFilter());
        registration.setName("search-per-ip");
        registration.addUrlPatterns("/search/*");
        registration.setAsyncSupported(true);
        registration.setInitParameters(Map.of(
                "limit", "300/1m",
                "key", "ip",
                "headers", "none",
                "store", store,
                "timeout", timeout));
        registration.setOrder(1);
        return registration;
    }
}
