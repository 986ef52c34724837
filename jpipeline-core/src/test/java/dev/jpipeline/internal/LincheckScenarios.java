package dev.jpipeline.internal;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;

/**
 * Hand-written Lincheck scenarios, for the races that random scenarios reach too rarely: what Lincheck's Kotlin
 * {@code scenario { initial { actor(...) } parallel { thread { ... } } }} builds, written for Java.
 *
 * <pre>{@code
 * scenario(Test.class)
 *     .initial("arrive", 0)
 *     .thread(1, "arrive", 1, "land", 1, true)      // operation name, then its arguments, repeated
 *     .thread(2, "check", 2, false)
 *     .post("check", 3, false)
 *     .build()
 * }</pre>
 */
public final class LincheckScenarios {

    private final Class<?> testClass;
    private final List<Actor> initial = new ArrayList<>();
    private final List<List<Actor>> parallel = new ArrayList<>();
    private final List<Actor> post = new ArrayList<>();

    private LincheckScenarios(Class<?> testClass) {
        this.testClass = testClass;
    }

    /** A scenario of operations of {@code testClass} (its public methods, named). */
    public static LincheckScenarios scenario(Class<?> testClass) {
        return new LincheckScenarios(testClass);
    }

    /** Operations of the initial part: a name, then that operation's arguments, repeated. */
    public LincheckScenarios initial(Object... operations) {
        initial.addAll(actors(operations));
        return this;
    }

    /** One more thread of the parallel part; {@code index} (from 1) only makes the call read like the scenario. */
    public LincheckScenarios thread(int index, Object... operations) {
        if (index != parallel.size() + 1) {
            throw new IllegalArgumentException("threads are numbered 1, 2, ... in order; got " + index);
        }
        parallel.add(actors(operations));
        return this;
    }

    /** Operations of the final part. */
    public LincheckScenarios post(Object... operations) {
        post.addAll(actors(operations));
        return this;
    }

    public ExecutionScenario build() {
        return new ExecutionScenario(initial, parallel, post, null);
    }

    private List<Actor> actors(Object[] operations) {
        List<Actor> actors = new ArrayList<>();
        for (int i = 0; i < operations.length; ) {
            String name = (String) operations[i++];
            Method method = Arrays.stream(testClass.getMethods())
                .filter(m -> m.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no operation " + name + " in " + testClass));
            int arity = method.getParameterCount();
            actors.add(new Actor(method, Arrays.asList(Arrays.copyOfRange(operations, i, i + arity))));
            i += arity;
        }
        return actors;
    }
}
