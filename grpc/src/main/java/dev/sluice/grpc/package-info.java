/**
 * Rate limits for grpc-java servers: {@link dev.sluice.grpc.RateLimitInterceptor}, a
 * {@code ServerInterceptor} that limits calls per full method name ({@code package.Service/Method})
 * or per service ({@code package.Service/*}) with Sluice's configuration vocabulary, refuses with
 * {@code RESOURCE_EXHAUSTED} and a {@code google.rpc.RetryInfo}, and never blocks a transport
 * thread while its store decides.
 *
 * <p>API: the one public type here changes only in a major release; the rest of the package is
 * package-private glue on {@code dev.sluice.web.HttpLimiter}.
 */
package dev.sluice.grpc;
