package dev.sluice.spring.boot;

import dev.sluice.web.Answer;
import jakarta.ws.rs.core.EntityTag;
import jakarta.ws.rs.core.GenericType;
import jakarta.ws.rs.core.Link;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedHashMap;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;

import java.lang.annotation.Annotation;
import java.net.URI;
import java.util.Date;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The bodiless {@code 429} (or {@code 503}) with its headers that a refused method call's
 * {@code RateLimitExceededException} carries. Made here rather than by {@code Response.status(..)}:
 * that needs a JAX-RS runtime, which a Spring application limiting its own services has no reason
 * to hold; the exception needs only the JAX-RS API.
 */
final class RefusalResponse extends Response {

    private final StatusType status;
    private final MultivaluedMap<String, Object> headers = new MultivaluedHashMap<>();
    private final MultivaluedMap<String, String> stringHeaders = new MultivaluedHashMap<>();

    RefusalResponse(Answer answer) {
        this.status = Status.fromStatusCode(answer.status());
        for (Answer.Header header : answer.headers()) {
            headers.add(header.name(), header.value());
            stringHeaders.add(header.name(), header.value());
        }
    }

    @Override
    public int getStatus() {
        return status.getStatusCode();
    }

    @Override
    public StatusType getStatusInfo() {
        return status;
    }

    @Override
    public Object getEntity() {
        return null;
    }

    @Override
    public <T> T readEntity(Class<T> entityType) {
        throw new IllegalStateException("a refusal has no entity");
    }

    @Override
    public <T> T readEntity(GenericType<T> entityType) {
        throw new IllegalStateException("a refusal has no entity");
    }

    @Override
    public <T> T readEntity(Class<T> entityType, Annotation[] annotations) {
        throw new IllegalStateException("a refusal has no entity");
    }

    @Override
    public <T> T readEntity(GenericType<T> entityType, Annotation[] annotations) {
        throw new IllegalStateException("a refusal has no entity");
    }

    @Override
    public boolean hasEntity() {
        return false;
    }

    @Override
    public boolean bufferEntity() {
        return false;
    }

    @Override
    public void close() {
        // Nothing to release.
    }

    @Override
    public MediaType getMediaType() {
        return null;
    }

    @Override
    public Locale getLanguage() {
        return null;
    }

    @Override
    public int getLength() {
        return -1;
    }

    @Override
    public Set<String> getAllowedMethods() {
        return Set.of();
    }

    @Override
    public Map<String, NewCookie> getCookies() {
        return Map.of();
    }

    @Override
    public EntityTag getEntityTag() {
        return null;
    }

    @Override
    public Date getDate() {
        return null;
    }

    @Override
    public Date getLastModified() {
        return null;
    }

    @Override
    public URI getLocation() {
        return null;
    }

    @Override
    public Set<Link> getLinks() {
        return Set.of();
    }

    @Override
    public boolean hasLink(String relation) {
        return false;
    }

    @Override
    public Link getLink(String relation) {
        return null;
    }

    @Override
    public Link.Builder getLinkBuilder(String relation) {
        return null;
    }

    @Override
    public MultivaluedMap<String, Object> getMetadata() {
        return headers;
    }

    @Override
    public MultivaluedMap<String, String> getStringHeaders() {
        return stringHeaders;
    }

    @Override
    public String getHeaderString(String name) {
        for (Map.Entry<String, java.util.List<String>> e : stringHeaders.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name)) {
                return String.join(",", e.getValue());
            }
        }
        return null;
    }
}
