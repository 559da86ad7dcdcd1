package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.LimitKeys;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Resp;
import dev.sluice.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * decide.lua as a Redis function, on both clients, against the test Redis whatever its version:
 * where it has functions (7 and later: {@code REDIS_URL}, as CI's matrix sets it) decisions are
 * {@code FCALL}s; where it has none (the embedded 6.2) they are {@code EVALSHA}s, and {@code FCALL}
 * is not tried per call. Counted by Redis itself, in {@code INFO commandstats} and {@code errorstats}.
 */
class RedisFunctionsTest {

    private static final int PORT = TestRedis.shared().port();
    private static final boolean FUNCTIONS = hasFunctions();
    private static RedissonClient redisson;
    private static RedisClient lettuce;
    private static StatefulRedisConnection<String, String> connection;

    private static synchronized RedisCalls calls(String client) {
        if (client.equals("redisson")) {
            if (redisson == null) {
                redisson = TestRedis.shared().newClient();
            }
            return new RedissonCalls(redisson);
        }
        if (lettuce == null) {
            lettuce = RedisClient.create(TestRedis.shared().url());
            connection = lettuce.connect();
        }
        return LettuceCalls.borrowing(connection);
    }

    private static ScriptStore store(String client, ManualClock time) {
        calls(client); // opens the client
        return client.equals("redisson") ? RedisStore.forTesting(redisson, time)
                : LettuceStore.builder().connection(connection).timeSourceForTesting(time).build();
    }

    @AfterAll
    static void shutdown() {
        if (redisson != null) {
            redisson.shutdown();
        }
        if (lettuce != null) {
            connection.close();
            lettuce.shutdown();
        }
    }

    private static boolean hasFunctions() {
        try {
            Resp.call(PORT, "FUNCTION", "STATS");
            return true;
        } catch (IllegalStateException e) {
            assertThat(e.getMessage()).as("a Redis before 7").containsIgnoringCase("unknown command");
            return false;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"redisson", "lettuce"})
    void decisionsAreFunctionCallsWhereRedisHasFunctionsAndScriptsElsewhere(String client) {
        ManualClock time = new ManualClock();
        ScriptStore store = store(client, time);
        try {
            Limit limit = Limit.of("functions", "10/1h");
            String run = UUID.randomUUID().toString();
            assertThat(store.decide(run + "-warm-up", List.of(limit)).toCompletableFuture().join().allowed()).isTrue();
            int decisions = 200;
            Map<String, Long> before = counts();
            for (int i = 0; i < decisions; i++) {
                Decision decision = store.decide(run + "-" + i, List.of(limit)).toCompletableFuture().join();
                assertThat(decision.allowed()).as(decision.toString()).isTrue();
                assertThat(decision.remaining()).isEqualTo(9);
            }
            Map<String, Long> grown = grown(before, counts());
            if (FUNCTIONS) {
                assertThat(grown.get("fcall")).as("FCALLs").isGreaterThanOrEqualTo(decisions);
                assertThat(grown.get("evalsha")).as("EVALSHAs").isLessThan(decisions);
            } else {
                assertThat(grown.get("evalsha")).as("EVALSHAs").isGreaterThanOrEqualTo(decisions);
                // an FCALL a Redis 6 does not know is an error it counts, not a command
                assertThat(grown.get("ERR")).as("commands Redis did not know").isLessThan(decisions);
            }
        } finally {
            store.close();
        }
    }

    /**
     * The library flushed mid-run ({@code FUNCTION FLUSH}; on a Redis without functions, the script
     * cache: {@code SCRIPT FLUSH}) while decisions are in flight: every decision is answered by
     * Redis, and each caller is charged exactly once per admitted decision (the clock stands
     * still, so nothing refills). The library is back afterwards.
     */
    @ParameterizedTest
    @ValueSource(strings = {"redisson", "lettuce"})
    void aFlushMidRunLosesNoDecisionAndChargesNoneTwice(String client) {
        ManualClock time = new ManualClock();
        ScriptStore store = store(client, time);
        try {
            Limit limit = Limit.of("flush", "100/1h");
            String run = UUID.randomUUID().toString();
            int callers = 20;
            int rounds = 10;
            store.decide(run + "-warm-up", List.of(limit)).toCompletableFuture().join();
            for (int round = 0; round < rounds; round++) {
                List<CompletableFuture<Decision>> flight = new ArrayList<>();
                for (int c = 0; c < callers; c++) {
                    flight.add(store.decide(run + "-" + c, List.of(limit)).toCompletableFuture());
                }
                if (round % 3 == 1) {
                    Resp.call(PORT, FUNCTIONS ? "FUNCTION" : "SCRIPT", "FLUSH");
                }
                for (CompletableFuture<Decision> answer : flight) {
                    Decision decision = answer.join();
                    assertThat(decision.storeFailed()).as(decision.toString()).isFalse();
                    assertThat(decision.allowed()).as(decision.toString()).isTrue();
                }
            }
            for (int c = 0; c < callers; c++) {
                Decision last = store.decide(run + "-" + c, List.of(limit)).toCompletableFuture().join();
                assertThat(last.remaining()).as("caller " + c + " after " + (rounds + 1) + " decisions")
                        .isEqualTo(100 - rounds - 1);
            }
            if (FUNCTIONS) {
                assertThat((List<?>) Resp.call(PORT, "FUNCTION", "LIST", "LIBRARYNAME", DecideScript.LIBRARY.name()))
                        .as("the library, loaded again").hasSize(1);
            }
        } finally {
            store.close();
        }
    }

    /**
     * A call starts from nothing a call before it left in the library: {@code bucket.lua}'s states
     * read are forgotten. Here a refused decision read the bucket (empty) and wrote nothing; the
     * key deleted, the next call must find the bucket full, not the empty one the last call read.
     */
    @ParameterizedTest
    @ValueSource(strings = {"redisson", "lettuce"})
    void aCallDoesNotSeeTheStatesTheCallBeforeItRead(String client) {
        DecideScript script = new DecideScript(calls(client), new ManualClock());
        script.load();
        assertThat(script.functions()).as("FCALL where Redis has functions").isEqualTo(FUNCTIONS);
        Limit limit = Limit.of("forget", "1/1h");
        String tag = "forget-" + UUID.randomUUID();
        assertThat(script.decide(tag, List.of(limit), 1).join().apply(0).allowed()).isTrue();
        assertThat(script.decide(tag, List.of(limit), 1).join().apply(0).allowed()).isFalse();
        Resp.call(PORT, "DEL", LimitKeys.key(tag, limit));
        assertThat(script.decide(tag, List.of(limit), 1).join().apply(0).allowed()).as("a bucket deleted is full")
                .isTrue();
    }

    /**
     * A user who may not load functions (an ACL without {@code @scripting} but for the script
     * commands: {@code NOPERM} on a Redis 7, an unknown command on 6.2) gets a store that sends
     * scripts, decided once at load: its decisions are answered, as {@code EVALSHA}s.
     */
    @ParameterizedTest
    @ValueSource(strings = {"redisson", "lettuce"})
    void aUserWhoMayNotLoadFunctionsIsSentScripts(String client) {
        String user = "sluice-scripts-only-" + UUID.randomUUID();
        Resp.call(PORT, "ACL", "SETUSER", user, "on", ">only-for-this-test", "~*", "&*", "+@all", "-@scripting",
                "+eval", "+evalsha", "+script|load", "+script|exists");
        URI url = URI.create(TestRedis.shared().url());
        RedissonClient ownRedisson = null;
        RedisClient ownLettuce = null;
        try {
            RedisCalls calls;
            if (client.equals("redisson")) {
                Config config = new Config();
                config.useSingleServer().setAddress(url.toString()).setUsername(user)
                        .setPassword("only-for-this-test");
                ownRedisson = Redisson.create(config);
                calls = new RedissonCalls(ownRedisson);
            } else {
                ownLettuce = RedisClient.create(RedisURI.builder().withHost(url.getHost()).withPort(url.getPort())
                        .withAuthentication(user, "only-for-this-test".toCharArray()).build());
                calls = LettuceCalls.borrowing(ownLettuce.connect());
            }
            DecideScript script = new DecideScript(calls, new ManualClock());
            script.load();
            assertThat(script.functions()).as("FCALL").isFalse();
            Limit limit = Limit.of("scripts-only", "5/1h");
            String tag = "scripts-only-" + UUID.randomUUID();
            long before = stat("commandstats", "cmdstat_evalsha:calls=");
            for (int i = 0; i < 3; i++) {
                assertThat(script.decide(tag, List.of(limit), 1).join().apply(0).remaining()).isEqualTo(4 - i);
            }
            assertThat(stat("commandstats", "cmdstat_evalsha:calls=") - before).isGreaterThanOrEqualTo(3);
        } finally {
            if (ownRedisson != null) {
                ownRedisson.shutdown();
            }
            if (ownLettuce != null) {
                ownLettuce.shutdown();
            }
            Resp.call(PORT, "ACL", "DELUSER", user);
        }
    }

    /** A client the Lettuce store makes never replays an FCALL after a reconnect: it may have run, and charged. */
    @Test
    void lettuceNeverReplaysAFunctionCall() {
        var replayed = LettuceStore.clientOptions().getReplayFilter();
        for (CommandType type : List.of(CommandType.FCALL, CommandType.EVALSHA, CommandType.EVAL)) {
            assertThat(replayed.test(new Command<>(type, new StatusOutput<>(StringCodec.UTF8)))).as(type.name())
                    .isTrue();
        }
        assertThat(replayed.test(new Command<>(CommandType.GET, new StatusOutput<>(StringCodec.UTF8)))).isFalse();
    }

    /** Calls of {@code fcall} and {@code evalsha}, and errors {@code ERR}, so far. */
    private static Map<String, Long> counts() {
        Map<String, Long> counts = new HashMap<>();
        counts.put("fcall", stat("commandstats", "cmdstat_fcall:calls="));
        counts.put("evalsha", stat("commandstats", "cmdstat_evalsha:calls="));
        counts.put("ERR", stat("errorstats", "errorstat_ERR:count="));
        return counts;
    }

    private static long stat(String section, String prefix) {
        for (String line : ((String) Resp.call(PORT, "INFO", section)).split("\r?\n")) {
            if (line.startsWith(prefix)) {
                String rest = line.substring(prefix.length());
                int end = rest.indexOf(',');
                return Long.parseLong(end < 0 ? rest.trim() : rest.substring(0, end));
            }
        }
        return 0;
    }

    private static Map<String, Long> grown(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> grown = new HashMap<>();
        after.forEach((name, count) -> grown.put(name, count - before.get(name)));
        return grown;
    }
}
