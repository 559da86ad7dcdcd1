package dev.sluice.examples.boot;

import dev.sluice.servlet.RateLimitFilter;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.security.SecurityProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

import java.util.Map;

/**
 * The recipe of docs/spring-boot.md: Sluice's {@link RateLimitFilter} registered in a Spring Boot
 * application with {@link FilterRegistrationBean}s, configured by the same init-params as in
 * {@code web.xml}. Two policies guard {@code /search}: 5 a minute per API key (or address), and
 * 300 a minute per address, so that invented API keys still run into a budget. Both name the
 * same {@code store}, so they share one store (and, on Redis, one client). A third guards
 * {@code /account}, behind Spring Security's HTTP Basic, per signed-in user.
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

    /** 300 a minute per address (or {@code sluice.per-ip-limit}), whatever API key the client sends. */
    @Bean
    FilterRegistrationBean<RateLimitFilter> searchPerIpRateLimit(@Value("${sluice.store:memory}") String store,
                                                         @Value("${sluice.timeout:100ms}") String timeout,
                                                         @Value("${sluice.per-ip-limit:300/1m}") String limit) {
        FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(new RateLimitFilter());
        registration.setName("search-per-ip");
        registration.addUrlPatterns("/search/*");
        registration.setAsyncSupported(true);
        registration.setInitParameters(Map.of(
                "limit", limit,
                "key", "ip",
                "headers", "none",
                "store", store,
                "timeout", timeout));
        registration.setOrder(1);
        return registration;
    }

    /**
     * 3 a minute per signed-in user on {@code /account}. {@code key=principal} reads the user Spring
     * Security signed in, so this filter is ordered after Spring Security's filter chain.
     */
    @Bean
    FilterRegistrationBean<RateLimitFilter> accountRateLimit(@Value("${sluice.store:memory}") String store,
                                                             @Value("${sluice.timeout:100ms}") String timeout) {
        FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(new RateLimitFilter());
        registration.setName("account");
        registration.addUrlPatterns("/account/*");
        registration.setAsyncSupported(true);
        registration.setInitParameters(Map.of(
                "limit", "3/1m",
                "key", "principal",
                "store", store,
                "timeout", timeout));
        registration.setOrder(SecurityProperties.DEFAULT_FILTER_ORDER + 10); // after Spring Security (-100)
        return registration;
    }

    /** HTTP Basic on {@code /account}; everything else is open. */
    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(requests -> requests
                        .requestMatchers("/account/**").authenticated()
                        .anyRequest().permitAll())
                .httpBasic(Customizer.withDefaults())
                .build();
    }

    /** Two users for the example; a real application has its own user store and password encoder. */
    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("alice").password("{noop}alice-secret").roles("USER").build(),
                User.withUsername("bob").password("{noop}bob-secret").roles("USER").build());
    }
}
