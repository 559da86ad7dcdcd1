package dev.sluice;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shape of the code base, read from the main sources of every module: packages form no
 * import cycle, nor do types across packages, core carries neither Redis nor HTTP, the web layer
 * does not need the Redis store, and the public line holds: {@link #API} lists every public type
 * of every published package, and the plumbing packages ({@link #PLUMBING}) are used only by the
 * modules that build on them.
 *
 * <p>A dependency is any reference to a type by its package, in an import or written out in code
 * (comments and string literals are not code); between types, also a type of the same package
 * named in code.
 */
class ArchitectureTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern REFERENCE = Pattern.compile("\\b((?:[a-z][a-z0-9_]*\\.)+)([A-Z]\\w*)");
    private static final Pattern PACKAGE = Pattern.compile("^package ([a-z0-9_.]+);", Pattern.MULTILINE);
    private static final Pattern PUBLIC_TYPE = Pattern.compile(
            "^public (?:(?:final|abstract|sealed|non-sealed|static) )*(?:class|interface|enum|record|@interface) "
            + "(\\w+)", Pattern.MULTILINE);
    private static final Pattern COMMENT_OR_STRING = Pattern.compile(
            "/\\*.*?\\*/|//[^\\n]*|\"(?:\\\\.|[^\"\\\\])*\"|'(?:\\\\.|[^'\\\\])'", Pattern.DOTALL);

    /**
     * The public API of the published artifacts, in one place: package -> its public types. A type
     * made public, or a new package, fails {@link #everyPublicTypeIsOnThePublicLine} until it is
     * listed here, deliberately. {@code dev.sluice.spi} is the store authors' part.
     */
    private static final Map<String, Set<String>> API = Map.ofEntries(
            Map.entry("dev.sluice", Set.of("Algorithm", "CircuitState", "ConcurrencyLimiter", "Decision",
                    "DecisionListener", "FailureMode", "Lease", "Limit", "RateLimiter", "StoreError", "TimeSource")),
            Map.entry("dev.sluice.spi",
                    Set.of("CompiledLimit", "ImmediateStore", "LimitKeys", "RateLimitStore", "StoreProvider")),
            Map.entry("dev.sluice.spi.algorithm", Set.of("FixedWindow", "Gcra", "RateAlgorithm", "ReturnedSlots",
                    "SlidingLog", "SlidingWindow", "TokenBucket", "Verdict")),
            Map.entry("dev.sluice.memory", Set.of("MemoryStore", "MemoryStoreProvider")),
            Map.entry("dev.sluice.metrics", Set.of("MicrometerMetrics", "OptionalMetrics")),
            Map.entry("dev.sluice.outbound",
                    Set.of("Permits", "PermitUnavailableException", "Priority", "RateLimitedHttpClient")),
            Map.entry("dev.sluice.redis",
                    Set.of("LettuceStore", "LettuceStoreProvider", "RedisStore", "RedisStoreProvider")),
            Map.entry("dev.sluice.web", Set.of("Answer", "HeaderStyle", "HttpLimiter", "KeyResolver", "LimitResolver",
                    "PolicyRegistry", "PolicyView", "RequestAttributes", "RequestView", "Verdict")),
            Map.entry("dev.sluice.servlet", Set.of("ConsoleServlet", "RateLimitFilter")),
            Map.entry("dev.sluice.jaxrs", Set.of("ConsoleResource", "RateLimit", "RateLimitClientFilter",
                    "RateLimitExceededException", "RateLimitFeature", "ServletClientAddress")),
            Map.entry("dev.sluice.spring.boot",
                    Set.of("SluiceAutoConfiguration", "SluiceProperties", "SluiceParameters",
                            "SluiceReactiveAutoConfiguration")),
            Map.entry("dev.sluice.gateway", Set.of("SluiceGatewayAutoConfiguration", "SluiceRateLimiter")),
            Map.entry("dev.sluice.grpc", Set.of("RateLimitInterceptor")),
            Map.entry("dev.sluice.postgres", Set.of("PostgresStore", "PostgresStoreProvider")),
            Map.entry("dev.sluice.spring.client", Set.of("RateLimitClientInterceptor", "RateLimitExchangeFilter")),
            Map.entry("dev.sluice.webflux", Set.of("RateLimitWebFilter")));

    /** The store test kit (sluice-store-tck): API as well, for the tests of store authors. */
    private static final Map<String, Set<String>> TEST_KIT =
            Map.of("dev.sluice.tck", Set.of("Capability", "RateLimitStoreKit"));

    /**
     * Plumbing: public only so Sluice's own modules can share it, never API. Package -> the modules
     * that may refer to it. The benchmarks are not published and measure the stores' internals.
     */
    private static final Map<String, Set<String>> PLUMBING = Map.of(
            "dev.sluice.internal", Set.of("core", "redis", "postgres", "web", "benchmarks"),
            "dev.sluice.web.internal",
            Set.of("web", "servlet-filter", "jaxrs-feature", "spring-boot-starter", "benchmarks"),
            "dev.sluice.servlet.internal", Set.of("servlet-filter", "spring-boot-starter"));

    /** Modules that are not published: examples and benchmarks may have packages of their own. */
    private static final Set<String> UNPUBLISHED = Set.of("benchmarks", "examples-war", "examples-spring-boot");

    /** Module directory -> package -> packages it refers to (any, not only Sluice's). */
    private static final Map<String, Map<String, Set<String>>> MODULES = new TreeMap<>();
    /** Package -> its public top-level types, in published modules. */
    private static final Map<String, Set<String>> PUBLIC_TYPES = new TreeMap<>();
    /** Top-level type (qualified) -> the qualified names it refers to, Sluice's or not, of every module. */
    private static final Map<String, Set<String>> TYPES = new TreeMap<>();

    static {
        read();
    }

    @Test
    void sluicePackagesFormNoImportCycle() {
        // The SPI is the API's other face: a store receives the API's values and the API holds a
        // store, as Failsafe's spi and API refer to each other. The two count as one node here;
        // typesOfDifferentPackagesFormNoCycle keeps a circle from running through their types.
        Map<String, Set<String>> graph = new TreeMap<>();
        MODULES.values().forEach(packages -> packages.forEach((from, to) -> graph
                .computeIfAbsent(layer(from), k -> new TreeSet<>())
                .addAll(to.stream().filter(p -> p.startsWith("dev.sluice")).map(ArchitectureTest::layer).toList())));
        graph.values().forEach(to -> to.retainAll(graph.keySet()));
        graph.forEach((from, to) -> to.remove(from));
        assertThat(cycles(graph)).as("groups of packages that refer to each other").isEmpty();
    }

    /**
     * The rule above lets the API and its SPI refer to each other as packages; between their types
     * no circle may run: the SPI speaks the API's values ({@code Limit}, {@code Decision}), which
     * know nothing of stores, and no SPI type refers to a limiter that holds a store.
     */
    @Test
    void typesOfDifferentPackagesFormNoCycle() {
        Map<String, Set<String>> graph = new TreeMap<>();
        TYPES.forEach((from, to) -> graph.put(from, new TreeSet<>(to)));
        graph.values().forEach(to -> to.retainAll(graph.keySet()));
        graph.forEach((from, to) -> to.remove(from));
        assertThat(cycles(graph)).as("groups of types, of more than one package, that refer to each other")
                .filteredOn(group -> group.stream().map(ArchitectureTest::packageOf).distinct().count() > 1)
                .isEmpty();
    }

    @Test
    void coreCarriesNeitherRedisNorHttp() {
        assertThat(referencesOf("core", "org.redisson", "io.netty", "jakarta.", "javax.servlet", "javax.ws",
                "dev.sluice.web", "dev.sluice.redis")).isEmpty();
    }

    @Test
    void theWebLayerNeedsNoRedisAndNoContainerApi() {
        assertThat(referencesOf("web", "org.redisson", "io.netty", "dev.sluice.redis", "jakarta.", "javax.servlet",
                "javax.ws"))
                .isEmpty();
    }

    @Test
    void internalIsBelowTheApi() {
        Map<String, Set<String>> core = MODULES.get("core");
        Set<String> upward = new TreeSet<>();
        core.getOrDefault("dev.sluice.internal", Set.of()).stream()
                .filter(p -> p.startsWith("dev.sluice") && !p.equals("dev.sluice.internal")).forEach(upward::add);
        assertThat(upward).as("packages dev.sluice.internal refers to").isEmpty();
    }

    @Test
    void plumbingIsUsedOnlyByTheModulesThatBuildOnIt() {
        List<String> found = new ArrayList<>();
        PLUMBING.forEach((plumbing, allowed) -> MODULES.keySet().stream().filter(module -> !allowed.contains(module))
                .forEach(module -> referencesOf(module, plumbing + ".").forEach(p -> found.add(module + ": " + p))));
        MODULES.forEach((module, packages) -> packages.forEach((from, to) -> to.stream()
                .filter(p -> PLUMBING.keySet().stream().anyMatch(p::equals))
                .filter(p -> !PLUMBING.get(p).contains(module))
                .forEach(p -> found.add(module + ": " + from + " -> " + p))));
        assertThat(found).as("references to plumbing from modules not allowed to use it (%s)", PLUMBING).isEmpty();
    }

    @Test
    void everyPublishedPackageIsEitherApiOrPlumbing() {
        Set<String> unclassified = new TreeSet<>();
        MODULES.forEach((module, packages) -> packages.keySet().stream()
                .filter(p -> !UNPUBLISHED.contains(module) && !API.containsKey(p) && !TEST_KIT.containsKey(p)
                        && !PLUMBING.containsKey(p))
                .forEach(p -> unclassified.add(module + ": " + p)));
        assertThat(unclassified).as("packages neither in API nor in PLUMBING").isEmpty();
    }

    @Test
    void everyPublicTypeIsOnThePublicLine() {
        Map<String, Set<String>> published = new TreeMap<>(PUBLIC_TYPES);
        published.keySet().retainAll(API.keySet());
        assertThat(published).as("public types of the API packages (make a type package-private, or list it in API)")
                .isEqualTo(new TreeMap<>(API));
    }

    @Test
    void theTestKitsPublicTypesAreListed() {
        Map<String, Set<String>> published = new TreeMap<>(PUBLIC_TYPES);
        published.keySet().retainAll(TEST_KIT.keySet());
        assertThat(published).as("public types of the store test kit").isEqualTo(new TreeMap<>(TEST_KIT));
    }

    @Test
    void theWebApiStandsApartFromTheCoresPlumbing() {
        assertThat(MODULES.get("web").get("dev.sluice.web")).as("what dev.sluice.web refers to")
                .noneMatch(p -> p.startsWith("dev.sluice.internal"));
    }

    private static String packageOf(String type) {
        return type.substring(0, type.lastIndexOf('.'));
    }

    private static String layer(String pkg) {
        // The web API is a facade over its plumbing, which receives the API's values (Failsafe's
        // FailsafeExecutor and its internal executors): the two count as one node too. That no
        // public signature of dev.sluice.web names a plumbing type is the web module's WebApiTest.
        return pkg.equals("dev.sluice.spi") ? "dev.sluice"
                : pkg.equals("dev.sluice.web.internal") ? "dev.sluice.web" : pkg;
    }

    private static List<String> referencesOf(String module, String... prefixes) {
        List<String> found = new ArrayList<>();
        MODULES.get(module).forEach((from, to) -> to.stream()
                .filter(p -> Stream.of(prefixes).anyMatch(p::startsWith))
                .forEach(p -> found.add(from + " -> " + p)));
        return found;
    }

    private static void read() {
        Map<String, Map<String, Set<String>>> modules = MODULES;
        Map<String, String> codes = new TreeMap<>();
        try (Stream<Path> dirs = Files.list(ROOT)) {
            for (Path module : dirs.filter(d -> Files.isDirectory(d.resolve("src/main/java"))).toList()) {
                Map<String, Set<String>> packages = new TreeMap<>();
                try (Stream<Path> files = Files.walk(module.resolve("src/main/java"))) {
                    for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                        String source = Files.readString(file);
                        Matcher declared = PACKAGE.matcher(source);
                        if (!declared.find()) {
                            continue;
                        }
                        Set<String> to = packages.computeIfAbsent(declared.group(1), k -> new TreeSet<>());
                        Matcher publicType = PUBLIC_TYPE.matcher(source);
                        if (!UNPUBLISHED.contains(module.getFileName().toString()) && publicType.find()) {
                            PUBLIC_TYPES.computeIfAbsent(declared.group(1), k -> new TreeSet<>())
                                    .add(publicType.group(1));
                        }
                        String code = COMMENT_OR_STRING.matcher(source.substring(declared.end())).replaceAll(" ");
                        String name = file.getFileName().toString().replace(".java", "");
                        String type = declared.group(1) + "." + name;
                        boolean declaresType = !name.contains("-"); // not package-info, module-info
                        Set<String> types = declaresType ? TYPES.computeIfAbsent(type, k -> new TreeSet<>())
                                : new TreeSet<>();
                        if (declaresType) {
                            codes.merge(type, code, String::concat);
                        }
                        Matcher reference = REFERENCE.matcher(code);
                        while (reference.find()) {
                            String target = reference.group(1);
                            to.add(target.substring(0, target.length() - 1));
                            types.add(target + reference.group(2));
                        }
                    }
                }
                modules.put(module.getFileName().toString(), packages);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // a type of the same package needs no import: named in code, it is referred to
        Map<String, Pattern> samePackage = new TreeMap<>();
        TYPES.keySet().stream().collect(Collectors.groupingBy(ArchitectureTest::packageOf)).forEach((pkg, types) ->
                samePackage.put(pkg, Pattern.compile("\\b(" + types.stream().map(t -> t.substring(pkg.length() + 1))
                        .collect(Collectors.joining("|")) + ")\\b")));
        codes.forEach((type, code) -> {
            Matcher named = samePackage.get(packageOf(type)).matcher(code);
            while (named.find()) {
                TYPES.get(type).add(packageOf(type) + "." + named.group(1));
            }
        });
        assertThat(modules).as("modules read from " + ROOT).containsKeys("core", "redis", "web");
    }

    /** Strongly connected groups of more than one node (Tarjan). */
    private static List<Set<String>> cycles(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        List<Set<String>> groups = new ArrayList<>();
        for (String start : graph.keySet()) {
            if (!index.containsKey(start)) {
                connect(start, graph, index, low, stack, groups);
            }
        }
        return groups;
    }

    private static void connect(String v, Map<String, Set<String>> graph, Map<String, Integer> index,
                                Map<String, Integer> low, Deque<String> stack, List<Set<String>> groups) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.push(v);
        for (String w : graph.get(v)) {
            if (!index.containsKey(w)) {
                connect(w, graph, index, low, stack, groups);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (stack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> group = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                group.add(w);
            } while (!w.equals(v));
            if (group.size() > 1) {
                groups.add(group);
            }
        }
    }
}
