package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.web.RequestView;
import dev.sluice.Decision;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The layers that decided one request, in the order they decided it: every Sluice filter and
 * rate-limited resource method of the request adds its decision, and each rewrites the headers
 * from all of them, so that the last one to write reports every limit that applies to the request.
 * Kept in one request attribute ({@link #ATTRIBUTE}), which servlet filters and JAX-RS (whose
 * properties a servlet container backs by the request's attributes) share. Thread-safe: the
 * layers so far are one immutable list, replaced by each layer added, so that what a layer reads
 * is a snapshot without a copy.
 */
final class Layers {

    /** The request attribute (JAX-RS property) holding the layers of a request. */
    static final String ATTRIBUTE = "dev.sluice.layers";

    /** The layers so far, immutable; guarded by {@code this} when replaced. */
    private volatile List<Layer> layers = List.of();

    /**
     * One layer's decision of a request.
     *
     * @param decision     the decision
     * @param partitionKey the {@code pk} it reports; {@code null}: none
     * @param windows      the draft's {@code q} and {@code w} of its limits by policy, computed
     *                     when its guard was built
     */
    record Layer(Decision decision, String partitionKey, Map<String, RateLimitHeaders.QuotaWindow> windows) {
    }

    /** The layers of a request, created on first use in its attributes. */
    static Layers of(RequestView request) {
        if (request.attribute(ATTRIBUTE) instanceof Layers layers) {
            return layers;
        }
        Layers layers = new Layers();
        request.setAttribute(ATTRIBUTE, layers);
        return layers;
    }

    /**
     * Adds one layer and returns every layer so far, this one last. A layer whose {@code headers}
     * is {@code none} publishes nothing, not even to the layers around it: it is not added.
     */
    synchronized List<Layer> add(Layer layer, HeaderStyle style) {
        if (style != HeaderStyle.NONE) {
            List<Layer> before = layers;
            if (before.isEmpty()) {
                layers = List.of(layer);
            } else {
                List<Layer> more = new ArrayList<>(before.size() + 1);
                more.addAll(before);
                more.add(layer);
                layers = List.copyOf(more);
            }
        }
        return layers;
    }

    /** Every layer so far. */
    List<Layer> all() {
        return layers;
    }
}
