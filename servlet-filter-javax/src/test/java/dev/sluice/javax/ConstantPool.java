package dev.sluice.javax;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The UTF-8 entries of a class file's constant pool (JVMS 4.4): every class, field and method
 * name, descriptor, signature and string constant the class refers to, so a servlet type left
 * anywhere in the bytecode shows up here.
 */
final class ConstantPool {

    private ConstantPool() {
    }

    static List<String> utf8Entries(byte[] classFile) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort(); // minor version
        in.readUnsignedShort(); // major version
        int count = in.readUnsignedShort();
        List<String> utf8 = new ArrayList<>();
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8.add(in.readUTF()); // Utf8: u2 length + modified UTF-8, as readUTF reads it
                case 3, 4 -> in.skipNBytes(4); // Integer, Float
                case 5, 6 -> { // Long, Double take two slots
                    in.skipNBytes(8);
                    i++;
                }
                case 7, 8, 16, 19, 20 -> in.skipNBytes(2); // Class, String, MethodType, Module, Package
                case 9, 10, 11, 12, 17, 18 -> in.skipNBytes(4); // refs, NameAndType, Dynamic, InvokeDynamic
                case 15 -> in.skipNBytes(3); // MethodHandle
                default -> throw new IOException("unknown constant pool tag " + tag + " at index " + i);
            }
        }
        return utf8;
    }
}
