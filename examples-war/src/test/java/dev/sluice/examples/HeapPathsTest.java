package dev.sluice.examples;

import com.sun.management.HotSpotDiagnosticMXBean;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link HeapPaths} on a real heap dump of this JVM: each instance's path from the roots, and its name. */
class HeapPathsTest {

    /** Instances of a class of this test, named by a String field, as a web application's class loaders are. */
    static final class Named {
        private final String label;

        Named(String label) {
            this.label = label;
        }

        @Override
        public String toString() {
            return label;
        }
    }

    /** What holds them: a static list, a path the heap dump shows. */
    static final List<Named> HELD = new ArrayList<>();

    @Test
    void eachInstanceIsFoundHeldStronglyAndNamedByItsField() throws Exception {
        HELD.add(new Named("the first"));
        HELD.add(new Named("the second"));
        Path dump = Files.createTempDirectory("heap-paths").resolve("heap.hprof");
        try {
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpHeap(dump.toString(), true);
            List<HeapPaths.Held> held = HeapPaths.to(dump, Named.class.getName(), "label");
            assertThat(held).extracting(HeapPaths.Held::name).containsExactlyInAnyOrder("the first", "the second");
            assertThat(held).allMatch(h -> h.how() == HeapPaths.How.STRONGLY)
                    .allMatch(h -> h.path().contains("static HELD"));
            assertThat(HeapPaths.to(dump, Named.class.getName(), "absent")).extracting(HeapPaths.Held::name)
                    .containsOnlyNulls();
        } finally {
            HELD.clear();
            Files.deleteIfExists(dump);
            Files.deleteIfExists(dump.getParent());
        }
    }
}
