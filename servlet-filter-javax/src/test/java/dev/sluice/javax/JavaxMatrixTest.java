package dev.sluice.javax;

import dev.sluice.web.matrix.Adapter;
import dev.sluice.web.matrix.AdapterMatrix;
import dev.sluice.web.matrix.Routes;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The adapter matrix on the javax filter in Tomcat 9: a Servlet 4.0 {@code web.xml}, written for the
 * matrix's apps, with one {@code <filter>} per app and route in front of {@link OkServlet}.
 */
class JavaxMatrixTest extends AdapterMatrix {

    @Override
    protected List<Adapter> adapters() {
        return List.of(new Adapter() {
            @Override
            public String name() {
                return "javax-tomcat9";
            }

            @Override
            public Running start(List<Routes.App> apps) throws Exception {
                Path base = Files.createTempDirectory("sluice-matrix-tomcat");
                Path docBase = Files.createDirectories(base.resolve("webapp/WEB-INF")).getParent();
                Files.writeString(docBase.resolve("WEB-INF/web.xml"), webXml(apps));
                dev.sluice.javax.Running running = Tomcat9.deploy(new WebApp(docBase, List.of()),
                        base.resolve("tomcat"));
                return new Running() {
                    @Override
                    public URI uri(String path) {
                        return running.uri(path);
                    }

                    @Override
                    public void close() throws Exception {
                        running.close();
                        try (var paths = Files.walk(base)) {
                            for (Path each : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                                Files.delete(each);
                            }
                        }
                    }
                };
            }
        });
    }

    private static String webXml(List<Routes.App> apps) {
        StringBuilder xml = new StringBuilder("""
                <?xml version="1.0" encoding="UTF-8"?>
                <web-app xmlns="http://xmlns.jcp.org/xml/ns/javaee" version="4.0" metadata-complete="true">
                """);
        for (Routes.App app : apps) {
            for (Routes.Route route : Routes.ALL) {
                String name = app.name() + "-" + route.name();
                xml.append("  <filter>\n    <filter-name>").append(name).append("</filter-name>\n")
                        .append("    <filter-class>dev.sluice.servlet.RateLimitFilter</filter-class>\n");
                for (Map.Entry<String, String> param : app.parameters(route).entrySet()) {
                    xml.append("    <init-param><param-name>").append(param.getKey())
                            .append("</param-name><param-value>").append(param.getValue())
                            .append("</param-value></init-param>\n");
                }
                xml.append("  </filter>\n  <filter-mapping>\n    <filter-name>").append(name)
                        .append("</filter-name>\n    <url-pattern>/").append(app.name()).append('/')
                        .append(route.name()).append("</url-pattern>\n  </filter-mapping>\n");
            }
        }
        return xml.append("""
                  <servlet>
                    <servlet-name>app</servlet-name>
                    <servlet-class>dev.sluice.javax.OkServlet</servlet-class>
                  </servlet>
                  <servlet-mapping>
                    <servlet-name>app</servlet-name>
                    <url-pattern>/*</url-pattern>
                  </servlet-mapping>
                </web-app>
                """).toString();
    }
}
