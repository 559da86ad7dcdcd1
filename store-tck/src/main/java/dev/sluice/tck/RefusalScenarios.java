package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static dev.sluice.tck.RateLimitStoreKit.assertWithinTheLimit;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * What a store declares unsupported, checked: each operation of a missing capability refuses
 * clearly, as {@link RateLimitStore}'s defaults do (an {@link UnsupportedOperationException}, thrown
 * or completing the stage, whose message names the store and the operation), and the refusal costs
 * the caller nothing: its next decision is the one it would have had. The tests are made from the
 * store's declaration, one container per missing capability; a store that supports everything
 * gets none.
 *
 * <p>Two capabilities are no operation that can refuse. {@link Capability#GIVE_BACK}: the SPI's
 * default {@code giveBack} does nothing (the slot passes unused), so the store may refuse or do
 * nothing, but gives nothing back. {@link Capability#CHANGED_LIMITS}: a store that does not keep a
 * caller's state over a changed limit still decides under the new one, within it.
 */
abstract class RefusalScenarios extends Scenarios {

    private static final Limit IN_FLIGHT = Limit.concurrency("refused-leases", 3, Duration.ofSeconds(100));

    RefusalScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    @TestFactory
    Stream<DynamicNode> whatTheStoreLeavesOutItRefusesClearly() {
        return Arrays.stream(Capability.values()).filter(c -> !supports(c))
                .map(c -> DynamicContainer.dynamicContainer(c + " (" + c.what() + ")", checks(c)));
    }

    private Stream<DynamicNode> checks(Capability capability) {
        Duration second = Duration.ofSeconds(1);
        return switch (capability) {
            case CHANGED_LIMITS -> Algorithm.rates().stream().map(a -> DynamicTest.dynamicTest(
                    a.configName() + ": decided under a changed limit, within it", () -> decidedUnderAChange(a)));
            case REFUNDS -> Stream.of(refusal(capability, "refund", (s, caller) -> s.refund(caller, List.of(FIVE))));
            case LEASES -> Stream.of(
                    refusal(capability, "acquireLease", (s, caller) -> s.acquireLease(caller, IN_FLIGHT, caller)),
                    refusal(capability, "releaseLease", (s, caller) -> s.releaseLease(caller, IN_FLIGHT, caller)));
            case RESERVATIONS -> Stream.of(
                    refusal(capability, "reserve", (s, caller) -> s.reserve(caller, List.of(FIVE), second)),
                    refusal(capability, "book", (s, caller) -> s.book(caller, List.of(FIVE), second)));
            case GIVE_BACK -> Stream.of(DynamicTest.dynamicTest(
                    "giveBack refused or doing nothing: nothing given back", this::nothingGivenBack));
            case PAUSES -> Stream.of(
                    refusal(capability, "pause", (s, caller) -> s.pause(caller, List.of(FIVE), second)));
            case RESETS -> Stream.of(refusal(capability, "reset", (s, caller) -> s.reset(caller, List.of(FIVE))));
            case OVERRIDES -> Stream.of(
                    refusal(capability, "overrides", (s, caller) -> s.overrides()),
                    refusal(capability, "putOverride", (s, caller) -> s.putOverride("refused-" + caller, "10/1m")));
        };
    }

    /**
     * One operation refused: between two decisions of one caller (five per 100 s, the clock still),
     * which must find four and then three left.
     */
    private DynamicTest refusal(Capability capability, String operation,
                                BiFunction<RateLimitStore, String, CompletionStage<?>> call) {
        return DynamicTest.dynamicTest(operation + " refused, naming the store and the operation; nothing lost", () -> {
            RateLimitStore store = newStore(new ManualClock());
            String caller = "refused-" + UUID.randomUUID();
            String where = storeName() + " without " + capability + ", " + operation;
            assertRemaining(store, caller, 4, where + ": before");
            Throwable refusal = outcome(() -> call.apply(store, caller), where);
            if (refusal == null) {
                fail(where + ": declared unsupported, yet it answered; it must refuse with an "
                        + "UnsupportedOperationException, as RateLimitStore's default does");
            }
            assertThat(refusal).as(where + ": the refusal").isInstanceOf(UnsupportedOperationException.class);
            assertNamesStoreAndOperation(refusal, store, operation, where);
            assertRemaining(store, caller, 3, where + ": after the refusal, the caller's state as it was");
        });
    }

    /** A given-up booking: the store may refuse it or do nothing (the SPI's default), but gives nothing back. */
    private void nothingGivenBack() {
        RateLimitStore store = newStore(new ManualClock());
        String caller = "refused-give-back-" + UUID.randomUUID();
        String where = storeName() + " without GIVE_BACK, giveBack";
        // The store's own booking when it books; else a decision's, with nothing to give back to.
        RateLimitStore.Booking booking = supports(Capability.RESERVATIONS)
                ? join(store.book(caller, List.of(FIVE), Duration.ZERO), where + ": book")
                : new RateLimitStore.Booking(join(store.decide(caller, List.of(FIVE)), where + ": decide"),
                        RateLimitStore.Booking.NOWHERE);
        assertThat(booking.decision().allowed()).as(where + ": the booking").isTrue();
        assertThat(booking.decision().remaining()).as(where + ": the booking's remaining").isEqualTo(4);
        Throwable refusal = outcome(() -> store.giveBack(caller, List.of(FIVE), booking), where);
        if (refusal != null) {
            assertThat(refusal).as(where + ": a refusal").isInstanceOf(UnsupportedOperationException.class);
            assertNamesStoreAndOperation(refusal, store, "giveBack", where);
        }
        assertRemaining(store, caller, 3, where + ": the unit given up stays spent (the slot passes unused)");
    }

    /** A store that does not carry state over a changed limit still decides under the new one, within it. */
    private void decidedUnderAChange(Algorithm algorithm) {
        RateLimitStore store = newStore(new ManualClock());
        String caller = "refused-change-" + UUID.randomUUID();
        String where = algorithm + " on " + storeName() + " without CHANGED_LIMITS";
        Limit before = FIVE.withAlgorithm(algorithm);
        Limit after = Limit.of(FIVE.policy(), 10, Duration.ofSeconds(200)).withAlgorithm(algorithm);
        for (int i = 0; i < 3; i++) {
            assertThat(join(store.decide(caller, List.of(before)), where).allowed()).as(where + ": " + i).isTrue();
        }
        Decision changed = join(store.decide(caller, List.of(after)), where + ": under " + after);
        assertWithinTheLimit(changed, after, where + ": under " + after);
        Decision back = join(store.decide(caller, List.of(before)), where + ": back under " + before);
        assertWithinTheLimit(back, before, where + ": back under " + before);
    }

    private static void assertNamesStoreAndOperation(Throwable refusal, RateLimitStore store, String operation,
                                                     String where) {
        String name = store.getClass().getSimpleName().isEmpty() ? store.getClass().getName()
                : store.getClass().getSimpleName();
        String message = String.valueOf(refusal.getMessage());
        assertThat(message).as(where + ": the refusal's message names the store").contains(name);
        String lower = message.toLowerCase(Locale.ROOT);
        assertThat(words(operation)).as(where + ": the refusal's message '" + message + "' names the operation, "
                + "by one of").anyMatch(lower::contains);
    }

    /** The words that name an operation in a refusal: its own name, or what the SPI's default says. */
    private static List<String> words(String operation) {
        return switch (operation) {
            case "acquireLease", "releaseLease" -> List.of("lease");
            case "book" -> List.of("book", "reserv"); // the default book reserves
            case "overrides", "putOverride" -> List.of("override");
            case "giveBack" -> List.of("giveback", "give back", "given back");
            default -> List.of(operation.toLowerCase(Locale.ROOT));
        };
    }

    private static void assertRemaining(RateLimitStore store, String caller, long remaining, String where) {
        Decision d = join(store.decide(caller, List.of(FIVE)), where);
        assertThat(d.allowed()).as(where + ": allowed").isTrue();
        assertThat(d.remaining()).as(where + ": remaining").isEqualTo(remaining);
    }

    /** A stage's failure, thrown or completing it; {@code null} when it completed normally. */
    private static Throwable outcome(Supplier<CompletionStage<?>> call, String where) {
        CompletionStage<?> stage;
        try {
            stage = call.get();
        } catch (CompletionException e) {
            return e.getCause();
        } catch (RuntimeException e) {
            return e;
        }
        assertThat(stage).as(where + ": a stage").isNotNull();
        try {
            stage.toCompletableFuture().get(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            return fail(where + ": no answer within " + PATIENT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail(where + ": interrupted");
        }
    }

    private static <T> T join(CompletionStage<T> stage, String where) {
        try {
            return stage.toCompletableFuture().get(PATIENT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            return fail(where + ": failed", e.getCause());
        } catch (TimeoutException e) {
            return fail(where + ": no answer within " + PATIENT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return fail(where + ": interrupted");
        }
    }
}
