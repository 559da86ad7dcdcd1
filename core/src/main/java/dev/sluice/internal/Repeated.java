package dev.sluice.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A store's answer given again from this JVM's copy, without asking the store (a rejection of the
 * Redis store's local rejections): known apart from the store's answers by its type, at no cost,
 * so that metrics count it. The stages derived from it are plain. Not API.
 *
 * @param <T> the answer's type
 */
public final class Repeated<T> extends CompletableFuture<T> {

    private Repeated() {
    }

    /** A stage completed with {@code answer}, marked as repeated. */
    public static <T> Repeated<T> of(T answer) {
        Repeated<T> repeated = new Repeated<>();
        repeated.complete(answer);
        return repeated;
    }

    /** Whether {@code answer} was repeated from a local copy (not a stage derived from one). */
    public static boolean is(CompletionStage<?> answer) {
        return answer instanceof Repeated;
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }
}
