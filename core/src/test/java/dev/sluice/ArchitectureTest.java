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
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shape of the code base, read from the main sources of every module: packages form no
 * import cycle, core carries neither Redis nor HTTP, the web layer does not need the Redis store,
 * {@code dev.sluice.internal} sits below the API, and only the modules that build on it (core,
 * the Redis store, the web layer) reach into it.
 *
 * <p>A dependency is any reference to a type by its package, in an import or written out in code
 * (comments and string literals are not code).
 */
class ArchitectureTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern REFERENCE = Pattern.compile("\\b((?:[a-z][a-z0-9_]*\\.)+)[A-Z]");
    private static final Pattern PACKAGE = Pattern.compile("^package ([a-z0-9_.]+);", Pattern.MULTILINE);
    private static final Pattern COMMENT_OR_STRING = Pattern.compile(
            "/\\*.*?\\*/|//[^\\n]*|\"(?:\\\\.|[^\"\\\\])*\"|'(?:\\\\.|[^'\\\\])'", Pattern.DOTALL);

    /** Module directory -> package -> packages it refers to (any, not only Sluice's). */
    private static final Map<String, Map<String, Set<String>>> MODULES = read();

    @Test
    void sluicePackagesFormNoImportCycle() {
        Map<String, Set<String>> graph = new TreeMap<>();
        MODULES.values().forEach(packages -> packages.forEach((from, to) -> graph.computeIfAbsent(from, k -> new TreeSet<>())
                .addAll(to.stream().filter(p -> p.startsWith("dev.sluice")).toList())));
        graph.values().forEach(to -> to.retainAll(graph.keySet()));
        graph.forEach((from, to) -> to.remove(from));
        assertThat(cycles(graph)).as("groups of packages that refer to each other").isEmpty();
    }

    @Test
    void coreCarriesNeitherRedisNorHttp() {
        assertThat(referencesOf("core", "org.redisson", "io.netty", "jakarta.", "javax.servlet", "javax.ws", "dev.sluice.web",
                "dev.sluice.redis")).isEmpty();
    }

    @Test
    void theWebLayerNeedsNoRedisAndNoContainerApi() {
        assertThat(referencesOf("web", "org.redisson", "io.netty", "dev.sluice.redis", "jakarta.", "javax.servlet", "javax.ws"))
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

    /**
     * {@code dev.sluice.internal} (and the packages under it) is the plumbing of the modules that
     * build the API and its stores: core, the Redis store, and the web layer the adapters share
     * (its durations, timeouts and completion threads), plus the benchmarks, which are not
     * published and measure the stores' keys. The adapters and examples stand on public API alone,
     * so any other module referring to it fails here.
     */
    @Test
    void onlyCoreTheRedisStoreAndTheWebLayerReachIntoInternal() {
        Set<String> allowed = Set.of("core", "redis", "web", "benchmarks");
        List<String> found = new ArrayList<>();
        MODULES.keySet().stream().filter(module -> !allowed.contains(module))
                .forEach(module -> referencesOf(module, "dev.sluice.internal").forEach(p -> found.add(module + ": " + p)));
        assertThat(found).as("references to dev.sluice.internal from modules outside %s", new TreeSet<>(allowed)).isEmpty();
    }

    private static List<String> referencesOf(String module, String... prefixes) {
        List<String> found = new ArrayList<>();
        MODULES.get(module).forEach((from, to) -> to.stream()
                .filter(p -> Stream.of(prefixes).anyMatch(p::startsWith))
                .forEach(p -> found.add(from + " -> " + p)));
        return found;
    }

    private static Map<String, Map<String, Set<String>>> read() {
        Map<String, Map<String, Set<String>>> modules = new TreeMap<>();
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
                        Matcher reference = REFERENCE.matcher(COMMENT_OR_STRING.matcher(source.substring(declared.end())).replaceAll(" "));
                        while (reference.find()) {
                            String target = reference.group(1);
                            to.add(target.substring(0, target.length() - 1));
                        }
                    }
                }
                modules.put(module.getFileName().toString(), packages);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        assertThat(modules).as("modules read from " + ROOT).containsKeys("core", "redis", "web");
        return modules;
    }

    /** Strongly connected groups of more than one package (Tarjan). */
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

    private static void connect(String v, Map<String, Set<String>> graph, Map<String, Integer> index, Map<String, Integer> low,
                                Deque<String> stack, List<Set<String>> groups) {
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
