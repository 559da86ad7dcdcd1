package dev.sluice.examples;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The shortest paths from the garbage collector's roots to the instances of one class, read from
 * an HPROF heap dump: what a heap analyser shows first, for a test that finds a class loader
 * still reachable on a CI machine, where only the failure's message is seen. Each instance is
 * classified by the weakest kind of reference its best path needs ({@link How}).
 *
 * <p>A heap dump does not show every root: the JVM's own (compiled code, the compiler's
 * threads, a class's own fields such as its {@code ClassValue} map) are missing, so an object
 * held only by those appears reachable only through whatever else refers to it, or not at all.
 *
 * <p>Reads the HPROF 1.0.2 records that HotSpot writes; dumps under 2 GB.
 */
final class HeapPaths {

    private static final int OBJECT = 2;

    private final ByteBuffer dump;
    private int idSize;
    private final Map<Long, String> strings = new HashMap<>();
    private final Map<Long, String> classNames = new HashMap<>();
    private final Map<Long, ClassDump> classes = new HashMap<>();
    private long[] ids = new long[1 << 16];
    private int[] positions = new int[1 << 16];
    private int count;
    private final Map<Long, Root> roots = new HashMap<>();
    private final Map<Integer, Long> threadsBySerial = new HashMap<>();

    /** Why an object is a root; {@code thread} is the serial number of the thread it belongs to, or 0. */
    private record Root(String kind, int thread) {
    }

    private record ClassDump(long superclass, long loader, long[] statics, String[] staticNames, int[] fieldTypes,
                             String[] fieldNames) {
    }

    private HeapPaths(ByteBuffer dump) {
        this.dump = dump;
    }

    /** How an object is held, from the strongest to the weakest reference its best path needs. */
    enum How {
        /** Through strong references only: the program holds it. */
        STRONGLY,
        /**
         * Also through a {@code Finalizer}'s referent: it waits for a finalizer the JVM has not
         * queued, which it does once nothing else holds the object.
         */
        AWAITING_FINALIZATION,
        /** Also through a {@code SoftReference}: kept until memory runs short. */
        SOFTLY,
        /** By nothing but weak or phantom references: collectable. */
        WEAKLY
    }

    /**
     * How one instance is held, and its path from a root, one step per reference.
     *
     * @param name the instance's name (see {@link #to}), to tell instances of one class apart;
     *             {@code null} if it has none
     */
    record Held(How how, String name, String path) {
        @Override
        public String toString() {
            return (name == null ? "" : "'" + name + "' ")
                    + (how == How.STRONGLY ? "" : how.name().toLowerCase(Locale.ROOT) + ": ")
                    + path;
        }
    }

    /**
     * How each instance of {@code className} in the dump is held, each named by its String field
     * {@code nameField} (the nearest declared, in its class or a superclass).
     */
    static List<Held> to(Path hprof, String className, String nameField) throws IOException {
        MappedByteBuffer map;
        try (FileChannel channel = FileChannel.open(hprof)) {
            map = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
        }
        HeapPaths heap = new HeapPaths(map);
        heap.read();
        List<Integer> targets = new ArrayList<>();
        for (int i = 0; i < heap.count; i++) {
            if (heap.dump.get(heap.positions[i]) == 0x21 && className.equals(heap.classOf(i))) {
                targets.add(i);
            }
        }
        Map<How, int[]> parents = new EnumMap<>(How.class);
        List<Held> held = new ArrayList<>();
        for (int target : targets) {
            How how = How.WEAKLY;
            for (How through : List.of(How.STRONGLY, How.AWAITING_FINALIZATION, How.SOFTLY)) {
                if (parents.computeIfAbsent(through, heap::parents)[target] != -2) {
                    how = through;
                    break;
                }
            }
            held.add(new Held(how, heap.stringField(target, nameField),
                    how == How.WEAKLY ? heap.describe(target) : heap.path(parents.get(how), target)));
        }
        return held;
    }

    private void read() {
        int p = 0;
        while (dump.get(p) != 0) {
            p++;
        }
        idSize = dump.getInt(p + 1);
        p += 1 + 4 + 8;
        while (p < dump.limit()) {
            int tag = dump.get(p) & 0xff;
            int length = dump.getInt(p + 5);
            int body = p + 9;
            if (tag == 0x01) {
                byte[] utf8 = new byte[length - idSize];
                dump.get(body + idSize, utf8);
                strings.put(id(body), new String(utf8, StandardCharsets.UTF_8));
            } else if (tag == 0x02) {
                classNames.put(id(body + 4), strings.get(id(body + 8 + idSize)));
            } else if (tag == 0x0C || tag == 0x1C) {
                readHeap(body, body + length);
            }
            p = body + length;
        }
        long[][] byId = new long[count][];
        for (int i = 0; i < count; i++) {
            byId[i] = new long[] {ids[i], positions[i]};
        }
        Arrays.sort(byId, (a, b) -> Long.compare(a[0], b[0]));
        for (int i = 0; i < count; i++) {
            ids[i] = byId[i][0];
            positions[i] = (int) byId[i][1];
        }
    }

    private void readHeap(int p, int end) {
        while (p < end) {
            int tag = dump.get(p++) & 0xff;
            switch (tag) {
                case 0xFF -> p += root(p, "unknown root", 0, 0);
                case 0x01 -> p += root(p, "JNI global", 0, idSize);
                case 0x02 -> p += root(p, "JNI local", dump.getInt(p + idSize), 8);
                case 0x03 -> p += root(p, "on the stack", dump.getInt(p + idSize), 8);
                case 0x04 -> p += root(p, "on the native stack", dump.getInt(p + idSize), 4);
                case 0x05 -> p += root(p, "system class", 0, 0);
                case 0x06 -> p += root(p, "thread block", dump.getInt(p + idSize), 4);
                case 0x07 -> p += root(p, "monitor in use", 0, 0);
                case 0x08 -> {
                    threadsBySerial.put(dump.getInt(p + idSize), id(p));
                    p += root(p, "live thread", 0, 8);
                }
                case 0x20 -> p = readClass(p);
                case 0x21 -> {
                    add(id(p), p - 1);
                    p += idSize + 4 + idSize;
                    p += 4 + dump.getInt(p);
                }
                case 0x22 -> {
                    add(id(p), p - 1);
                    p += idSize + 4;
                    p += 4 + idSize + dump.getInt(p) * idSize;
                }
                case 0x23 -> {
                    add(id(p), p - 1);
                    p += idSize + 4;
                    int length = dump.getInt(p);
                    p += 4 + 1 + length * size(dump.get(p + 4));
                }
                default -> throw new IllegalStateException("unknown heap-dump record " + tag + " at " + p);
            }
        }
    }

    private int root(int p, String kind, int thread, int more) {
        roots.putIfAbsent(id(p), new Root(kind, thread));
        return idSize + more;
    }

    private String describe(Root root) {
        Long thread = threadsBySerial.get(root.thread());
        return root.kind() + (thread == null ? "" : " of thread '" + threadName(index(thread)) + "'");
    }

    private int readClass(int p) {
        int start = p - 1;
        long id = id(p);
        long superclass = id(p + idSize + 4);
        long loader = id(p + 2 * idSize + 4);
        p += 7 * idSize + 4 + 4;
        int constants = dump.getShort(p) & 0xffff;
        p += 2;
        for (int i = 0; i < constants; i++) {
            p += 2 + 1 + size(dump.get(p + 2));
        }
        int staticCount = dump.getShort(p) & 0xffff;
        p += 2;
        List<Long> statics = new ArrayList<>();
        List<String> staticNames = new ArrayList<>();
        for (int i = 0; i < staticCount; i++) {
            String name = strings.get(id(p));
            int type = dump.get(p + idSize);
            if (type == OBJECT) {
                statics.add(id(p + idSize + 1));
                staticNames.add(name);
            }
            p += idSize + 1 + size(type);
        }
        int fieldCount = dump.getShort(p) & 0xffff;
        p += 2;
        int[] types = new int[fieldCount];
        String[] names = new String[fieldCount];
        for (int i = 0; i < fieldCount; i++) {
            names[i] = strings.get(id(p));
            types[i] = dump.get(p + idSize);
            p += idSize + 1;
        }
        classes.put(id, new ClassDump(superclass, loader, statics.stream().mapToLong(Long::longValue).toArray(),
                staticNames.toArray(String[]::new), types, names));
        add(id, start);
        return p;
    }

    private void add(long id, int position) {
        if (count == ids.length) {
            ids = Arrays.copyOf(ids, count * 2);
            positions = Arrays.copyOf(positions, count * 2);
        }
        ids[count] = id;
        positions[count++] = position;
    }

    /**
     * Breadth-first from the roots, through references as weak as {@code through}: each object's
     * parent index, -1 for a root, -2 if unreached.
     */
    private int[] parents(How through) {
        int[] parent = new int[count];
        Arrays.fill(parent, -2);
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        for (long root : roots.keySet()) {
            int i = index(root);
            if (i >= 0 && parent[i] == -2) {
                parent[i] = -1;
                queue.add(i);
            }
        }
        while (!queue.isEmpty()) {
            int from = queue.poll();
            for (long to : references(from, through)) {
                int i = index(to);
                if (i >= 0 && parent[i] == -2) {
                    parent[i] = from;
                    queue.add(i);
                }
            }
        }
        return parent;
    }

    private long[] references(int i, How through) {
        int p = positions[i];
        int tag = dump.get(p) & 0xff;
        List<Long> out = new ArrayList<>();
        if (tag == 0x20) {
            ClassDump type = classes.get(ids[i]);
            out.add(type.loader());
            out.add(type.superclass());
            for (long s : type.statics()) {
                out.add(s);
            }
        } else if (tag == 0x21) {
            long classId = id(p + 1 + idSize + 4);
            out.add(classId);
            boolean reference = isA(classId, "java.lang.ref.Reference");
            boolean keepReferent = reference
                    && (through.compareTo(How.AWAITING_FINALIZATION) >= 0 && isA(classId, "java.lang.ref.Finalizer")
                    || through.compareTo(How.SOFTLY) >= 0 && isA(classId, "java.lang.ref.SoftReference"));
            forEachField(i, (name, type, at) -> {
                if (type == OBJECT && !(reference && !keepReferent && name.equals("referent"))) {
                    out.add(id(at));
                }
            });
        } else if (tag == 0x22) {
            out.add(id(p + 1 + idSize + 8));
            int length = dump.getInt(p + 1 + idSize + 4);
            for (int k = 0; k < length; k++) {
                out.add(id(p + 1 + idSize + 8 + idSize + k * idSize));
            }
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    /** The path to {@code target}, one step per line: how each object holds the next. */
    private String path(int[] parent, int target) {
        List<String> steps = new ArrayList<>();
        for (int i = target; i >= 0; i = parent[i]) {
            int from = parent[i];
            steps.add(describe(i) + (from < 0 ? " [" + describe(roots.get(ids[i])) + "]" : ""));
            if (from >= 0) {
                steps.add("." + fieldName(from, ids[i]) + " ->");
            }
        }
        Collections.reverse(steps);
        return String.join(" ", steps);
    }

    private String fieldName(int from, long to) {
        int tag = dump.get(positions[from]) & 0xff;
        if (tag == 0x20) {
            ClassDump type = classes.get(ids[from]);
            for (int k = 0; k < type.statics().length; k++) {
                if (type.statics()[k] == to) {
                    return "static " + type.staticNames()[k];
                }
            }
            return type.loader() == to ? "<loader>" : "<superclass>";
        }
        if (tag == 0x22) {
            return "[]";
        }
        String[] name = {"<class>"};
        forEachField(from, (field, type, at) -> {
            if (type == OBJECT && id(at) == to) {
                name[0] = field;
            }
        });
        return name[0];
    }

    private String describe(int i) {
        int p = positions[i];
        return switch (dump.get(p) & 0xff) {
            case 0x20 -> "class " + className(ids[i]);
            case 0x21 -> classOf(i)
                    + (isA(id(p + 1 + idSize + 4), "java.lang.Thread") ? " '" + threadName(i) + "'" : "");
            case 0x22 -> className(id(p + 1 + idSize + 8));
            default -> "primitive array";
        };
    }

    private String threadName(int thread) {
        String name = thread < 0 ? null : stringField(thread, "name");
        return name == null ? "?" : name;
    }

    /**
     * The value of {@code instance}'s String field {@code name} (the first found, from its own class
     * up), Latin-1 only; {@code null} if it has none or it is not set.
     */
    private String stringField(int instance, String name) {
        long[] ref = {0};
        boolean[] found = {false};
        forEachField(instance, (each, type, at) -> {
            if (!found[0] && each.equals(name) && type == OBJECT) {
                ref[0] = id(at);
                found[0] = true;
            }
        });
        int string = index(ref[0]);
        long[] value = {0};
        if (string >= 0) {
            forEachField(string, (field, type, at) -> {
                if (field.equals("value") && type == OBJECT) {
                    value[0] = id(at);
                }
            });
        }
        int bytes = index(value[0]);
        if (bytes < 0) {
            return null;
        }
        int p = positions[bytes];
        byte[] text = new byte[dump.getInt(p + 1 + idSize + 4)];
        dump.get(p + 1 + idSize + 9, text);
        return new String(text, StandardCharsets.ISO_8859_1); // compact Latin-1 strings, as these names are
    }

    private interface FieldVisitor {
        void field(String name, int type, int at);
    }

    private void forEachField(int instance, FieldVisitor visitor) {
        int p = positions[instance];
        int at = p + 1 + idSize + 4 + idSize + 4;
        for (ClassDump type = classes.get(id(p + 1 + idSize + 4)); type != null;
                type = classes.get(type.superclass())) {
            for (int f = 0; f < type.fieldTypes().length; f++) {
                visitor.field(type.fieldNames()[f], type.fieldTypes()[f], at);
                at += size(type.fieldTypes()[f]);
            }
        }
    }

    private boolean isA(long classId, String name) {
        for (long c = classId; classes.containsKey(c); c = classes.get(c).superclass()) {
            if (name.equals(className(c))) {
                return true;
            }
        }
        return false;
    }

    private String classOf(int instance) {
        return className(id(positions[instance] + 1 + idSize + 4));
    }

    private String className(long classId) {
        String name = classNames.get(classId);
        return name == null ? "?" : name.replace('/', '.');
    }

    private int index(long id) {
        int i = id == 0 ? -1 : Arrays.binarySearch(ids, 0, count, id);
        return Math.max(i, -1);
    }

    private long id(int p) {
        return idSize == 8 ? dump.getLong(p) : dump.getInt(p) & 0xffffffffL;
    }

    private int size(int type) {
        return switch (type) {
            case OBJECT -> idSize;
            case 4, 8 -> 1;
            case 5, 9 -> 2;
            case 6, 10 -> 4;
            case 7, 11 -> 8;
            default -> throw new IllegalStateException("unknown field type " + type);
        };
    }
}
