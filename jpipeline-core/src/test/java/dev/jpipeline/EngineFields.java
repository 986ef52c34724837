package dev.jpipeline;

import java.lang.reflect.Field;

/**
 * Reflective access to the engine's private fields for tests in this module: reading them, and fast-forwarding a
 * pipeline's state (round counters, barrier words) to where a long run would have taken it.
 */
final class EngineFields {

    private EngineFields() {
    }

    /** The value of field {@code name} of {@code target}, declared in its class or a superclass. */
    static Object get(Object target, String name) throws ReflectiveOperationException {
        return find(target, name).get(target);
    }

    /** Sets field {@code name} of {@code target}, declared in its class or a superclass. */
    static void set(Object target, String name, Object value) throws ReflectiveOperationException {
        find(target, name).set(target, value);
    }

    /** A PhaseBarrier's word (phase, expected and arrived packed). */
    static long word(Object barrier) {
        return ((dev.jpipeline.internal.PhaseBarrier) barrier).snapshot();
    }

    /** Overwrites a PhaseBarrier's word (of this process: its HeapBarrierWord): only while no thread uses it. */
    static void setWord(Object barrier, long value) throws ReflectiveOperationException {
        Object word = get(barrier, "word");
        ((long[]) get(word, "words"))[(int) get(word, "index")] = value;
    }

    /** Side {@code side}'s ("produced" or "consumed") barriers, [group][stage], behind a block-scope handle. */
    static Object[][] groups(Pipeline pipe, String side) throws ReflectiveOperationException {
        return (Object[][]) get(get(pipe.handle(), side), "groups");
    }

    private static Field find(Object target, String name) throws NoSuchFieldException {
        for (Class<?> c = target.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException next) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException(name);
    }
}
