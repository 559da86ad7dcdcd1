package dev.sluice.internal;

/**
 * Whether an optional dependency is on the class path, asked without initialising it.
 *
 * <p>Not API: this package may change in any release.
 */
public final class Classes {

    private Classes() {
    }

    /** Whether {@code className} can be loaded by {@code loader}. */
    public static boolean present(String className, ClassLoader loader) {
        try {
            Class.forName(className, false, loader);
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
