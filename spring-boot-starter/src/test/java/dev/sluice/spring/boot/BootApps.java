package dev.sluice.spring.boot;

import dev.sluice.jaxrs.RateLimit;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.http.ResponseEntity;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import java.util.HashMap;
import java.util.Map;

/**
 * Small Spring Boot applications, started for real: embedded Tomcat on 127.0.0.1 and a random port,
 * every auto-configuration on the class path (Actuator, Spring Security open to all), configured by
 * properties and by environment variables, which Spring reads through the very property source it
 * reads the process's environment with.
 */
final class BootApps {

    private BootApps() {
    }

    /** An application with a few routes: {@code /api/<status>} answers that status. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Routes.class)
    static class App {
        @Bean
        SecurityFilterChain open(HttpSecurity http) throws Exception {
            return http.authorizeHttpRequests(r -> r.anyRequest().permitAll()).csrf(c -> c.disable()).build();
        }
    }

    @RestController
    static class Routes {
        @GetMapping("/api/{status}")
        ResponseEntity<String> api(@PathVariable("status") int status) {
            return ResponseEntity.status(status).body("status " + status + "\n");
        }

        @GetMapping("/public/{name}")
        String open(@PathVariable("name") String name) {
            return "public " + name + "\n";
        }

        @GetMapping("/plans")
        String plans() {
            return "plans\n";
        }

        @RateLimit(limit = "1/1m")
        @GetMapping("/limited")
        String limited() {
            return "limited\n";
        }
    }

    /**
     * Starts {@code sources} with {@code properties} and the environment variables {@code env}
     * (added to the process's own, in Spring's {@code systemEnvironment} property source).
     */
    static ConfigurableApplicationContext start(Map<String, String> env, Class<?>[] sources, String... properties) {
        return new SpringApplicationBuilder(sources).web(WebApplicationType.SERVLET)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
                        "spring.config.name=boot-apps") // not the demo's application.yml: only what the test gives
                .properties(properties)
                .initializers(context -> {
                    Map<String, Object> all = new HashMap<>(System.getenv());
                    all.putAll(env);
                    context.getEnvironment().getPropertySources().replace(
                            StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                            new SystemEnvironmentPropertySource(
                                    StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, all));
                }).run();
    }

    static ConfigurableApplicationContext start(Map<String, String> env, String... properties) {
        return start(env, new Class<?>[] {App.class}, properties);
    }

    /** The failure that stopped {@code start}, {@code null} if it started. */
    static Throwable failure(Map<String, String> env, Class<?>[] sources, String... properties) {
        try (ConfigurableApplicationContext ignored = start(env, sources, properties)) {
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    static Throwable failure(Map<String, String> env, String... properties) {
        return failure(env, new Class<?>[] {App.class}, properties);
    }

    /** Every message of the chain. */
    static String messages(Throwable thrown) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }

    /** The port the application listens on. */
    static int port(ConfigurableApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port"));
    }
}
