package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.LimitKeys;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Resp;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RType;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Java/Lua contract of decide.lua: algorithm ids, argument layout and reply width. */
class DecideScriptTest {

    private final RedissonClient client = Stores.client();

    /** shared.lua's {@code algorithm} function, as decide.lua is sent: id to the name of the Lua module it runs. */
    private static Map<Integer, String> luaTable() {
        String script = DecideScript.SCRIPT;
        int start = script.indexOf("local function algorithm(id)");
        String table = script.substring(start, script.indexOf("\nend\n", start));
        Map<Integer, String> functions = new HashMap<>();
        Matcher entry = Pattern.compile("if id == (\\d+) then return '(\\w+)' end").matcher(table);
        while (entry.find()) {
            functions.put(Integer.parseInt(entry.group(1)), entry.group(2));
        }
        return functions;
    }

    @Test
    void everyAlgorithmsIdNamesItsOwnFunctionInTheLuaTable() {
        Map<Integer, String> table = luaTable();
        assertThat(table).hasSize(Algorithm.rates().size());
        for (Algorithm algorithm : Algorithm.rates()) {
            assertThat(table.get(DecideScript.id(algorithm))).as(algorithm.configName())
                    .isEqualTo(algorithm.configName().replace('-', '_'));
        }
    }

    /** Each algorithm's id reaches its own counting in Redis: the state it writes has that algorithm's shape. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void everyAlgorithmWritesTheStateOfItsKind(Algorithm algorithm) {
        DecideScript script = new DecideScript(new RedissonCalls(client), new ManualClock());
        script.load();
        Limit limit = Limit.of("kind", "3/1h").withAlgorithm(algorithm);
        String tag = "kind-" + UUID.randomUUID();
        Decision decision = script.decide(tag, List.of(limit), 1).join().apply(0);
        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(decision.remaining()).isEqualTo(2);

        String key = LimitKeys.key(tag, limit);
        RType type = client.getKeys().getType(key);
        switch (algorithm) {
            // the buckets are one binary string each: time, debt, perToken, perMicro, burst
            case TOKEN_BUCKET, GCRA -> {
                assertThat(type).isEqualTo(RType.OBJECT);
                assertThat(StoredState.read(client, key).burst()).isEqualTo(3);
            }
            case SLIDING_LOG -> assertThat(type).isEqualTo(RType.LIST);
            default -> {
                assertThat(type).isEqualTo(RType.MAP);
                String field = algorithm == Algorithm.SLIDING_WINDOW ? "c" : "n";
                assertThat(client.getMap(key, StringCodec.INSTANCE).readAllKeySet()).as(algorithm.configName())
                        .contains(field).doesNotContainAnyElementsOf(
                                Stream.of("c", "n").filter(other -> !other.equals(field)).toList());
            }
        }
    }

    /**
     * A bucket's decision fetches its state once and writes it once: the read pass and the commit
     * share the read. Counted by a Redis of this test's own (INFO commandstats counts the commands
     * a script runs), for a lone decision, a batch, and several callers in one call.
     */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aBucketsDecisionReadsItsStateOnceAndWritesItOnce(Algorithm algorithm) {
        TestRedis own = TestRedis.start();
        RedissonClient ownClient = own.newClient();
        try {
            DecideScript script = new DecideScript(new RedissonCalls(ownClient), new ManualClock());
            script.load();
            Limit limit = Limit.of("once", "100/1h").withAlgorithm(algorithm);
            String tag = "once-" + UUID.randomUUID();
            script.decide(tag, List.of(limit), 1).join().apply(0);
            Resp.call(own.port(), "CONFIG", "RESETSTAT");
            // a warm key alone, then a batch of five on it, then three callers in one call
            assertThat(script.decide(tag, List.of(limit), 1).join().apply(0).remaining()).isEqualTo(98);
            assertThat(script.decide(tag, List.of(limit), 5).join().apply(4).remaining()).isEqualTo(93);
            List<Batch> callers = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                callers.add(new Batch(new StorageKey(tag + "-" + c, List.of(limit)), 2));
            }
            script.decide(callers).forEach(reply -> assertThat(reply.join().apply(1).remaining()).isEqualTo(98));
            Map<String, Long> calls = commandCalls(own.port());
            assertThat(calls.get("evalsha")).isEqualTo(3);
            assertThat(calls.get("get")).as("one read per caller and call").isEqualTo(5);
            assertThat(calls.get("set")).as("one write per caller and call").isEqualTo(5);
        } finally {
            ownClient.shutdown();
            own.stop();
        }
    }

    /** calls per command, from INFO commandstats: {@code cmdstat_get:calls=5,usec=...}. */
    private static Map<String, Long> commandCalls(int port) {
        Map<String, Long> calls = new HashMap<>();
        Matcher line = Pattern.compile("cmdstat_(\\w+):calls=(\\d+)")
                .matcher((String) Resp.call(port, "INFO", "commandstats"));
        while (line.find()) {
            calls.put(line.group(1), Long.parseLong(line.group(2)));
        }
        return calls;
    }

    @Test
    void theReplyHoldsReplyWidthValuesWhateverTheNumberOfRequests() {
        DecideScript script = new DecideScript(new RedissonCalls(client), new ManualClock());
        List<Limit> limits = List.of(Limit.of("width-a", "10/1h"),
                Limit.of("width-b", "10/1h").withAlgorithm(Algorithm.SLIDING_LOG),
                Limit.of("width-c", "10/1h").withAlgorithm(Algorithm.FIXED_WINDOW));
        String tag = "width-" + UUID.randomUUID();
        List<Object> reply = script.send(tag, limits, 4).join();
        assertThat(reply).hasSize(DecideScript.replyWidth(limits.size(), false));
        var decisions = script.decide(tag, limits, 4).join();
        for (int request = 0; request < 4; request++) {
            assertThat(decisions.apply(request).quotas()).extracting(Decision.Quota::remaining)
                    .as("request %d after the first four", request).containsOnly(5L - request);
        }
        // two of 200 fit: the reply is no longer for it, and each request still gets its own answer
        var last = script.decide(tag, limits, 200).join();
        assertThat(script.send(tag, limits, 200).join()).hasSize(DecideScript.replyWidth(limits.size(), true));
        assertThat(last.apply(0).remaining()).isEqualTo(1);
        assertThat(last.apply(1).remaining()).isZero();
        assertThat(last.apply(1).allowed()).isTrue();
        for (int request = 2; request < 200; request++) {
            assertThat(last.apply(request).allowed()).as("request %d", request).isFalse();
        }
    }

    /**
     * A reply outside what the limit could answer (remaining below zero or above the capacity, a
     * time in the past) is read as the nearest answer it could give, not as a failure: a failure
     * would fail the caller and count toward the circuit every caller shares.
     */
    @Test
    void aReplyBeyondTheLimitIsReadAsTheNearestAnswerItCouldGive() {
        Limit limit = Limit.of("beyond", 10, Duration.ofSeconds(100));
        List<Limit> limits = List.of(limit);
        // refused: fits, remaining, reset_us, retry_us, next_us after the eleven values of the admitted
        List<Object> refused = new java.util.ArrayList<>(java.util.Collections.nCopies(12, (Object) 1L));
        refused.set(0, 0L);
        refused.addAll(List.of(0L, -2L, -5_000_000L, -1L, -1L));
        Decision no = DecideReply.decision(refused, 0, limits);
        assertThat(no.outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(no.remaining()).isZero();
        assertThat(no.reset()).isZero();
        assertThat(no.retryAfter()).isZero();
        assertThat(no.binding().nextUnit()).isZero();
        // admitted: remaining 20 before, reset a + ceil((b + m c) / (d + m e)) = -5 s, next 3 s
        List<Object> admitted = List.of(1L, 20L, -5_000_000L, 0L, 0L, 1L, 0L, 3_000_000L, 0L, 0L, 1L, 0L);
        Decision yes = DecideReply.decision(admitted, 0, limits);
        assertThat(yes.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(yes.remaining()).as("capped at the capacity").isEqualTo(10);
        assertThat(yes.reset()).isZero();
        assertThat(yes.binding().nextUnit()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void aLeaseReplyBeyondTheCapIsReadAsTheNearestAnswerItCouldGive() {
        Limit cap = Limit.concurrency("beyond-cap", 2, Duration.ofSeconds(100));
        Decision over = LeaseScripts.decision(List.of(0L, -3L, 50_000_000L, -1L, 2_000_000L), cap);
        assertThat(over.outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(over.remaining()).isZero();
        assertThat(over.retryAfter()).isZero();
        assertThat(over.binding().nextUnit()).isEqualTo(Duration.ofSeconds(2));
        assertThat(LeaseScripts.decision(List.of(1L, 7L, 1L, 0L, 1L), cap).remaining()).as("capped at the cap")
                .isEqualTo(2);
    }

    @Test
    void anUnreadableReplyNamesTheScript() {
        List<Limit> limits = List.of(Limit.of("short", 1, Duration.ofSeconds(1)));
        assertThatThrownBy(() -> DecideReply.decision(List.of(1L, 1L), 0, limits))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("unreadable reply from decide.lua: ");
    }
}
