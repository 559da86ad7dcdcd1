package dev.sluice.examples.boot;

import dev.sluice.web.KeyResolver;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

import java.util.Map;

/**
 * The application of docs/spring-boot.md, rate-limited by sluice-spring-boot-starter and nothing
 * else: the policies are in application.yml (two on {@code /search}, which leave its help page alone,
 * one per partner on {@code /partners}, keyed by the {@link #partner} bean, one per signed-in user on
 * {@code /account}), and {@code @RateLimit} on {@link SearchController#suggest} limits one route.
 * The code below is the application's own security: HTTP Basic on {@code /account}.
 */
@SpringBootApplication
public class SluiceBootApplication {

    public static void main(String[] args) {
        SpringApplication.run(SluiceBootApplication.class, args);
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

    /**
     * The caller of {@code /partners}: the partner a token belongs to, for the tokens this application
     * issued (a real one looks them up in its own store); {@code null} for any other, so that the
     * filter's {@code key} (the client address) decides. Never the raw header: every invented token
     * would be a fresh budget. Named in application.yml: {@code key-resolver: partner}.
     */
    @Bean
    KeyResolver partner() {
        Map<String, String> partners = Map.of("token-acme", "acme", "token-globex", "globex");
        return request -> {
            String token = request.header("X-Partner-Token");
            return token == null ? null : partners.get(token);
        };
    }

    /** Two users for the example; a real application has its own user store and password encoder. */
    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("alice").password("{noop}alice-secret").roles("USER").build(),
                User.withUsername("bob").password("{noop}bob-secret").roles("USER").build());
    }
}
