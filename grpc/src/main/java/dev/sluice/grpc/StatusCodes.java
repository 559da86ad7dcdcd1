package dev.sluice.grpc;

import io.grpc.Status;

/**
 * The HTTP status of a gRPC status code, as {@code google.rpc.Code} documents the pairs: what a
 * call's end reports to {@code charge-when} and to the end of a lease.
 */
final class StatusCodes {

    private StatusCodes() {
    }

    static int http(Status.Code code) {
        return switch (code) {
            case OK -> 200;
            case CANCELLED -> 499;
            case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> 400;
            case DEADLINE_EXCEEDED -> 504;
            case NOT_FOUND -> 404;
            case ALREADY_EXISTS, ABORTED -> 409;
            case PERMISSION_DENIED -> 403;
            case UNAUTHENTICATED -> 401;
            case RESOURCE_EXHAUSTED -> 429;
            case UNIMPLEMENTED -> 501;
            case UNAVAILABLE -> 503;
            case UNKNOWN, INTERNAL, DATA_LOSS -> 500;
        };
    }
}
