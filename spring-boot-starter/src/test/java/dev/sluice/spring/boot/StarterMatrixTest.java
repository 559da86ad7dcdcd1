package dev.sluice.spring.boot;

import dev.sluice.web.matrix.Adapter;
import dev.sluice.web.matrix.AdapterMatrix;
import dev.sluice.web.matrix.Routes;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.tomcat.autoconfigure.servlet.TomcatServletWebServerAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * The adapter matrix on the starter: one started Boot application on embedded Tomcat, one filter
 * per app and route from {@code sluice.filters.<name>.*} properties, in front of a controller.
 */
class StarterMatrixTest extends AdapterMatrix {

    /** Embedded Tomcat, Spring MVC and Sluice, and {@link Ok}. */
    @SpringBootConfiguration
    @ImportAutoConfiguration({SluiceAutoConfiguration.class, TomcatServletWebServerAutoConfiguration.class,
            DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class})
    static class Application {
    }

    /** "ok" on every path. */
    @RestController
    static class Ok {
        @GetMapping(path = "/**", produces = "text/plain")
        String ok() {
            return "ok";
        }
    }

    @Override
    protected List<Adapter> adapters() {
        return List.of(new Adapter() {
            @Override
            public String name() {
                return "spring-boot-starter";
            }

            @Override
            public Running start(List<Routes.App> apps) {
                return StarterMatrixTest.start(apps);
            }
        });
    }

    private static Adapter.Running start(List<Routes.App> apps) {
        List<String> properties = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
                "spring.main.banner-mode=off"));
        for (Routes.App app : apps) {
            for (Routes.Route route : Routes.ALL) {
                String filter = "sluice.filters." + app.name() + "-" + route.name() + ".";
                app.parameters(route).forEach((name, value) -> properties.add(filter + name + "=" + value));
                properties.add(filter + "url-patterns=/" + app.name() + "/" + route.name());
            }
        }
        ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class, Ok.class)
                .web(WebApplicationType.SERVLET).properties(properties.toArray(String[]::new)).run();
        int port = ((WebServerApplicationContext) context).getWebServer().getPort();
        return new Adapter.Running() {
            @Override
            public URI uri(String path) {
                return URI.create("http://127.0.0.1:" + port + path);
            }

            @Override
            public void close() {
                context.close();
            }
        };
    }
}
