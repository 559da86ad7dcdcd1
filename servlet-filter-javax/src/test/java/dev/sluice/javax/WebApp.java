package dev.sluice.javax;

import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A test web application under {@code src/test/resources/webapps/NAME}: its directory (Tomcat's
 * docBase) and the {@code <filter>}s of its {@code WEB-INF/web.xml}, read with the JDK's XML
 * parser so that Jetty gets exactly the filters Tomcat reads.
 */
record WebApp(Path docBase, List<FilterDecl> filters) {

    /** One {@code <filter>} with its init-params and the url-patterns of its mappings, in order. */
    record FilterDecl(String name, String className, boolean asyncSupported, Map<String, String> params,
                      List<String> patterns) {
    }

    static WebApp named(String name) throws Exception {
        URL url = WebApp.class.getResource("/webapps/" + name + "/WEB-INF/web.xml");
        if (url == null) {
            throw new IllegalArgumentException("no test web application " + name);
        }
        Path webXml = path(url);
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setNamespaceAware(true);
        Element root = factory.newDocumentBuilder().parse(webXml.toFile()).getDocumentElement();
        if (!"http://xmlns.jcp.org/xml/ns/javaee".equals(root.getNamespaceURI())
                || !"4.0".equals(root.getAttribute("version"))) {
            throw new IllegalStateException(webXml + " is not a Servlet 4.0 (javax namespace) web.xml");
        }
        List<FilterDecl> filters = new ArrayList<>();
        for (Element filter : children(root, "filter")) {
            String filterName = text(filter, "filter-name");
            Map<String, String> params = new LinkedHashMap<>();
            for (Element param : children(filter, "init-param")) {
                params.put(text(param, "param-name"), text(param, "param-value"));
            }
            List<String> patterns = new ArrayList<>();
            for (Element mapping : children(root, "filter-mapping")) {
                if (filterName.equals(text(mapping, "filter-name"))) {
                    children(mapping, "url-pattern").forEach(p -> patterns.add(p.getTextContent().trim()));
                }
            }
            filters.add(new FilterDecl(filterName, text(filter, "filter-class"),
                    "true".equals(text(filter, "async-supported")),
                    params, patterns));
        }
        return new WebApp(webXml.getParent().getParent(), filters);
    }

    private static Path path(URL url) throws URISyntaxException {
        URI uri = url.toURI();
        if (!"file".equals(uri.getScheme())) {
            throw new IllegalStateException("test web applications must be directories, got " + uri);
        }
        return Path.of(uri);
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> found = new ArrayList<>();
        NodeList nodes = parent.getElementsByTagNameNS(parent.getNamespaceURI(), name);
        for (int i = 0; i < nodes.getLength(); i++) {
            if (nodes.item(i).getParentNode() == parent) {
                found.add((Element) nodes.item(i));
            }
        }
        return found;
    }

    private static String text(Element parent, String name) {
        List<Element> found = children(parent, name);
        return found.isEmpty() ? null : found.get(0).getTextContent().trim();
    }
}
