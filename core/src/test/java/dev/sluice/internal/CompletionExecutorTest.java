package dev.sluice.internal;

import dev.sluice.testing.Waiting;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The limiter's default completion threads: reused, never held up by a blocked task, gone when idle or shut down. */
class CompletionExecutorTest {

    private static final String NAME = "sluice-completions";

    @Test
    void aBlockedTaskHoldsUpNoOtherAndThreadsAreReused() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, CompletionExecutor.EXECUTOR);
        try {
            // Runs while the first task still blocks: a one-thread pool would hold it back.
            CompletableFuture<String> other = CompletableFuture.supplyAsync(() -> Thread.currentThread().getName(),
                    CompletionExecutor.EXECUTOR);
            assertThat(other.get(5, TimeUnit.SECONDS)).isEqualTo(NAME);
        } finally {
            release.countDown();
        }
        blocked.get(5, TimeUnit.SECONDS);

        // Done one after another, tasks reuse idle threads instead of starting one each. Each is
        // given once the last one's thread is back in the pool, waiting for work: the task's
        // result reaches this thread before that, and this thread may well run first.
        Set<Thread> ran = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < 200; i++) {
            Thread thread = CompletableFuture.supplyAsync(Thread::currentThread, CompletionExecutor.EXECUTOR)
                    .get(5, TimeUnit.SECONDS);
            ran.add(thread);
            awaitIdle(thread);
        }
        assertThat(ran).as("threads that ran 200 tasks in turn").hasSizeLessThan(100);
        assertThat(threads().stream().map(Thread::getContextClassLoader).toList())
                .as("the threads keep no application's loader").containsOnlyNulls();
    }

    @Test
    void threadsEndOnShutdownAndComeBackWhenNeeded() throws Exception {
        CompletableFuture.runAsync(() -> { }, CompletionExecutor.EXECUTOR).get(5, TimeUnit.SECONDS);
        CompletionExecutor.shutdown();
        awaitNoThread();

        CompletableFuture<String> again = CompletableFuture.supplyAsync(() -> Thread.currentThread().getName(),
                CompletionExecutor.EXECUTOR);
        assertThat(again.get(5, TimeUnit.SECONDS)).isEqualTo(NAME);
        // No shutdown this time: the threads end by themselves once idle.
        awaitNoThread();
    }

    private static List<Thread> threads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(NAME) && t.isAlive())
                .toList();
    }

    /** Waits, a bounded time, until {@code thread} waits for its pool's next task (or has ended). */
    private static void awaitIdle(Thread thread) {
        Waiting.untilTimedWaiting(thread);
    }

    private static void awaitNoThread() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CompletionExecutor.IDLE_SECONDS + 10);
        while (System.nanoTime() < deadline && !threads().isEmpty()) {
            Thread.sleep(50);
        }
        assertThat(threads()).isEmpty();
    }
}
