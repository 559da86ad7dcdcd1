package dev.sluice.grpc;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import dev.sluice.Decision;
import dev.sluice.web.Answer;
import dev.sluice.web.RequestAttributes;
import dev.sluice.web.RequestView;
import dev.sluice.web.Verdict;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How a verdict reads on a gRPC call: the rate-limit headers as metadata (lower-case keys:
 * {@code ratelimit-limit}, {@code ratelimit-remaining}, {@code ratelimit-reset},
 * {@code retry-after}, ...), and a refusal as a closed call: {@code 429} becomes
 * {@code RESOURCE_EXHAUSTED}, {@code 503} (the store failed, {@code failure-mode=closed})
 * {@code UNAVAILABLE}, each with a {@code google.rpc.Status} in {@code grpc-status-details-bin}
 * whose {@code RetryInfo} carries the decision's exact wait.
 */
final class Refusals {

    /** The few header names Sluice writes, each made a metadata key once. */
    private static final Map<String, Metadata.Key<String>> KEYS = new ConcurrentHashMap<>();

    private Refusals() {
    }

    /** The metadata of {@code headers}, each name lower-cased. */
    static Metadata metadata(List<Answer.Header> headers) {
        Metadata out = new Metadata();
        for (Answer.Header header : headers) {
            out.put(KEYS.computeIfAbsent(header.name(),
                    n -> Metadata.Key.of(n.toLowerCase(Locale.ROOT), Metadata.ASCII_STRING_MARSHALLER)),
                    header.value());
        }
        return out;
    }

    /** Closes {@code call}, which {@code verdict} refused. */
    static void refuse(ServerCall<?, ?> call, Verdict verdict, RequestView view) {
        Answer answer = verdict.answer();
        Decision decision = verdict.decision();
        Object policy = view.attribute(RequestAttributes.POLICY);
        Status.Code code;
        String message;
        if (answer.status() == 503) {
            code = Status.Code.UNAVAILABLE;
            message = "The rate limiter of policy '" + policy + "' is unavailable";
        } else if (decision.outcome() == Decision.Outcome.UNSATISFIABLE) {
            code = Status.Code.RESOURCE_EXHAUSTED;
            message = "This call costs more than policy '" + policy + "' can ever grant";
        } else if (decision.quotas().stream().anyMatch(q -> !q.allowed() && !q.limit().algorithm().isRate())) {
            code = Status.Code.RESOURCE_EXHAUSTED;
            message = "Too many calls in flight for policy '" + policy + "'";
        } else {
            code = Status.Code.RESOURCE_EXHAUSTED;
            message = "Rate limit of policy '" + policy + "' exceeded";
        }
        com.google.rpc.Status.Builder details = com.google.rpc.Status.newBuilder().setCode(code.value())
                .setMessage(message);
        Duration delay = retryDelay(decision, answer);
        if (delay != null) {
            details.addDetails(Any.pack(RetryInfo.newBuilder().setRetryDelay(com.google.protobuf.Duration.newBuilder()
                    .setSeconds(delay.getSeconds()).setNanos(delay.getNano())).build()));
        }
        StatusRuntimeException closing = StatusProto.toStatusRuntimeException(details.build(),
                metadata(answer.headers()));
        call.close(closing.getStatus(), closing.getTrailers());
    }

    /**
     * The wait the decision names; a decision that names none (a store that failed) waits the
     * {@code Retry-After} it answers; none when no wait will ever do (an unsatisfiable cost).
     */
    private static Duration retryDelay(Decision decision, Answer answer) {
        if (decision.outcome() == Decision.Outcome.UNSATISFIABLE || decision.retryAfter().equals(Decision.NEVER)) {
            return null;
        }
        if (!decision.retryAfter().isNegative() && !decision.retryAfter().isZero()) {
            return decision.retryAfter();
        }
        for (Answer.Header header : answer.headers()) {
            if (header.name().equalsIgnoreCase("Retry-After")) {
                try {
                    return Duration.ofSeconds(Long.parseLong(header.value().trim()));
                } catch (NumberFormatException e) {
                    return null; // Sluice writes whole seconds; anything else names no wait
                }
            }
        }
        return null;
    }
}
