package dev.sluice.web;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The adapter seam may be built on the web layer's plumbing, but never shows it: no public or
 * protected signature of {@code dev.sluice.web} names a {@code dev.sluice.web.internal} type, so an
 * adapter compiles against the API alone.
 */
class WebApiTest {

    private static final List<Class<?>> API = List.of(Answer.class, Answer.Header.class, HeaderStyle.class,
            HttpLimiter.class, HttpLimiter.Builder.class, KeyResolver.class, LimitResolver.class,
            PolicyRegistry.class, PolicyView.class, RequestAttributes.class, RequestView.class, Verdict.class);

    @Test
    void noPublicSignatureNamesThePlumbing() {
        List<String> found = new ArrayList<>();
        for (Class<?> type : API) {
            List<Type> shown = new ArrayList<>(List.of(type.getGenericInterfaces()));
            shown.add(type.getGenericSuperclass());
            for (Method method : type.getDeclaredMethods()) {
                if (visible(method.getModifiers())) {
                    shown.add(method.getGenericReturnType());
                    signature(method, shown);
                }
            }
            Stream.of(type.getDeclaredConstructors()).filter(c -> visible(c.getModifiers()))
                    .forEach(c -> signature(c, shown));
            for (Field field : type.getDeclaredFields()) {
                if (visible(field.getModifiers())) {
                    shown.add(field.getGenericType());
                }
            }
            shown.stream().filter(t -> t != null && t.getTypeName().contains("dev.sluice.web.internal"))
                    .forEach(t -> found.add(type.getName() + ": " + t.getTypeName()));
        }
        assertThat(found).as("plumbing types in the web API's signatures").isEmpty();
    }

    @Test
    void theTestAdapterIsBuiltOnTheApiAlone() throws Exception {
        String adapter = Files.readString(Path.of("src/test/java/dev/sluice/web/JdkServerAdapter.java"));
        assertThat(adapter).contains("implements HttpHandler").doesNotContain("internal.")
                .doesNotContain("dev.sluice.spi").doesNotContain("dev.sluice.memory");
        assertThat(adapter.lines().count()).as("lines of the adapter").isLessThan(100);
    }

    private static void signature(Executable executable, List<Type> shown) {
        shown.addAll(List.of(executable.getGenericParameterTypes()));
        shown.addAll(List.of(executable.getGenericExceptionTypes()));
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }
}
