package dev.sluice.spring.boot;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.tomcat.autoconfigure.servlet.TomcatServletWebServerAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * When the starter loads and when it stops start-up: a bad property stops a real servlet
 * application (embedded Tomcat) naming the property and the value, as web.xml errors do.
 */
class StartUpTest {

    /** The smallest servlet application: embedded Tomcat, Spring MVC and Sluice. */
    @SpringBootConfiguration
    @ImportAutoConfiguration({SluiceAutoConfiguration.class, TomcatServletWebServerAutoConfiguration.class,
            DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class})
    static class Minimal {
    }

    private static Throwable start(String... properties) {
        Throwable thrown = null;
        try (ConfigurableApplicationContext ignored = new SpringApplicationBuilder(Minimal.class)
                .web(WebApplicationType.SERVLET)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off")
                .properties(properties).run()) {
            // started: no failure
        } catch (RuntimeException e) {
            thrown = e;
        }
        return thrown;
    }

    private static String messages(Throwable thrown) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }

    @Test
    void aBadValueStopsStartUpNamingThePropertyAndTheValue() {
        Throwable thrown = start("sluice.filters.api.limit=100/minutes", "sluice.filters.api.url-patterns=/api/*");
        assertThat(thrown).isNotNull();
        assertThat(messages(thrown)).contains("Sluice filter 'api': property 'sluice.filters.api.limit' must look like "
                + "<count>/<period> (e.g. 100/1m), got '100/minutes'");
    }

    @Test
    void aBadApplicationDefaultIsNamedAsTheApplicationsProperty() {
        Throwable thrown = start("sluice.filters.api.limit=10/1m", "sluice.timeout=0ms");
        assertThat(messages(thrown)).containsPattern("property 'sluice.timeout' .*got '0ms'");
    }

    @Test
    void aPropertyThatIsNoParameterStopsStartUp() {
        Throwable thrown = start("sluice.filters.api.limt=10/1m");
        assertThat(messages(thrown)).contains("property 'sluice.filters.api.limt' is not a Sluice parameter; known: ")
                .contains("sluice.filters.api.limit").contains("sluice.filters.api.url-patterns");
    }

    @Test
    void aBadAnnotationStopsStartUpNamingTheHandlerMethod() {
        assertThat(BadController.class).isNotNull();
        Throwable thrown;
        try (ConfigurableApplicationContext ignored = new SpringApplicationBuilder(Minimal.class, BadController.class)
                .web(WebApplicationType.SERVLET)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off").run()) {
            thrown = null;
        } catch (RuntimeException e) {
            thrown = e;
        }
        assertThat(messages(thrown))
                .contains("@RateLimit on handler method '" + BadController.class.getName() + ".get'")
                .contains("got 'ten a minute'");
    }

    @org.springframework.web.bind.annotation.RestController
    static class BadController {
        @dev.sluice.jaxrs.RateLimit(limit = "ten a minute")
        @org.springframework.web.bind.annotation.GetMapping("/bad")
        String get() {
            return "never";
        }
    }

    @Test
    void nothingLoadsOutsideAServletWebApplication() {
        // Not even the check of the names: a non-web application may use sluice.* for its own RateLimiter.
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
                .withPropertyValues("sluice.filters.api.limit=100/minutes", "sluice.nonsense=1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(SluiceSettings.class);
                    assertThat(context).doesNotHaveBean(RateLimitInterceptor.class);
                });
    }

    @Test
    void inAServletApplicationTheSettingsAreRead() {
        new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
                .withPropertyValues("sluice.filters.api.limit=10/1m", "sluice.store=memory")
                .run(context -> {
                    assertThat(context).hasSingleBean(SluiceSettings.class);
                    assertThat(context.getBean(SluiceSettings.class).application()).containsEntry("store", "memory");
                    assertThat(context).hasSingleBean(RateLimitInterceptor.class);
                });
    }

    @Test
    void theActuatorEndpointIsThereOnlyWhenAvailableAndNeedsActuator() {
        WebApplicationContextRunner app = new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class));
        app.run(context -> {
            assertThat(context).doesNotHaveBean(SluiceEndpoint.class); // not exposed: not made
            assertThat(context).hasSingleBean(dev.sluice.web.PolicyRegistry.class);
        });
        app.withPropertyValues("management.endpoints.web.exposure.include=sluice")
                .run(context -> assertThat(context).hasSingleBean(SluiceEndpoint.class));
        app.withPropertyValues("management.endpoints.web.exposure.include=sluice")
                .withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(SluiceEndpoint.class);
                    assertThat(context).hasSingleBean(dev.sluice.web.PolicyRegistry.class);
                });
    }
}
