import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The checks of .ci/release-check, run as a single-file program (java .ci/ReleaseCheck.java ...).
 *
 * <pre>
 * bundle BUNDLE.zip REACTOR VERSION FINGERPRINT
 *     The Central Portal bundle holds every published artifact of the reactor and nothing else:
 *     the parent pom, the BOM, and per jar module its pom, jar, sources jar, Javadoc jar and
 *     CycloneDX SBOM; each file with its .asc (a good signature by FINGERPRINT) and .md5, .sha1,
 *     .sha256, .sha512 (matching its bytes); every jar carries META-INF/LICENSE, the reactor's
 *     LICENSE; the BOM lists exactly the published jar modules.
 * same REACTOR_A REACTOR_B
 *     The jars and SBOMs two builds left in their modules' target directories are byte-identical.
 * </pre>
 *
 * Prints every problem it finds, then exits 1 if there was one.
 */
public final class ReleaseCheck {

    private static final List<String> CHECKSUMS = List.of("md5", "sha1", "sha256", "sha512");
    private static final Map<String, String> ALGORITHMS =
            Map.of("md5", "MD5", "sha1", "SHA-1", "sha256", "SHA-256", "sha512", "SHA-512");

    private final List<String> problems = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        ReleaseCheck check = new ReleaseCheck();
        if (args.length == 5 && args[0].equals("bundle")) {
            check.bundle(Path.of(args[1]), Path.of(args[2]), args[3], args[4]);
        } else if (args.length == 3 && args[0].equals("same")) {
            check.same(Path.of(args[1]), Path.of(args[2]));
        } else {
            System.err.println("usage: ReleaseCheck bundle BUNDLE.zip REACTOR VERSION FINGERPRINT"
                    + " | same REACTOR_A REACTOR_B");
            System.exit(2);
        }
        if (!check.problems.isEmpty()) {
            check.problems.forEach(p -> System.out.println("  PROBLEM: " + p));
            System.exit(1);
        }
    }

    // ---- bundle ------------------------------------------------------------------------------

    /** A module of the reactor: its directory, artifactId and packaging. */
    record Module(Path dir, String artifactId, String packaging) {
        boolean jar() {
            return packaging.equals("jar");
        }
    }

    void bundle(Path zip, Path reactor, String version, String fingerprint) throws Exception {
        List<Module> published = publishedModules(reactor);
        Path unpacked = Files.createTempDirectory("sluice-bundle");
        Map<String, byte[]> files = new TreeMap<>();
        try (ZipFile bundle = new ZipFile(zip.toFile())) {
            for (ZipEntry entry : bundle.stream().filter(e -> !e.isDirectory()).toList()) {
                try (InputStream in = bundle.getInputStream(entry)) {
                    files.put(entry.getName(), in.readAllBytes());
                }
            }
        }

        // Exactly the published modules, in dev/sluice/<artifactId>/<version>/.
        Set<String> expected = new TreeSet<>();
        Set<String> found = new TreeSet<>();
        for (Module module : published) {
            expected.add(module.artifactId());
        }
        for (String name : files.keySet()) {
            Matcher m = Pattern.compile("dev/sluice/([^/]+)/([^/]+)/[^/]+").matcher(name);
            if (!m.matches()) {
                problems.add("unexpected path in the bundle: " + name);
            } else {
                found.add(m.group(1));
                if (!m.group(2).equals(version)) {
                    problems.add(name + " has version " + m.group(2) + ", not " + version);
                }
            }
        }
        for (String missing : difference(expected, found)) {
            problems.add("published module " + missing + " is not in the bundle");
        }
        for (String extra : difference(found, expected)) {
            problems.add(extra + " is in the bundle but is not published (maven.deploy.skip=true)");
        }

        // Per module: the files Maven Central asks for, and an SBOM.
        byte[] license = Files.readAllBytes(reactor.resolve("LICENSE"));
        for (Module module : published) {
            String base = "dev/sluice/" + module.artifactId() + "/" + version + "/" + module.artifactId() + "-"
                    + version;
            List<String> required = new ArrayList<>(List.of(base + ".pom"));
            if (module.jar()) {
                required.addAll(List.of(base + ".jar", base + "-sources.jar", base + "-javadoc.jar",
                        base + "-cyclonedx.json"));
            }
            for (String name : required) {
                if (!files.containsKey(name)) {
                    problems.add(module.artifactId() + ": " + name + " is missing");
                }
            }
            byte[] pom = files.get(base + ".pom");
            if (pom != null) {
                String text = new String(pom, StandardCharsets.UTF_8);
                for (String element : List.of("name", "description")) {
                    if (!text.contains("<" + element + ">")) {
                        problems.add(base + ".pom has no <" + element + ">");
                    }
                }
                // The parent and the parentless BOM carry the metadata the others inherit.
                if (!text.contains("<parent>")) {
                    for (String element : List.of("url", "licenses", "developers", "scm")) {
                        if (!text.contains("<" + element + ">")) {
                            problems.add(base + ".pom has no <" + element + ">");
                        }
                    }
                }
            }
            byte[] sbom = files.get(base + "-cyclonedx.json");
            if (sbom != null) {
                String text = new String(sbom, StandardCharsets.UTF_8);
                String purl = "pkg:maven/dev.sluice/" + module.artifactId() + "@" + version;
                if (!text.contains("\"bomFormat\" : \"CycloneDX\"") || !text.contains(purl)) {
                    problems.add(base + "-cyclonedx.json is not a CycloneDX SBOM of " + purl);
                }
            }
        }

        // Every jar (main and tests jars; not sources or Javadoc) carries the licence.
        for (var file : files.entrySet()) {
            String name = file.getKey();
            if (name.endsWith(".jar") && !name.endsWith("-sources.jar") && !name.endsWith("-javadoc.jar")) {
                byte[] inJar = entry(file.getValue(), "META-INF/LICENSE");
                if (inJar == null) {
                    problems.add(name + " has no META-INF/LICENSE");
                } else if (!java.util.Arrays.equals(inJar, license)) {
                    problems.add(name + ": META-INF/LICENSE is not the repository's LICENSE");
                }
            }
        }

        // Every file: checksums that match, a good signature by the release key.
        int signed = 0;
        for (var file : files.entrySet()) {
            String name = file.getKey();
            if (name.endsWith(".asc") || CHECKSUMS.stream().anyMatch(c -> name.endsWith("." + c))) {
                continue;
            }
            for (String checksum : CHECKSUMS) {
                byte[] given = files.get(name + "." + checksum);
                String actual = digest(ALGORITHMS.get(checksum), file.getValue());
                if (given == null) {
                    problems.add(name + "." + checksum + " is missing");
                } else if (!new String(given, StandardCharsets.US_ASCII).trim().equalsIgnoreCase(actual)) {
                    problems.add(name + "." + checksum + " does not match the file");
                }
            }
            byte[] signature = files.get(name + ".asc");
            if (signature == null) {
                problems.add(name + ".asc is missing");
                continue;
            }
            Path data = unpacked.resolve(name);
            Files.createDirectories(data.getParent());
            Files.write(data, file.getValue());
            Path asc = unpacked.resolve(name + ".asc");
            Files.write(asc, signature);
            if (!goodSignature(asc, data, fingerprint)) {
                problems.add(name + ".asc is not a good signature by " + fingerprint);
            } else {
                signed++;
            }
        }

        // The BOM lists exactly the published jar modules.
        Module bom = published.stream().filter(m -> m.artifactId().equals("sluice-bom")).findFirst()
                .orElse(null);
        if (bom == null) {
            problems.add("no published module sluice-bom");
        } else {
            Set<String> listed = new TreeSet<>();
            Matcher m = Pattern.compile("<artifactId>([^<]+)</artifactId>")
                    .matcher(section(read(bom.dir().resolve("pom.xml")), "dependencyManagement"));
            while (m.find()) {
                listed.add(m.group(1));
            }
            Set<String> jars = new TreeSet<>();
            published.stream().filter(Module::jar).forEach(j -> jars.add(j.artifactId()));
            for (String missing : difference(jars, listed)) {
                problems.add("sluice-bom does not list the published " + missing);
            }
            for (String extra : difference(listed, jars)) {
                problems.add("sluice-bom lists " + extra + ", which is not a published jar module");
            }
        }

        System.out.printf("   %d files, %d artifacts signed by %s, modules %s%n", files.size(), signed, fingerprint,
                found);
    }

    /** The modules of the reactor's root pom (and the root itself) that are deployed. */
    private static List<Module> publishedModules(Path reactor) {
        List<Module> modules = new ArrayList<>();
        String root = read(reactor.resolve("pom.xml"));
        modules.add(module(reactor, root));
        Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(section(root, "modules"));
        while (m.find()) {
            Path dir = reactor.resolve(m.group(1));
            String pom = read(dir.resolve("pom.xml"));
            if (!pom.contains("<maven.deploy.skip>true</maven.deploy.skip>")) {
                modules.add(module(dir, pom));
            }
        }
        return modules;
    }

    private static Module module(Path dir, String pom) {
        String own = pom.replaceAll("(?s)<parent>.*?</parent>", "");
        Matcher id = Pattern.compile("<artifactId>([^<]+)</artifactId>").matcher(own);
        Matcher packaging = Pattern.compile("<packaging>([^<]+)</packaging>").matcher(own);
        if (!id.find()) {
            throw new IllegalStateException(dir + "/pom.xml has no artifactId");
        }
        return new Module(dir, id.group(1), packaging.find() ? packaging.group(1) : "jar");
    }

    private static boolean goodSignature(Path asc, Path data, String fingerprint) throws Exception {
        Process gpg = new ProcessBuilder("gpg", "--batch", "--status-fd", "1", "--verify", asc.toString(),
                data.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String status = new String(gpg.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return gpg.waitFor() == 0 && status.contains("[GNUPG:] VALIDSIG " + fingerprint + " ");
    }

    // ---- same --------------------------------------------------------------------------------

    void same(Path a, Path b) throws IOException {
        Map<String, Path> inA = artifacts(a);
        Map<String, Path> inB = artifacts(b);
        if (inA.isEmpty()) {
            problems.add("no jars in " + a);
        }
        for (String missing : difference(inA.keySet(), inB.keySet())) {
            problems.add(missing + " was built only by the first build");
        }
        for (String missing : difference(inB.keySet(), inA.keySet())) {
            problems.add(missing + " was built only by the second build");
        }
        int identical = 0;
        for (var artifact : inA.entrySet()) {
            Path other = inB.get(artifact.getKey());
            if (other == null) {
                continue;
            }
            byte[] x = Files.readAllBytes(artifact.getValue());
            byte[] y = Files.readAllBytes(other);
            if (java.util.Arrays.equals(x, y)) {
                identical++;
            } else {
                problems.add(artifact.getKey() + " differs: sha256 " + digest("SHA-256", x) + " vs "
                        + digest("SHA-256", y) + differingEntries(artifact.getKey(), x, y));
            }
        }
        System.out.printf("   %d artifacts compared, %d byte-identical%n", inA.size(), identical);
    }

    /** Jars and SBOMs in the target directories of the modules, by path relative to the reactor. */
    private static Map<String, Path> artifacts(Path reactor) throws IOException {
        Map<String, Path> found = new TreeMap<>();
        try (Stream<Path> paths = Files.walk(reactor)) {
            paths.filter(p -> p.getParent() != null && p.getParent().getFileName().toString().equals("target"))
                    .filter(p -> p.toString().endsWith(".jar") || p.toString().endsWith("-cyclonedx.json"))
                    .forEach(p -> found.put(reactor.relativize(p).toString(), p));
        }
        return found;
    }

    /** For a jar: the entries whose bytes differ, so the report says what is not reproducible. */
    private static String differingEntries(String name, byte[] x, byte[] y) throws IOException {
        if (!name.endsWith(".jar")) {
            return "";
        }
        Map<String, String> a = entryDigests(x);
        Map<String, String> b = entryDigests(y);
        Set<String> differing = new TreeSet<>();
        for (String entry : union(a.keySet(), b.keySet())) {
            if (!java.util.Objects.equals(a.get(entry), b.get(entry))) {
                differing.add(entry);
            }
        }
        return differing.isEmpty() ? " (same entries and contents: the archive metadata differs)"
                : " (entries " + differing.stream().limit(10).toList() + ")";
    }

    private static Map<String, String> entryDigests(byte[] jar) throws IOException {
        Map<String, String> digests = new TreeMap<>();
        try (var in = new java.util.zip.ZipInputStream(new java.io.ByteArrayInputStream(jar))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                digests.put(e.getName(), digest("SHA-256", in.readAllBytes()) + "@" + e.getTime());
            }
        }
        return digests;
    }

    // ---- helpers -----------------------------------------------------------------------------

    private static byte[] entry(byte[] jar, String name) throws IOException {
        try (var in = new java.util.zip.ZipInputStream(new java.io.ByteArrayInputStream(jar))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                if (e.getName().equals(name)) {
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    in.transferTo(out);
                    return out.toByteArray();
                }
            }
        }
        return null;
    }

    private static String section(String xml, String element) {
        Matcher m = Pattern.compile("(?s)<" + element + ">(.*?)</" + element + ">").matcher(xml);
        return m.find() ? m.group(1) : "";
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String digest(String algorithm, byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Set<String> difference(Set<String> a, Set<String> b) {
        Set<String> d = new TreeSet<>(a);
        d.removeAll(b);
        return d;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> u = new TreeSet<>(a);
        u.addAll(b);
        return u;
    }
}
