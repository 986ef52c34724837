package dev.jpipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The exported packages show no engine type: no public class of them implements or extends a type of
 * {@code dev.jpipeline.internal}, and no public or protected member takes, returns or holds one. What the engine
 * needs of a facade goes through ApiAccess's doors instead (issue 28: no public "Not API" methods).
 */
class ApiSurfaceTest {

    private static final List<String> EXPORTED = List.of("dev.jpipeline", "dev.jpipeline.copy",
        "dev.jpipeline.trace", "dev.jpipeline.prefetch");

    @Test
    void noPublicMemberOfTheApiNamesAnEngineType() throws Exception {
        List<String> leaks = new ArrayList<>();
        for (Class<?> type : publicTypes()) {
            Stream.concat(Stream.of(type.getSuperclass()), Arrays.stream(type.getInterfaces()))
                .filter(ApiSurfaceTest::internal)
                .forEach(t -> leaks.add(type.getName() + " extends or implements " + t.getName()));
            List<Executable> members = new ArrayList<>(Arrays.asList(type.getDeclaredMethods()));
            members.addAll(Arrays.asList(type.getDeclaredConstructors()));
            for (Executable m : members) {
                if (!visible(m.getModifiers()) || m.isSynthetic()) {
                    continue;
                }
                Stream.concat(Arrays.stream(m.getParameterTypes()),
                        m instanceof Method method ? Stream.of(method.getReturnType()) : Stream.empty())
                    .filter(ApiSurfaceTest::internal)
                    .forEach(t -> leaks.add(type.getName() + "." + name(m) + " names " + t.getName()));
            }
            for (Field f : type.getDeclaredFields()) {
                if (visible(f.getModifiers()) && internal(f.getType())) {
                    leaks.add(type.getName() + "." + f.getName() + " holds " + f.getType().getName());
                }
            }
        }
        assertEquals(List.of(), leaks, "engine types in the public API");
    }

    private static String name(Executable m) {
        return m instanceof Constructor<?> ? "<init>" : m.getName();
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static boolean internal(Class<?> type) {
        Class<?> t = type;
        while (t != null && t.isArray()) {
            t = t.getComponentType();
        }
        return t != null && t.getPackageName().startsWith("dev.jpipeline.internal");
    }

    /** The public classes of the exported packages, nested public classes included, from the compiled classes. */
    private static List<Class<?>> publicTypes() throws IOException, URISyntaxException, ClassNotFoundException {
        Path root = Path.of(Pipeline.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Class<?>> types = new ArrayList<>();
        for (String pkg : EXPORTED) {
            Path dir = root.resolve(pkg.replace('.', '/'));
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.filter(p -> p.toString().endsWith(".class")).toList()) {
                    String simple = file.getFileName().toString().replace(".class", "");
                    if (simple.equals("package-info") || simple.equals("module-info")) {
                        continue;
                    }
                    Class<?> type = Class.forName(pkg + "." + simple, false, Pipeline.class.getClassLoader());
                    if (Modifier.isPublic(type.getModifiers()) && !type.isAnonymousClass()
                        && (type.getEnclosingClass() == null || Modifier.isPublic(type.getEnclosingClass()
                            .getModifiers()))) {
                        types.add(type);
                    }
                }
            }
        }
        assertEquals(true, types.contains(Pipeline.class), "found the API's classes in " + root);
        return types;
    }
}
