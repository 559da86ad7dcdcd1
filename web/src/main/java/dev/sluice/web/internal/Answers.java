package dev.sluice.web.internal;

import dev.sluice.Decision;
import dev.sluice.web.HeaderStyle;
import dev.sluice.web.RequestView;

import java.util.ArrayList;
import java.util.List;

/**
 * The answers of one route, in its header style: the rate-limit headers of every layer of a
 * request, {@code Retry-After}, and the problem bodies of a refusal. What was decided is the
 * {@link Guard}'s; how it reads on the wire is here. Immutable and thread-safe.
 *
 * @param headers      the route's header style
 * @param partitionKey whether the draft headers carry the caller's {@code pk}
 */
record Answers(HeaderStyle headers, boolean partitionKey) {

    /** The answer to a request its rate limits refused, or whose store failed on a closed route. */
    HttpAnswer refusal(RequestView request, Decision decision, String partition, LimitChoice.Branch branch) {
        if (decision.outcome() == Decision.Outcome.FAILED_CLOSED) {
            return HttpAnswer.refusal(503, List.of(retryAfter(decision)), Problems.SERVICE_UNAVAILABLE, decision);
        }
        List<HttpAnswer.Header> out = new ArrayList<>(6);
        out.add(retryAfter(decision));
        out.addAll(layerHeaders(request, decision, partition, branch));
        return HttpAnswer.refusal(429, out, Problems.tooManyRequests(decision, headers), decision);
    }

    /** The answer to a request refused its place by the concurrency limit, which adds no layer of its own. */
    HttpAnswer tooManyInFlight(RequestView request, Decision refused) {
        List<HttpAnswer.Header> out = new ArrayList<>(6);
        out.add(retryAfter(refused));
        out.addAll(headers(request));
        return HttpAnswer.refusal(429, out, Problems.tooManyInFlight(refused), refused);
    }

    /** Adds the route's decision to the request's layers and returns the headers of them all. */
    List<HttpAnswer.Header> layerHeaders(RequestView request, Decision decision, String partition,
                                         LimitChoice.Branch branch) {
        Layers.Layer layer = new Layers.Layer(decision, partitionKey ? partition : null, branch.windows(decision));
        return RateLimitHeaders.headers(Layers.of(request).add(layer, headers), headers);
    }

    /** The rate-limit headers of every layer the request has so far. */
    List<HttpAnswer.Header> headers(RequestView request) {
        return RateLimitHeaders.headers(Layers.of(request).all(), headers);
    }

    private static HttpAnswer.Header retryAfter(Decision decision) {
        return new HttpAnswer.Header("Retry-After",
                RateLimitHeaders.decimal(RateLimitHeaders.retryAfterSeconds(decision)));
    }
}
