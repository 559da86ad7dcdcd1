package dev.sluice.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The text Redis runs for a script of this package: Redis scripts cannot load code, so a script
 * that counts by the algorithms travels whole, composed here once when it is loaded (its SHA-1 is of
 * the composed text).
 *
 * <p>The text is {@code shared.lua}; then every file of {@code algorithms/} that its function of ids
 * names, and every file those {@code use}. An algorithm's file is a module: one branch of the
 * function {@code run_module(name)}, returning the algorithm's operations, which {@code use(name)}
 * runs at most once per call. A helper's file (one no id names: {@code bucket.lua}) is written at
 * the top, by a convention: a file that uses it names it by its file ({@code local bucket =
 * use('bucket')}) and calls {@code bucket.read}; composed, that line goes, {@code bucket.read}
 * becomes {@code bucket_read}, and {@code bucket.lua}'s own top-level names are prefixed alike,
 * its table of operations dropped. Then the script itself, the driver. Redis runs the whole text on
 * every call, and every function and table it creates costs the call: a lone decision is a few
 * dozen microseconds, and each function about one percent of it, while a function written in a
 * branch not taken costs nothing. So a call creates only the modules of the algorithms it counts
 * by, no table for a helper, and each
 * module only the operations the driver calls ({@code run.<operation>} in the driver or in
 * {@code shared.lua}): the others, and every {@code local function} no longer referenced, are left
 * out of that script's text.
 */
final class LuaSource {

    /** A line of {@code shared.lua}'s {@code algorithm(id)}: {@code if id == 1 then return 'token_bucket' end}. */
    private static final Pattern ALGORITHM = Pattern.compile("^ *if id == \\d+ then return '(\\w+)' end$",
            Pattern.MULTILINE);
    /** A module one file uses: {@code use('bucket')}. */
    private static final Pattern USE = Pattern.compile("use\\('(\\w+)'\\)");
    /** An operation a driver calls on a limit's module: {@code l.run.decide(}. */
    private static final Pattern RUN = Pattern.compile("\\brun\\.(\\w+)");
    /** A line of a module's table of operations, the {@code return} that ends its file: {@code   decide = decide,}. */
    private static final Pattern EXPORT = Pattern.compile("^  (\\w+) = [\\w.]+,\\n", Pattern.MULTILINE);
    /** A function at the top of a file, through the {@code end} at the start of a line that closes it. */
    private static final Pattern FUNCTION = Pattern.compile("^local function (\\w+)\\(.*?^end\\n",
            Pattern.MULTILINE | Pattern.DOTALL);
    /** A helper module one file uses, by its own name: {@code local bucket = use('bucket')}. */
    private static final Pattern HELPER = Pattern.compile("^local (\\w+) = use\\('\\1'\\)$", Pattern.MULTILINE);
    /** A module's table of operations, the {@code return} that ends its file. */
    private static final Pattern RETURN = Pattern.compile("^return \\{\\n", Pattern.MULTILINE);
    /** A name a file defines at its top: {@code local function read(} or {@code local states =}. */
    private static final Pattern TOP = Pattern.compile("^local (?:function )?(\\w+)", Pattern.MULTILINE);
    private static final Pattern COMMENT = Pattern.compile("--\\[\\[.*?--]]|--[^\\n]*", Pattern.DOTALL);
    /** A value a call starts from, at the top of a file: {@code local states = {}} or {@code local shift = 0}. */
    private static final Pattern PER_CALL = Pattern.compile("^local (\\w+) = (\\{}|-?\\d+)$", Pattern.MULTILINE);
    /**
     * Each driver's composed text, by its file: composing takes a few dozen regular-expression
     * passes (tens of milliseconds), and every store built would otherwise pay them again for texts
     * that never change.
     */
    private static final ConcurrentMap<String, String> COMPOSED = new ConcurrentHashMap<>();

    private LuaSource() {
    }

    /** A script that counts by no algorithm ({@code lease.lua}): its file alone. */
    static String alone(String file) {
        return load(file);
    }

    /** {@code driver} composed behind {@code shared.lua} and the algorithms' modules, as the class says. */
    static String compose(String driver) {
        return COMPOSED.computeIfAbsent(driver, LuaSource::composeOnce);
    }

    /**
     * {@code driver} as a Redis 7 function library: the text {@link #compose} gives, its part in front
     * of the driver run once, when the library is loaded, and the driver the body of a function named
     * {@code function}, which {@code FCALL} runs. A call so creates none of the functions and
     * tables in front, nor the modules (a module's operations are closures over the library's
     * values, the same for every call, so {@code use} keeps them from call to call). {@code KEYS}
     * and {@code ARGV} are values of the library, which each call sets before the driver runs
     * (Redis runs one function at a time), and so are the values a call starts from, written at
     * the top of a file as {@code local name = {}} or a number ({@code bucket.lua}'s cache of the
     * states read, the reservations' TTL shift): each call sets them again, so that nothing one
     * call leaves there reaches the next.
     */
    static Library library(String driver) {
        String text = compose(driver);
        String main = withHelpers(load(driver)) + '\n';
        if (!text.endsWith(main)) {
            // the driver changed while composing: it could not run on its own as a function's body
            throw new IllegalStateException(driver + " does not end its composed text as written");
        }
        String prefix = text.substring(0, text.length() - main.length());
        String sha = DecideScript.sha1(text);
        String function = "sluice_" + driver.replace(".lua", "") + "_" + sha;
        StringBuilder library = new StringBuilder("local KEYS, ARGV\n").append(prefix)
                .append("redis.register_function('").append(function).append("', function(keys, args)\n")
                .append("KEYS, ARGV = keys, args\n");
        Matcher value = PER_CALL.matcher(COMMENT.matcher(prefix).replaceAll(""));
        while (value.find()) {
            library.append(value.group(1)).append(" = ").append(value.group(2)).append('\n');
        }
        return new Library("sluice_" + sha, function, library.append(main).append("end)\n").toString());
    }

    /**
     * A Redis function library of one script: its {@code name}, the {@code function} in it that
     * {@code FCALL} names, and its {@code body}, the code after the {@code #!lua name=} line. Both
     * names carry the SHA-1 of the script's composed text, so two versions of Sluice on one Redis
     * load a library each.
     */
    record Library(String name, String function, String body) {

        /** What {@code FUNCTION LOAD} takes: the {@code #!lua name=} line, then the body. */
        String text() {
            return "#!lua name=" + name + "\n" + body;
        }
    }

    private static String composeOnce(String driver) {
        String shared = load("shared.lua");
        String main = load(driver);
        Set<String> wanted = new HashSet<>(names(RUN, shared));
        wanted.addAll(names(RUN, main));
        Set<String> algorithms = new LinkedHashSet<>(names(ALGORITHM, shared));
        Set<String> modules = new LinkedHashSet<>();
        Deque<String> pending = new ArrayDeque<>(algorithms);
        pending.addAll(names(USE, main));
        StringBuilder helpers = new StringBuilder();
        StringBuilder branches = new StringBuilder("run_module = function(name)\n");
        while (!pending.isEmpty()) {
            String module = pending.removeFirst();
            if (modules.add(module)) {
                String source = load("algorithms/" + module + ".lua");
                pending.addAll(names(USE, source));
                if (algorithms.contains(module)) {
                    branches.append(branches.indexOf("if") < 0 ? "if" : "elseif").append(" name == '").append(module)
                            .append("' then\n").append(withHelpers(source));
                } else {
                    helpers.append(flat(module, source));
                }
            }
        }
        String text = shared + '\n' + helpers + branches.append("end\nend\n") + withHelpers(main) + '\n';
        return withoutUnused(text, wanted);
    }

    /**
     * A helper module's file (one no algorithm id names: {@code bucket.lua}) written at the top of
     * the text: without its table of operations and its comments, each name it defines at the top of the file
     * prefixed with the module's name ({@code read} becomes {@code bucket_read}), so that a call
     * builds no table for it and its functions call each other directly.
     */
    private static String flat(String module, String source) {
        Matcher table = RETURN.matcher(source);
        // its comments go: they would name its functions by their new names
        String text = COMMENT.matcher(table.find() ? source.substring(0, table.start()) : source).replaceAll("");
        for (String name : names(TOP, text)) {
            text = text.replaceAll("(?<![.\\w])" + name + "\\b", module + "_" + name);
        }
        return text;
    }

    /**
     * {@code source} calling its helpers directly: {@code local bucket = use('bucket')} goes,
     * {@code bucket.read} becomes {@code bucket_read}.
     */
    private static String withHelpers(String source) {
        String text = source;
        for (String module : names(HELPER, source)) {
            text = text.replaceAll("(?m)^local " + module + " = use\\('" + module + "'\\)\\n", "")
                    .replaceAll("\\b" + module + "\\.(?!lua\\b)(\\w+)", module + "_$1");
        }
        return text;
    }

    /**
     * {@code text} without the operations no one calls (neither {@code wanted} nor named as
     * {@code module.operation} by another module) and without the functions nothing references,
     * until none is left.
     */
    private static String withoutUnused(String text, Set<String> wanted) {
        while (true) {
            String code = COMMENT.matcher(text).replaceAll("");
            String exports = EXPORT.matcher(code).replaceAll("");
            Matcher export = EXPORT.matcher(text);
            StringBuilder kept = new StringBuilder();
            while (export.find()) {
                String name = export.group(1);
                boolean used = wanted.contains(name) || Pattern.compile("\\." + name + "\\b").matcher(exports).find();
                export.appendReplacement(kept, used ? Matcher.quoteReplacement(export.group()) : "");
            }
            export.appendTail(kept);
            String next = kept.toString();
            Matcher function = FUNCTION.matcher(next);
            String unreferenced = COMMENT.matcher(next).replaceAll("");
            StringBuilder live = new StringBuilder();
            while (function.find()) {
                // modules may define functions of one name: a use is any mention but a definition
                String name = function.group(1);
                boolean used = count("\\b" + name + "\\b", unreferenced)
                        > count("local function " + name + "\\(", unreferenced);
                function.appendReplacement(live, used ? Matcher.quoteReplacement(function.group()) : "");
            }
            function.appendTail(live);
            next = live.toString();
            if (next.equals(text)) {
                return text;
            }
            text = next;
        }
    }

    private static int count(String regex, String text) {
        Matcher match = Pattern.compile(regex).matcher(text);
        int count = 0;
        while (match.find()) {
            count++;
        }
        return count;
    }

    /** The first group of each match of {@code pattern} in {@code text}, in order. */
    private static List<String> names(Pattern pattern, String text) {
        List<String> names = new ArrayList<>();
        Matcher match = pattern.matcher(text);
        while (match.find()) {
            names.add(match.group(1));
        }
        return names;
    }

    private static String load(String name) {
        try (InputStream in = LuaSource.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
