package dev.sluice.internal;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The limiter's own timer: orTimeout's behaviour, and a thread that does not outlive its use. */
class TimeoutsTest {

    @Test
    void aLateFutureFailsWithATimeoutAndAnEarlyOneIsLeftAlone() {
        CompletableFuture<String> late = new CompletableFuture<>();
        assertThat(Timeouts.orTimeout(late, TimeUnit.MILLISECONDS.toNanos(20))).isSameAs(late);
        assertThatThrownBy(late::join).isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(TimeoutException.class);

        CompletableFuture<String> early = Timeouts.orTimeout(new CompletableFuture<>(), TimeUnit.SECONDS.toNanos(30));
        early.complete("answer");
        assertThat(early.join()).isEqualTo("answer");
        CompletableFuture<String> done = CompletableFuture.completedFuture("done");
        assertThat(Timeouts.orTimeout(done, 1)).isSameAs(done);
    }

    @Test
    void theThreadEndsOnShutdownAndAfterIdlingAndComesBackWhenNeeded() throws Exception {
        CompletableFuture<String> pending = Timeouts.orTimeout(new CompletableFuture<>(), TimeUnit.SECONDS.toNanos(30));
        // Looked at while a timeout is pending: an idle thread may already have ended when this
        // thread gets to look, if it was descheduled for longer than the idle time.
        assertThat(Timeouts.running()).isTrue();
        assertThat(timerThreadContextLoaders()).as("the thread keeps no application's loader").containsOnlyNulls();
        pending.complete("x");
        Timeouts.shutdown();
        awaitNoTimerThread();

        CompletableFuture<String> again = Timeouts.orTimeout(new CompletableFuture<>(),
                TimeUnit.MILLISECONDS.toNanos(20));
        assertThatThrownBy(again::join).hasCauseInstanceOf(TimeoutException.class);
        // No shutdown this time: the thread ends by itself once nothing is pending.
        awaitNoTimerThread();
    }

    private static java.util.List<ClassLoader> timerThreadContextLoaders() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("sluice-timeouts"))
                .map(Thread::getContextClassLoader).toList();
    }

    private static void awaitNoTimerThread() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Timeouts.IDLE_SECONDS + 10);
        while (System.nanoTime() < deadline && Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("sluice-timeouts") && t.isAlive())) {
            Thread.sleep(50);
        }
        assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName).doesNotContain("sluice-timeouts");
    }
}
