package dev.jpipeline.simt;

import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectOutputStream;
import java.io.OutputStream;
import java.lang.classfile.Attributes;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeModel;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.classfile.Instruction;
import java.lang.classfile.Label;
import java.lang.classfile.PseudoInstruction;
import java.lang.classfile.constantpool.ConstantDynamicEntry;
import java.lang.classfile.constantpool.StringEntry;
import java.lang.classfile.instruction.ConstantInstruction;
import java.lang.classfile.instruction.FieldInstruction;
import java.lang.classfile.instruction.TypeCheckInstruction;
import java.lang.classfile.instruction.InvokeDynamicInstruction;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.classfile.instruction.LineNumber;
import java.lang.classfile.instruction.MonitorInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.DirectMethodHandleDesc;
import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.AccessFlag;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Decides, by reading a kernel's bytecode, whether it reaches no resumption point, so that its threads may run as a
 * plain loop over the block (issue 27, slice 1: the way PoCL and MCUDA run a barrier-free region).
 *
 * <pre>
 * A resumption point is a call that may block or hand the block's turn over: __syncthreads, __syncwarp, diverge,
 * the groups (block(), warp(), tiledPartition, grid()) whose sync waits, pipeline, barrier and copy operations
 * (dev.jpipeline.*, PipelinePrimitives), warp collectives, and anything the scan does not know. The rule is
 * conservative: a kernel is plain only when every instruction reachable from its body, through helpers, is known
 * to be one of
 *   - a KernelContext accessor (block, threadIdx, blockIdx, blockDim, gridDim, threadRank, laneId, warpId, globalRank,
 *     dynamicShared, loadFloat/storeFloat/loadInt/storeInt, atomicAddInt/atomicCasInt, toString); the keyed
 *     sharedArray, shared and global when the key's type (from FrameAnalysis) is String, a box or Class (whose
 *     hashCode and equals are the JDK's) and, for shared and global, the init is a lambda made by the
 *     instruction just before the call (its code is scanned as a call);
 *   - ThreadBlock's accessors (size, threadRank, groupIndex, threadIndex, groupDim, toString);
 *   - in the kernel's own method (depth 0), KernelContext.syncThreads(), ThreadBlock.sync() or the full-mask
 *     KernelContext.syncWarp(): the verdict is then not plain, but the
 *     region compiler splits the method there (RegionCompiler); a sync anywhere else (a helper, a lambda), or a
 *     kernel method called again from its own code, is not compiled;
 *   - the JDK's atomics of primitives (AtomicInteger, AtomicLong, AtomicBoolean and their arrays), except the
 *     methods that take a function;
 *   - Dim3; MemorySegment and the memory layouts (none of them waits, and none that takes a function is
 *     allowed); VarHandle's static fences, not its access modes (a combinator such as MethodHandles.filterValue
 *     runs user method handles); Math, StrictMath; the boxes (Integer, Long, Float, Double, Boolean, Short, Byte,
 *     Character), but none of their methods that take a CharSequence (they call its length and charAt);
 *     Objects.requireNonNull and the index checks; Object's constructor and getClass; Enum's constructor (an
 *     enum's static initializer calls it for each constant) and Record's; an array's clone;
 *   - a method of another user class that binds statically (static, a constructor, private, final, or of a final
 *     class such as a record), after its class's static initializer, scanned like a helper (a sync there is not
 *     compiled: only the kernel's own class's helpers are inlined);
 *   - string concatenation (invokedynamic StringConcatFactory) of primitives, strings, boxes, Dim3 and the
 *     KernelContext, whose toString are the JDK's or ours (any other object's toString is user code). javac
 *     converts an object operand with String.valueOf(Object) first, whose operand type is not in the call: it is
 *     allowed when the instruction just before it (no label between, which may be a branch target) (an invoke's return type, a field's type, a checkcast, a string
 *     constant) shows one of those types, and not plain otherwise (a local variable's type is not tracked);
 *   - a Throwable's construction and athrow: a kernel may fail. A JDK Throwable's constructor is known when it
 *     takes only primitives and strings (Throwable(Throwable) calls the cause's toString, AssertionError(Object)
 *     String.valueOf); a user's Throwable constructor is scanned like a helper, and is not plain when its class
 *     or a superclass below the JDK's overrides fillInStackTrace (Throwable's constructors call it);
 *   - a call to a method of the class being scanned that binds statically (static, private, final, of a final
 *     or anonymous class, or a constructor), which is scanned in turn, including nested lambdas' synthetic
 *     methods (a lambda created in the kernel can only run through an interface call, which is unknown). Each
 *     method is scanned once per scan (so recursion terminates); a chain deeper than MAX_DEPTH is not plain.
 * Not plain as well: monitorenter and synchronized methods, other invokedynamic bootstraps, dynamic constants,
 * a method reference to an overridable method, and code that cannot be read.
 *
 * Finding the code. KernelBody is Serializable, so a lambda or method reference for it has a writeReplace that
 * returns its SerializedLambda, which names the implementation method (it is the kernel's run only when
 * run(KernelContext) is the functional method: a lambda of a sub-interface that implements another method, with run a
 * default of that interface, is not plain). writeReplace is private to the lambda's
 * hidden class, in the caller's package: it is called reflectively where the caller's module opens that package
 * to this one (the unnamed module, or a module that opens it), and otherwise through serialization's own access
 * (an ObjectOutputStream whose replaceObject receives the SerializedLambda and stops the stream before the
 * captured values are written). A kernel given as a class is scanned from its run(KernelContext), looked up in
 * its class and then its superclasses. Class files are read with the implementation class's getResourceAsStream
 * (".class" resources are never encapsulated by modules) and parsed with java.lang.classfile.
 *
 * The verdict holds for unchecked launches: under CheckedExecution the accessors (loadFloat, ...) are scheduling
 * points as well (slice 5).
 *
 * Caching. A verdict depends only on the body's class (a lambda's hidden class stands for one capture site and so
 * one implementation method), so it is kept in a ClassValue: a launch pays the scan once per kernel class, and the
 * cache does not keep a class loader alive. The switch -Djpipeline.simt.compile=false is read on every call, before
 * the cache.
 * </pre>
 */
final class ResumptionScan {

    /** The system property that switches compilation off when set to {@code false}. */
    static final String SWITCH = "jpipeline.simt.compile";
    /** How deep a chain of helper calls may go before the kernel is not plain. */
    static final int MAX_DEPTH = 16;

    private static final String KERNEL_CONTEXT = "dev/jpipeline/simt/KernelContext";
    private static final String RUN_DESCRIPTOR = "(L" + KERNEL_CONTEXT + ";)V";
    private static final Set<String> CONTEXT_PLAIN = Set.of("block", "threadIdx", "blockIdx", "blockDim", "gridDim",
        "threadRank", "laneId", "warpId", "globalRank", "dynamicShared", "loadFloat", "storeFloat", "loadInt",
        "storeInt", "atomicAddInt", "atomicCasInt", "toString");
    private static final Set<String> CONTEXT_RESUMING = Set.of("syncThreads", "syncWarp", "diverge",
        "warp", "tiledPartition", "grid");
    private static final String THREAD_BLOCK = "dev/jpipeline/simt/ThreadBlock";
    /** ThreadBlock's methods that read the context (its sync is __syncthreads: a resumption point). */
    private static final Set<String> THREAD_BLOCK_PLAIN = Set.of("size", "threadRank", "groupIndex", "threadIndex",
        "groupDim", "toString");
    /**
     * JDK classes whose methods are known not to wait: none takes a function, and none calls user code except those
     * that take a CharSequence (Integer.parseInt(CharSequence, ...), Character.codePointAt, ...: its length and
     * charAt), which are not plain.
     */
    private static final Set<String> JDK_PLAIN_CLASSES = Set.of("java/lang/Math", "java/lang/StrictMath",
        "java/lang/Integer", "java/lang/Long", "java/lang/Float", "java/lang/Double", "java/lang/Boolean",
        "java/lang/Short", "java/lang/Byte", "java/lang/Character", "dev/jpipeline/simt/Dim3");
    /** Memory classes (sealed, the JDK's own implementations) whose methods are plain unless they take a function. */
    private static final Set<String> MEMORY_CLASSES = Set.of("java/lang/foreign/MemorySegment",
        "java/lang/foreign/MemoryLayout", "java/lang/foreign/MemoryLayout$PathElement",
        "java/lang/foreign/ValueLayout", "java/lang/foreign/ValueLayout$OfBoolean",
        "java/lang/foreign/ValueLayout$OfByte", "java/lang/foreign/ValueLayout$OfChar",
        "java/lang/foreign/ValueLayout$OfShort", "java/lang/foreign/ValueLayout$OfInt",
        "java/lang/foreign/ValueLayout$OfLong", "java/lang/foreign/ValueLayout$OfFloat",
        "java/lang/foreign/ValueLayout$OfDouble", "java/lang/foreign/AddressLayout",
        "java/lang/foreign/SequenceLayout", "java/lang/foreign/StructLayout", "java/lang/foreign/UnionLayout",
        "java/lang/foreign/GroupLayout", "java/lang/foreign/PaddingLayout");
    /** jpipeline's own packages (core and simt): their calls are pipeline, barrier, group and copy operations. */
    private static final Set<String> JPIPELINE_PACKAGES = Set.of("dev/jpipeline", "dev/jpipeline/simt",
        "dev/jpipeline/copy", "dev/jpipeline/prefetch", "dev/jpipeline/internal", "dev/jpipeline/trace");
    private static final Set<String> OBJECTS_PLAIN = Set.of("requireNonNull", "requireNonNullElse", "isNull",
        "nonNull", "checkIndex", "checkFromToIndex", "checkFromIndexSize");
    /** Types whose toString string concatenation may call: the JDK's or ours. */
    private static final Set<String> CONCAT_TYPES = Set.of("Ljava/lang/String;", "Ljava/lang/Integer;",
        "Ljava/lang/Long;", "Ljava/lang/Float;", "Ljava/lang/Double;", "Ljava/lang/Boolean;", "Ljava/lang/Short;",
        "Ljava/lang/Byte;", "Ljava/lang/Character;", "Ldev/jpipeline/simt/Dim3;", "L" + KERNEL_CONTEXT + ";");

    /**
     * String methods whose object arguments are all strings (or none): a CharSequence's or an Object's methods are
     * user code, which String.contains, join, format and valueOf(Object) call.
     */
    private static final java.util.regex.Pattern STRING_ARGUMENTS =
        java.util.regex.Pattern.compile("\\((?:[ZBCSIJFD]|\\[+[ZBCSIJFD]|Ljava/lang/String;|\\[+Ljava/lang/String;)*\\).*");
    /**
     * The JDK's atomics of primitives, CUDA's atomicAdd, atomicCAS and the like: none waits, and none calls user code
     * unless it takes a function (updateAndGet, accumulateAndGet: not plain).
     */
    private static final Set<String> ATOMICS = Set.of("java/util/concurrent/atomic/AtomicInteger",
        "java/util/concurrent/atomic/AtomicLong", "java/util/concurrent/atomic/AtomicBoolean",
        "java/util/concurrent/atomic/AtomicIntegerArray", "java/util/concurrent/atomic/AtomicLongArray");
    /** Classes of __shared__ array keys whose hashCode and equals are the JDK's. */
    private static final Set<String> KEY_TYPES = Set.of("Ljava/lang/String;", "Ljava/lang/Integer;",
        "Ljava/lang/Long;", "Ljava/lang/Short;", "Ljava/lang/Byte;", "Ljava/lang/Character;", "Ljava/lang/Boolean;",
        "Ljava/lang/Class;");

    private static final Verdict SWITCHED_OFF =
        new Verdict(false, "compilation switched off (-D" + SWITCH + "=false)");

    private static final ClassValue<AtomicReference<Verdict>> CACHE = new ClassValue<>() {
        @Override
        protected AtomicReference<Verdict> computeValue(Class<?> type) {
            return new AtomicReference<>();
        }
    };

    /**
     * Whether a kernel may run as a plain loop over a block's threads.
     *
     * @param plain    true only when the scan proved that the kernel reaches no resumption point
     * @param reason   why it is not plain, in words a user can act on (what it calls and where); null when plain
     * @param compiled the kernel compiled into regions (RegionCompiler), or null where it runs uncompiled: as a
     *                 plain loop of its run calls when plain, else on strands
     * @param lambda   whether the kernel's captured values come from its SerializedLambda (else the kernel object
     *                 is the only one: the receiver of its class's run)
     * @param refusal  why a kernel that could have been compiled was not, or null
     * @param onScheduler whether the compiled kernel runs on its blocks' schedulers, thread by thread, because it
     *                 may wait elsewhere than at its compiled syncs (a pipeline, a barrier, a group, a sync in a
     *                 helper, unknown code: Strand.runCompiledThread), rather than as a loop over each block
     */
    record Verdict(boolean plain, String reason, RegionCompiler.Compiled compiled, boolean lambda, String refusal,
                   boolean onScheduler, CheckedVariant checked) {
        Verdict(boolean plain, String reason) {
            this(plain, reason, null, false, null, false, null);
        }

        /**
         * The kernel compiled for checked execution (RegionCompiler.compile with checked), made on first use, or
         * null where it runs uncompiled (on strands) under checked execution.
         */
        RegionCompiler.Compiled checkedCompiled() {
            return compiled == null || checked == null ? null : checked.get();
        }
    }

    /** The code a compiled kernel was made from, for its variant for checked execution, compiled once when asked. */
    static final class CheckedVariant {
        private final Class<?> host;
        private final ClassModel model;
        private final MethodModel method;
        /** The variant, or null until made; a refusal leaves it null for good (refused). Racy: both compile alike. */
        private volatile RegionCompiler.Compiled compiled;
        private volatile boolean refused;

        CheckedVariant(Class<?> host, ClassModel model, MethodModel method) {
            this.host = host;
            this.model = model;
            this.method = method;
        }

        RegionCompiler.Compiled get() {
            RegionCompiler.Compiled c = compiled;
            if (c == null && !refused) {
                try {
                    c = RegionCompiler.compile(host, model, method, true);
                    compiled = c;
                } catch (RegionCompiler.Refusal refusal) {
                    refused = true;
                }
            }
            return c;
        }
    }

    /** Says once per kernel class why it runs on strands (DEBUG: {@code dev.jpipeline.simt}). */
    private static final System.Logger LOG = System.getLogger("dev.jpipeline.simt");

    private ResumptionScan() {
    }

    /**
     * Scans {@code body}'s code, or returns the verdict of an earlier scan of its class.
     *
     * @param body the kernel, not null
     * @return plain only when the kernel reaches no resumption point and compilation is switched on; never null
     */
    static Verdict scan(KernelBody body) {
        if (!switchedOn()) {
            if (!SAID_SWITCHED_OFF.getAndSet(true)) {
                fellBack("every kernel", "on strands", SWITCHED_OFF.reason());
            }
            return SWITCHED_OFF;
        }
        AtomicReference<Verdict> cached = CACHE.get(body.getClass());
        Verdict verdict = cached.get();
        if (verdict == null) {
            Verdict found = uncachedScan(body);
            if (cached.compareAndSet(null, found) && found.compiled() == null) {   // a racing scan found the same
                fellBack(kernelName(body), found.plain() ? "as a plain loop of its run calls" : "on strands",
                    found.plain() ? found.refusal() : found.reason());
            }
            verdict = found;
        }
        return verdict;
    }

    /** A kernel's name for a user: a lambda's implementation method (Owner.lambda$method$0), else its class. */
    private static String kernelName(KernelBody body) {
        if (body.getClass().isHidden()) {
            try {
                SerializedLambda lambda = serializedLambda(body);
                return dotted(lambda.getImplClass()) + "." + lambda.getImplMethodName();
            } catch (ReflectiveOperationException | IOException | RuntimeException e) {
                // its class name, then
            }
        }
        return body.getClass().getName();
    }

    /** The fallbacks said so far (KernelRuns): at most FALLBACKS_KEPT. */
    private static final java.util.concurrent.ConcurrentLinkedQueue<String> FALLBACKS =
        new java.util.concurrent.ConcurrentLinkedQueue<>();
    private static final java.util.concurrent.atomic.AtomicInteger FALLBACKS_SAID =
        new java.util.concurrent.atomic.AtomicInteger();
    private static final int FALLBACKS_KEPT = 1000;

    /** Whether the switch (SWITCHED_OFF) and checked execution have been said, once per JVM each. */
    private static final java.util.concurrent.atomic.AtomicBoolean SAID_SWITCHED_OFF =
        new java.util.concurrent.atomic.AtomicBoolean();
    private static final java.util.concurrent.atomic.AtomicBoolean SAID_CHECKED =
        new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * A checked launch of a kernel that is not compiled runs on strands: its reason was given with the kernel's
     * verdict; says once per JVM that checked execution follows it (a kernel compiled unchecked is compiled checked
     * too, with a scheduling point at each accessor and pipeline operation of its method).
     */
    static void checkedLaunch() {
        if (!SAID_CHECKED.getAndSet(true)) {
            fellBack("a kernel launched under checked execution that is not compiled", "on strands", "checked "
                + "execution runs a kernel as unchecked launches do: compiled where it compiles, else on strands");
        }
    }

    /** Says once, for a kernel class, that it runs uncompiled and why: a log line (DEBUG), a JFR event, a list. */
    private static void fellBack(String kernel, String runsAs, String reason) {
        LOG.log(System.Logger.Level.DEBUG, () -> "kernel " + kernel + " runs " + runsAs + ", not compiled: "
            + reason);
        KernelFallbackEvent event = new KernelFallbackEvent();
        if (event.isEnabled()) {
            event.kernel = kernel;
            event.runsAs = runsAs;
            event.reason = reason;
            event.commit();
        }
        if (FALLBACKS_SAID.getAndIncrement() < FALLBACKS_KEPT) {
            FALLBACKS.add(kernel + " runs " + runsAs + ": " + reason);
        }
    }

    /** The fallbacks said so far, in order. */
    static java.util.List<String> fallbacks() {
        return java.util.List.copyOf(FALLBACKS);
    }

    /** {@code -Djpipeline.simt.compile}, true unless set to {@code false}. */
    static boolean switchedOn() {
        return !"false".equalsIgnoreCase(System.getProperty(SWITCH, "true").strip());
    }

    private static Verdict uncachedScan(KernelBody body) {
        try {
            Class<?> type = body.getClass();
            if (type.isHidden() || type.isSynthetic()) {
                SerializedLambda lambda;
                try {
                    lambda = serializedLambda(body);
                } catch (ReflectiveOperationException | IOException | RuntimeException e) {
                    return new Verdict(false, "its code could not be read: the lambda " + type.getName()
                        + " gave no SerializedLambda (" + e + ")");
                }
                return scanLambda(type, lambda);
            }
            return scanClass(type);
        } catch (StackOverflowError | LinkageError | RuntimeException e) {
            return new Verdict(false, "its code could not be read: " + e);
        }
    }

    /**
     * The SerializedLambda of a lambda or method reference: through its writeReplace where this module may call
     * it, otherwise through serialization (see the class comment).
     */
    static SerializedLambda serializedLambda(Object lambda) throws ReflectiveOperationException, IOException {
        Method writeReplace = lambda.getClass().getDeclaredMethod("writeReplace");
        try {
            writeReplace.setAccessible(true);
        } catch (InaccessibleObjectException refused) {
            try {
                return serializedLambdaByStream(lambda);
            } catch (IOException | RuntimeException e) {
                e.addSuppressed(refused);
                throw e;
            }
        }
        try {
            if (writeReplace.invoke(lambda) instanceof SerializedLambda serialized) {
                return serialized;
            }
        } catch (InvocationTargetException e) {
            throw new IOException("writeReplace of " + lambda.getClass().getName() + " failed", e.getCause());
        }
        throw new IOException(lambda.getClass().getName() + ".writeReplace returned no SerializedLambda");
    }

    /**
     * The SerializedLambda of a lambda by serialization's access to its writeReplace: the stream's replaceObject
     * receives it and writes null in its place, so the captured values (which need not serialize) are never written.
     */
    static SerializedLambda serializedLambdaByStream(Object lambda) throws IOException {
        final class Catcher extends ObjectOutputStream {
            SerializedLambda found;

            Catcher() throws IOException {
                super(OutputStream.nullOutputStream());
                enableReplaceObject(true);
            }

            @Override
            protected Object replaceObject(Object obj) {
                if (found == null && obj instanceof SerializedLambda serialized) {
                    found = serialized;
                    return null;
                }
                return obj;
            }
        }
        try (Catcher catcher = new Catcher()) {
            catcher.writeObject(lambda);
            if (catcher.found == null) {
                throw new IOException("serializing " + lambda.getClass().getName() + " gave no SerializedLambda");
            }
            return catcher.found;
        }
    }

    private static Verdict scanLambda(Class<?> lambdaClass, SerializedLambda lambda) {
        // The implementation method is what the lambda's run does only when run is the functional method: a lambda of
        // a sub-interface of KernelBody implements that interface's own method, and run is its default (user code).
        if (!lambda.getFunctionalInterfaceMethodName().equals("run")
            || !lambda.getFunctionalInterfaceMethodSignature().equals(RUN_DESCRIPTOR)) {
            return new Verdict(false, "it is a lambda of " + dotted(lambda.getFunctionalInterfaceClass())
                + " implementing " + lambda.getFunctionalInterfaceMethodName() + ", not run(KernelContext): its run is"
                + " the interface's default method, which is not read");
        }
        String owner = lambda.getImplClass();
        String name = lambda.getImplMethodName();
        String descriptor = lambda.getImplMethodSignature();
        Class<?> implClass;
        try {
            implClass = Class.forName(owner.replace('/', '.'), false, lambdaClass.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return new Verdict(false, "its code could not be read: its implementation class " + dotted(owner)
                + " did not load (" + e + ")");
        }
        Scan scan = new Scan();
        ClassCode code = scan.code(implClass);
        if (code.failure != null) {
            return new Verdict(false, code.failure);
        }
        MethodModel method = code.methods.get(name + descriptor);
        String where = dotted(owner) + "." + name;
        if (method == null) {
            return new Verdict(false, "its code could not be read: " + where + descriptor
                + " is not in its class file");
        }
        int kind = lambda.getImplMethodKind();
        if (kind == MethodHandleInfo.REF_newInvokeSpecial) {
            return new Verdict(false, "it is a constructor reference (" + where + ")");
        }
        boolean bound = kind == MethodHandleInfo.REF_invokeStatic || kind == MethodHandleInfo.REF_invokeSpecial
            || staticallyBound(code, method);
        if (!bound) {
            return new Verdict(false, "it is a reference to the overridable method " + where
                + ", whose code depends on the receiver: make it static, private or final");
        }
        return verdict(scan, code, method, true);
    }

    private static Verdict scanClass(Class<?> type) {
        Scan scan = new Scan();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            ClassCode code = scan.code(c);
            if (code.failure != null) {
                return new Verdict(false, code.failure);
            }
            MethodModel run = code.methods.get("run" + RUN_DESCRIPTOR);
            if (run != null && !run.flags().has(AccessFlag.ABSTRACT)) {
                return verdict(scan, code, run, false);
            }
        }
        return new Verdict(false, "its code could not be read: no run(KernelContext) found in " + type.getName()
            + " or its superclasses");
    }

    /**
     * Scans the kernel's method and, where its only resumption points are {@code __syncthreads} in its own body (or
     * it has none), compiles it into regions.
     */
    private static Verdict verdict(Scan scan, ClassCode code, MethodModel method, boolean lambda) {
        scan.body = code.internalName + "." + method.methodName().stringValue() + method.methodType().stringValue();
        String failure = scan.method(code, method, 0);
        if (failure != null) {
            return onScheduler(code, method, lambda, failure);
        }
        boolean plain = scan.firstSync == null;
        if (!plain && scan.bodyReentered) {
            return new Verdict(false, scan.firstSync + "; its body is called again from its own code, which the "
                + "region compiler does not follow");
        }
        if (scan.syncInHelper && scan.recursive) {
            return new Verdict(false, scan.firstSync + "; a helper with a sync is called recursively, which the region "
                + "compiler does not inline");
        }
        try {
            if (scan.syncInHelper) {
                SyncInliner.Inlined inlined = SyncInliner.inline(code.type, code.model, method);
                return new Verdict(false, scan.firstSync, RegionCompiler.compile(code.type, inlined.model(),
                    inlined.method()), lambda, null, false, new CheckedVariant(code.type, inlined.model(),
                    inlined.method()));
            }
            return new Verdict(plain, scan.firstSync, RegionCompiler.compile(code.type, code.model, method), lambda,
                null, false, new CheckedVariant(code.type, code.model, method));
        } catch (RegionCompiler.Refusal refusal) {
            return plain ? new Verdict(true, null, null, lambda, refusal.getMessage(), false, null)
                : new Verdict(false, "it could not be compiled: " + refusal.getMessage() + " (its first sync: "
                    + scan.firstSync + ")");
        }
    }

    /**
     * A kernel that may wait elsewhere than at syncs the region compiler splits at (why: {@code failure}) cannot run
     * as a loop over its block, but it can run compiled on its blocks' schedulers (Strand.runCompiledThread): a sync
     * in its own method becomes a point where its thread gives its stack up, and every other wait (a pipeline, a
     * barrier, a group, a sync in a helper or in code the scan does not know) blocks as on strands, on the same
     * barriers. That needs only that the compiler can split its method, that the method holds no monitor (a
     * thread keeps none across a sync), and that it has a sync to split at (else strands run it as well).
     */
    private static Verdict onScheduler(ClassCode code, MethodModel method, boolean lambda, String failure) {
        ClassModel model = code.model;
        MethodModel kernel = method;
        try {   // the helpers of its class that sync or wait, inlined where they can be (else they block as calls)
            SyncInliner.Inlined inlined = SyncInliner.inline(code.type, code.model, method);
            if (mayRunOnScheduler(inlined.method())) {
                model = inlined.model();
                kernel = inlined.method();
            }
        } catch (RegionCompiler.Refusal refusal) {
            // compiled as it is
        }
        if (!mayRunOnScheduler(kernel)) {
            return new Verdict(false, failure);
        }
        try {
            RegionCompiler.Compiled compiled = RegionCompiler.compile(code.type, model, kernel);
            return compiled.syncs() + compiled.waits() == 0 ? new Verdict(false, failure)
                : new Verdict(false, failure, compiled, lambda, null, true, new CheckedVariant(code.type, model,
                    kernel));
        } catch (RegionCompiler.Refusal refusal) {
            return new Verdict(false, failure);
        }
    }

    /** Whether a kernel's method (helpers inlined) holds no monitor and does not use the Java thread. */
    private static boolean mayRunOnScheduler(MethodModel method) {
        return method.code().map(c -> c.elementStream().noneMatch(e -> e instanceof MonitorInstruction m
            && m.opcode() == Opcode.MONITORENTER || e instanceof InvokeInstruction i && usesJavaThread(i)
            || e instanceof InvokeDynamicInstruction d && referencesJavaThread(d)))
            .orElse(false);
    }

    /** Whether an invokedynamic (a method reference such as {@code Thread::currentThread}) names the Java thread. */
    private static boolean referencesJavaThread(InvokeDynamicInstruction indy) {
        return indy.bootstrapArgs().stream().anyMatch(arg -> arg instanceof DirectMethodHandleDesc handle
            && usesJavaThread(handle.owner().descriptorString(), handle.methodName()));
    }

    /**
     * Whether a call reads or keeps the Java thread's identity (Thread.currentThread, its interrupt status, a thread
     * local, a scoped value): a compiled thread may go on on another Java thread behind a sync, so such a kernel
     * runs on strands, where a CUDA thread keeps its Java thread.
     */
    private static boolean usesJavaThread(InvokeInstruction invoke) {
        return usesJavaThread("L" + invoke.owner().asInternalName() + ";", invoke.name().stringValue());
    }

    /** As above, for a call of {@code name} in the class of descriptor {@code owner}. */
    private static boolean usesJavaThread(String owner, String name) {
        return owner.equals("Ljava/lang/Thread;") && !name.equals("onSpinWait")
            || owner.equals("Ljava/lang/ThreadLocal;") || owner.equals("Ljava/lang/InheritableThreadLocal;")
            || owner.equals("Ljava/lang/ScopedValue;");
    }

    /**
     * The values a compiled kernel's method takes before its KernelContext: a lambda's captured values (its
     * receiver first, for an instance method), or the kernel object itself for a class's run; null where they
     * cannot be read (the launch then runs the kernel uncompiled).
     */
    static Object[] captured(KernelBody body, Verdict verdict) {
        if (!verdict.lambda()) {
            return new Object[] {body};
        }
        try {
            SerializedLambda lambda = serializedLambda(body);
            Object[] values = new Object[lambda.getCapturedArgCount()];
            for (int i = 0; i < values.length; i++) {
                values[i] = lambda.getCapturedArg(i);
            }
            return values;
        } catch (ReflectiveOperationException | IOException | RuntimeException e) {
            return null;
        }
    }

    /** Whether a call to {@code method} of the class {@code code} runs exactly that method's code. */
    private static boolean staticallyBound(ClassCode code, MethodModel method) {
        return method.flags().has(AccessFlag.STATIC) || method.flags().has(AccessFlag.PRIVATE)
            || method.flags().has(AccessFlag.FINAL) || method.methodName().equalsString("<init>")
            || code.effectivelyFinal;
    }

    private static String internalName(ClassDesc type) {
        String descriptor = type.descriptorString();
        return descriptor.startsWith("L") ? descriptor.substring(1, descriptor.length() - 1) : descriptor;
    }

    private static String dotted(String internalName) {
        return internalName.replace('/', '.');
    }

    /** A class's name without its package, nested classes joined by dots: {@code Outer.Inner}. */
    private static String simpleName(String internalName) {
        return internalName.substring(internalName.lastIndexOf('/') + 1).replace('$', '.');
    }

    /** A parsed class file, or why it could not be read. */
    private static final class ClassCode {
        final Class<?> type;
        final String internalName;
        final String sourceFile;
        final boolean effectivelyFinal;
        final Map<String, MethodModel> methods = new HashMap<>();
        final String failure;
        final ClassModel model;

        ClassCode(Class<?> type, ClassModel model) {
            this.type = type;
            this.model = model;
            this.internalName = model.thisClass().asInternalName();
            this.sourceFile = model.findAttribute(Attributes.sourceFile())
                .map(a -> a.sourceFile().stringValue()).orElse(null);
            this.effectivelyFinal = Modifier.isFinal(type.getModifiers()) || type.isAnonymousClass()
                || type.isHidden();
            for (MethodModel m : model.methods()) {
                methods.put(m.methodName().stringValue() + m.methodType().stringValue(), m);
            }
            this.failure = null;
        }

        ClassCode(Class<?> type, String failure) {
            this.type = type;
            this.model = null;
            this.internalName = type.getName().replace('.', '/');
            this.sourceFile = null;
            this.effectivelyFinal = false;
            this.failure = failure;
        }
    }

    /** One scan: the class files it has read and the methods it has entered (each is scanned once). */
    private static final class Scan {
        private final Map<Class<?>, ClassCode> classes = new HashMap<>();
        private final Set<String> entered = new HashSet<>();
        /** The kernel's own method (owner.name+descriptor), whose __syncthreads calls the compiler splits at. */
        String body;
        /** Why the kernel is not plain, from its first __syncthreads in its own body; null when none. */
        String firstSync;
        /** Whether the kernel's own method is called from its code (then its syncs run uncompiled). */
        boolean bodyReentered;
        /** How many of the methods being scanned were entered other than by a direct call (a lambda, an initializer). */
        int indirect;
        /** Whether a sync was found in a helper, which the region compiler inlines (SyncInliner). */
        boolean syncInHelper;
        /** The methods on the chain being scanned: a helper reached again from itself is recursive. */
        final Set<String> chain = new HashSet<>();
        /** Whether a method recursed (then a sync in a helper cannot be inlined). */
        boolean recursive;

        /**
         * Whether a sync at this depth is one the region compiler splits at: in the kernel's own method, or in a
         * helper of its class that the kernel reaches by direct calls (inlined, at most MAX_INLINE_DEPTH deep).
         */
        private boolean syncCompiles(ClassCode code, int depth) {
            if (depth == 0) {
                return true;
            }
            if (indirect > 0 || depth > SyncInliner.MAX_DEPTH || body == null
                || !body.startsWith(code.internalName + ".")) {
                return false;
            }
            syncInHelper = true;
            return true;
        }

        ClassCode code(Class<?> type) {
            return classes.computeIfAbsent(type, Scan::read);
        }

        private static ClassCode read(Class<?> type) {
            String resource = "/" + type.getName().replace('.', '/') + ".class";
            try (InputStream in = type.getResourceAsStream(resource)) {
                if (in == null) {
                    return new ClassCode(type, "its code could not be read: no class file " + resource
                        + " for " + type.getName());
                }
                return new ClassCode(type, ClassFile.of().parse(in.readAllBytes()));
            } catch (IOException | IllegalArgumentException e) {
                return new ClassCode(type, "its code could not be read: " + resource + " of " + type.getName()
                    + " (" + e + ")");
            }
        }

        /**
         * Scans {@code method} of {@code code} and, transitively, what it calls.
         *
         * @return null when plain, otherwise why not
         */
        String method(ClassCode code, MethodModel method, int depth) {
            String name = method.methodName().stringValue();
            String key = code.internalName + "." + name + method.methodType().stringValue();
            if (!entered.add(key)) {
                bodyReentered |= key.equals(body);
                recursive |= chain.contains(key);
                return null;  // scanned already, or being scanned further up this chain: its own scan decides
            }
            chain.add(key);
            try {
                return scanMethod(code, method, depth, name);
            } finally {
                chain.remove(key);
            }
        }

        private String scanMethod(ClassCode code, MethodModel method, int depth, String name) {
            String in = depth == 0 ? "" : " (in " + readable(code, name) + ")";
            if (depth > MAX_DEPTH) {
                return "its helper calls nest deeper than " + MAX_DEPTH + " levels" + in;
            }
            if (method.flags().has(AccessFlag.SYNCHRONIZED)) {
                return "the synchronized method " + readable(code, name) + " holds a monitor";
            }
            CodeModel body = method.code().orElse(null);
            if (body == null) {
                return "its code could not be read: " + readable(code, name) + " has no code (abstract or native)";
            }
            int line = -1;
            String produced = null;  // the type the previous instruction left on the stack, where known
            boolean supplierMade = false;   // whether the previous instruction made a Supplier lambda (scanned)
            List<CodeElement> elements = body.elementList();
            Map<Integer, FrameAnalysis.State> arrays = keyedCalls(code, method, body);
            for (int i = 0; i < elements.size(); i++) {
                CodeElement element = elements.get(i);
                String failure = switch (element) {
                    case LineNumber number -> {
                        line = number.line();
                        yield null;
                    }
                    case InvokeInstruction invoke when isKeyed(invoke) -> {
                        String name2 = invoke.name().stringValue();
                        FrameAnalysis.State state = arrays == null ? null : arrays.get(i);
                        FrameAnalysis.VType keyType = state == null ? null
                            : state.stack().get(state.stack().size() - 2);
                        if (keyType == null || keyType.kind() != FrameAnalysis.Kind.REFERENCE
                            || !KEY_TYPES.contains(keyType.type().descriptorString())) {
                            yield "calls KernelContext." + name2 + at(code, line) + in + " with a key whose class is "
                                + "not known to be the JDK's (String, a box, Class): its hashCode and equals may be "
                                + "user code";
                        }
                        yield name2.equals("sharedArray") || supplierMade ? null
                            : "calls KernelContext." + name2 + at(code, line) + in + " with an init that is not a "
                                + "lambda made there, whose code is not known";
                    }
                    case InvokeInstruction invoke when isStringValueOfObject(invoke) ->
                        produced != null && CONCAT_TYPES.contains(produced) ? null
                            : "converts " + (produced == null ? "an object"
                                : "a " + ClassDesc.ofDescriptor(produced).displayName())
                                + " to a string (String.valueOf, as string concatenation does), which calls its"
                                + " toString (user code)" + at(code, line) + in;
                    case FieldInstruction field when field.opcode() == Opcode.GETSTATIC
                        || field.opcode() == Opcode.PUTSTATIC ->
                        staticInitializer(code, field.owner().asInternalName(), at(code, line) + in, depth);
                    case InvokeInstruction invoke -> invoke(code, invoke, at(code, line) + in, depth);
                    case InvokeDynamicInstruction indy -> invokedynamic(code, indy, at(code, line) + in, depth);
                    case MonitorInstruction monitor when monitor.opcode() == Opcode.MONITORENTER ->
                        "enters a monitor (synchronized)" + at(code, line) + in;
                    case ConstantInstruction constant when constant.constantValue() != null
                        && isDynamicConstant(constant) -> "loads a dynamic constant" + at(code, line) + in;
                    default -> null;
                };
                if (failure != null) {
                    return failure;
                }
                supplierMade = element instanceof InvokeDynamicInstruction indy && isLambdaMade(indy)
                    && indy.typeSymbol().returnType().descriptorString().equals("Ljava/util/function/Supplier;")
                    || element instanceof PseudoInstruction && !(element instanceof Label) && supplierMade;
                if (element instanceof Instruction instruction) {
                    produced = producedType(instruction);
                } else if (element instanceof Label || !(element instanceof PseudoInstruction)) {
                    produced = null;  // a label may be a branch target, reached with another operand
                }
            }
            return null;
        }

        /** KernelContext.sharedArray, shared or global: keyed, the latter two with an init run on first use. */
        private static boolean isKeyed(CodeElement element) {
            return element instanceof InvokeInstruction invoke && invoke.owner().asInternalName().equals(KERNEL_CONTEXT)
                && (invoke.name().equalsString("sharedArray") || invoke.name().equalsString("shared")
                    || invoke.name().equalsString("global"));
        }

        private static boolean isLambdaMade(InvokeDynamicInstruction indy) {
            return indy.bootstrapMethod().owner().descriptorString().equals("Ljava/lang/invoke/LambdaMetafactory;");
        }

        /** The stack before each keyed call of {@code method}, to judge its key's type; null if unreadable. */
        private static Map<Integer, FrameAnalysis.State> keyedCalls(ClassCode code, MethodModel method,
                                                                          CodeModel body) {
            if (!(body instanceof java.lang.classfile.attribute.CodeAttribute attribute)
                || body.elementList().stream().noneMatch(Scan::isKeyed)) {
                return null;
            }
            try {
                return FrameAnalysis.analyse(attribute, code.model.thisClass().asSymbol(),
                    method.flags().has(AccessFlag.STATIC), method.methodTypeSymbol(), (i, e) -> isKeyed(e));
            } catch (IllegalArgumentException e) {
                return null;
            }
        }

        private static boolean isStringValueOfObject(InvokeInstruction invoke) {
            return invoke.opcode() == Opcode.INVOKESTATIC && invoke.owner().asInternalName().equals("java/lang/String")
                && invoke.name().equalsString("valueOf") && invoke.type().equalsString("(Ljava/lang/Object;)Ljava/lang/String;");
        }

        /** The descriptor of the reference an instruction leaves on the stack, where its own operands tell. */
        private static String producedType(Instruction instruction) {
            return switch (instruction) {
                case InvokeInstruction invoke -> invoke.typeSymbol().returnType().descriptorString();
                case FieldInstruction field when field.opcode() == Opcode.GETFIELD
                    || field.opcode() == Opcode.GETSTATIC -> field.type().stringValue();
                case TypeCheckInstruction check when check.opcode() == Opcode.CHECKCAST ->
                    check.type().asSymbol().descriptorString();
                case ConstantInstruction.LoadConstantInstruction load
                    when load.constantEntry() instanceof StringEntry -> "Ljava/lang/String;";
                default -> null;
            };
        }

        private static boolean isDynamicConstant(ConstantInstruction constant) {
            return constant instanceof ConstantInstruction.LoadConstantInstruction load
                && load.constantEntry() instanceof ConstantDynamicEntry;
        }

        private String invoke(ClassCode code, InvokeInstruction invoke, String at, int depth) {
            String owner = invoke.owner().asInternalName();
            String name = invoke.name().stringValue();
            String descriptor = invoke.type().stringValue();
            return call(code, owner, name, descriptor,
                invoke.opcode() == Opcode.INVOKESTATIC
                    || invoke.opcode() == Opcode.INVOKESPECIAL, at, depth);
        }

        private String invokedynamic(ClassCode code, InvokeDynamicInstruction indy, String at, int depth) {
            DirectMethodHandleDesc bootstrap = indy.bootstrapMethod();
            String factory = bootstrap.owner().descriptorString();
            if (factory.equals("Ljava/lang/invoke/StringConcatFactory;")) {
                for (ClassDesc parameter : indy.typeSymbol().parameterList()) {
                    if (!parameter.isPrimitive() && !CONCAT_TYPES.contains(parameter.descriptorString())) {
                        return "concatenates a " + parameter.displayName() + " into a string, which calls its "
                            + "toString (user code)" + at;
                    }
                }
                return null;
            }
            if (factory.equals("Ljava/lang/invoke/LambdaMetafactory;") && indy.bootstrapArgs().size() >= 2
                && indy.bootstrapArgs().get(1) instanceof DirectMethodHandleDesc target) {
                // Making a lambda runs nothing; its body can only run through an interface call (unknown, so not
                // plain). Its code is scanned all the same, as a call to its implementation method.
                if (internalName(target.owner()).equals(KERNEL_CONTEXT) && !CONTEXT_PLAIN.contains(target.methodName())) {
                    return "makes a method reference to KernelContext." + target.methodName() + at
                        + ", which may run as a resumption point anywhere";
                }
                boolean bound = switch (target.kind()) {
                    case STATIC, INTERFACE_STATIC, SPECIAL, INTERFACE_SPECIAL, CONSTRUCTOR -> true;
                    default -> false;
                };
                indirect++;                     // a lambda's body runs later, wherever it is called: no sync there
                try {
                    return call(code, internalName(target.owner()), target.methodName(), target.lookupDescriptor(),
                        bound, at, depth);
                } finally {
                    indirect--;
                }
            }
            return "uses invokedynamic with the bootstrap " + dotted(internalName(bootstrap.owner())) + "."
                + bootstrap.methodName()
                + " (for example a pattern switch or a record's methods)" + at;
        }

        /**
         * Judges a call.
         *
         * @param bound whether the instruction binds the target statically (invokestatic, invokespecial)
         */
        private String call(ClassCode code, String owner, String name, String descriptor, boolean bound, String at,
                            int depth) {
            if (owner.equals(code.internalName)) {
                MethodModel target = code.methods.get(name + descriptor);
                if (target == null) {
                    return "calls " + simpleName(owner) + "." + name + at + ", which its class does not declare"
                        + " (an inherited method is not followed)";
                }
                if (!bound && !staticallyBound(code, target)) {
                    return "calls the overridable method " + simpleName(owner) + "." + name + at
                        + ": make it static, private or final so that its code is known";
                }
                return method(code, target, depth + 1);
            }
            if (owner.equals(THREAD_BLOCK)) {
                if (THREAD_BLOCK_PLAIN.contains(name)) {
                    return null;
                }
                if (syncCompiles(code, depth) && name.equals("sync") && descriptor.equals("()V")) {
                    if (firstSync == null) {            // this_thread_block().sync() is __syncthreads
                        firstSync = "calls ThreadBlock.sync" + at + ", a resumption point (it waits for the "
                            + "block's other threads)";
                    }
                    return null;
                }
                return "calls ThreadBlock." + name + at + ", a resumption point (it waits for the block's other "
                    + "threads) outside the kernel's own method";
            }
            if (owner.equals(KERNEL_CONTEXT)) {
                if (CONTEXT_PLAIN.contains(name)) {
                    return null;
                }
                if (syncCompiles(code, depth) && (name.equals("syncThreads") || name.equals("syncWarp"))
                    && descriptor.equals("()V")) {
                    if (firstSync == null) {            // compiled into regions: split at each such call
                        firstSync = "calls KernelContext." + name + at + ", a resumption point (it waits for "
                            + (name.equals("syncWarp") ? "the warp's" : "the block's") + " other threads)";
                    }
                    return null;
                }
                if (CONTEXT_RESUMING.contains(name)) {
                    return "calls KernelContext." + name + at + ", a resumption point (it waits for, or hands the "
                        + "block's turn to, other threads)";
                }
                return "calls KernelContext." + name + at + ": shared and global variables are made by user code "
                    + "(their init), which a later slice compiles";
            }
            if (JDK_PLAIN_CLASSES.contains(owner) && !descriptor.contains("Ljava/lang/CharSequence;")) {
                return null;
            }
            if (owner.equals("java/lang/String") && (name.equals("equals")
                || STRING_ARGUMENTS.matcher(descriptor).matches())) {
                return null;                    // none of its arguments is an object whose methods it calls
            }
            if (owner.equals("java/lang/invoke/VarHandle")) {
                // its fences are static; an access mode runs whatever the handle is, and a combinator's
                // (MethodHandles.filterValue, filterCoordinates, ...) runs the user's method handles
                return bound ? null : "calls VarHandle." + name + at + ": a VarHandle may be a combinator "
                    + "(MethodHandles.filterValue, ...) that runs user method handles";
            }
            if (MEMORY_CLASSES.contains(owner) && !descriptor.contains("Ljava/util/function/")) {
                return null;
            }
            if (owner.equals("java/util/Objects") && OBJECTS_PLAIN.contains(name)
                && !descriptor.contains("Ljava/util/function/")) {
                return null;
            }
            if (ATOMICS.contains(owner) && !descriptor.contains("Ljava/util/function/")) {
                return null;                    // atomicAdd and friends: they never wait, and run no user code
            }
            if (owner.equals("java/lang/Thread") && name.equals("onSpinWait")) {
                return null;                    // a hint to the processor; a compiled loop yields at its head
            }
            if (owner.equals("java/lang/Enum") && name.equals("<init>")) {
                return null;                    // keeps the name and ordinal: an enum's static initializer calls it
            }
            if (owner.equals("java/lang/Record") && name.equals("<init>")) {
                return null;                    // Object's, in effect: a record's constructor calls it
            }
            if (owner.equals("java/lang/Object") && (name.equals("<init>") || name.equals("getClass"))) {
                return null;
            }
            if (owner.startsWith("[") && name.equals("clone")) {
                return null;
            }
            if (name.equals("<init>")) {
                Class<?> type;
                try {
                    type = Class.forName(dotted(owner), false, code.type.getClassLoader());
                } catch (ClassNotFoundException | LinkageError e) {
                    return "constructs " + dotted(owner) + at + ", whose class did not load (" + e + ")";
                }
                if (Throwable.class.isAssignableFrom(type)) {
                    return throwableConstructor(code, type, descriptor, at, depth);
                }
            }
            if (JPIPELINE_PACKAGES.contains(owner.substring(0, Math.max(0, owner.lastIndexOf('/'))))) {
                return "calls " + dotted(owner) + "." + name + at + ": a pipeline, barrier, group or copy "
                    + "operation, which may wait for other threads (a resumption point)";
            }
            Class<?> other = userClass(code, owner);
            if (other != null) {
                return otherUserClass(code, other, owner, name, descriptor, bound, at, depth);
            }
            return "calls an unknown method " + dotted(owner) + "." + name + at
                + " (only calls known not to wait may run as a plain loop; of user code, only methods that bind "
                + "statically are followed: static, private or final ones, and those of final classes and records)";
        }

        /** The user class {@code owner} names (not the JDK's, not an interface, not an array), or null. */
        private static Class<?> userClass(ClassCode code, String owner) {
            if (owner.startsWith("[")) {
                return null;
            }
            try {
                Class<?> type = Class.forName(dotted(owner), false, code.type.getClassLoader());
                return isJdk(type) || type.isInterface() ? null : type;     // jpipeline's packages were judged before
            } catch (ClassNotFoundException | LinkageError e) {
                return null;
            }
        }

        /**
         * A call to a method of another user class: followed like a helper when it binds statically (static, a
         * constructor, private, final, or of a final class: a record, an enum without bodies), after the class's
         * static initializer, which the call may run first. A sync found there is not compiled (only the kernel's
         * own class's helpers are inlined).
         */
        private String otherUserClass(ClassCode code, Class<?> type, String owner, String name, String descriptor,
                                      boolean bound, String at, int depth) {
            ClassCode callee = code(type);
            if (callee.failure != null) {
                return callee.failure;
            }
            MethodModel target = callee.methods.get(name + descriptor);
            if (target == null) {
                return "calls " + simpleName(owner) + "." + name + at + ", which its class does not declare (an "
                    + "inherited method is not followed)";
            }
            if (!bound && !staticallyBound(callee, target)) {
                return "calls the overridable method " + simpleName(owner) + "." + name + at
                    + ": make it static, private or final, or its class final, so that its code is known";
            }
            if (target.flags().has(AccessFlag.STATIC) || name.equals("<init>")) {
                String initializer = staticInitializer(code, owner, at, depth);
                if (initializer != null) {
                    return initializer;         // the call runs the class's static initializer first
                }
            }
            return method(callee, target, depth + 1);
        }

        /**
         * A static field of class {@code owner} is read or written: its first use runs the class's static initializer
         * and its superclasses' (user code, unless the JDK's), which are scanned like helpers. The code's own class
         * is initialized already (its code runs).
         */
        private String staticInitializer(ClassCode code, String owner, String at, int depth) {
            if (owner.equals(code.internalName)) {
                return null;
            }
            Class<?> type;
            try {
                type = Class.forName(dotted(owner), false, code.type.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                return "uses a static of " + dotted(owner) + at + ", whose class did not load (" + e + ")";
            }
            for (Class<?> c = type; c != null && !isJdk(c) && c != code.type; c = c.getSuperclass()) {
                ClassCode initialized = code(c);
                if (initialized.failure != null) {
                    return initialized.failure;
                }
                MethodModel clinit = initialized.methods.get("<clinit>()V");
                String failure;
                indirect++;
                try {
                    failure = clinit == null ? null : method(initialized, clinit, depth + 1);
                } finally {
                    indirect--;
                }
                if (failure != null) {
                    return "uses a static of " + type.getName() + at + ", whose first use runs the static "
                        + "initializer of " + c.getName() + ", which " + failure;
                }
            }
            return null;
        }

        /** A Throwable's constructor: plain for the JDK's (a kernel may fail), scanned like a helper for a user's. */
        private String throwableConstructor(ClassCode code, Class<?> type, String descriptor, String at, int depth) {
            if (isJdk(type)) {
                // Throwable(Throwable) calls the cause's toString, AssertionError(Object) String.valueOf: only
                // primitives and strings are known not to reach user code
                String arguments = descriptor.substring(1, descriptor.indexOf(')')).replace("Ljava/lang/String;", "");
                return arguments.indexOf('L') < 0 && arguments.indexOf('[') < 0 ? null
                    : "constructs " + type.getName() + at + " with an object argument, whose toString (user code) "
                        + "its constructor may call";
            }
            // Throwable's constructors call fillInStackTrace, which the user's class may override
            for (Class<?> c = type; !isJdk(c); c = c.getSuperclass()) {
                try {
                    c.getDeclaredMethod("fillInStackTrace");
                    return "constructs " + type.getName() + at + ", whose class " + c.getName() + " overrides "
                        + "fillInStackTrace (user code that Throwable's constructor calls)";
                } catch (NoSuchMethodException e) {
                    // not overridden here
                }
            }
            String initializer = staticInitializer(code, type.getName().replace('.', '/'), at, depth);
            if (initializer != null) {
                return initializer;             // new runs the class's static initializer first
            }
            ClassCode thrown = code(type);
            if (thrown.failure != null) {
                return thrown.failure;
            }
            MethodModel constructor = thrown.methods.get("<init>" + descriptor);
            if (constructor == null) {
                return "constructs " + type.getName() + at + ", whose class file lacks that constructor";
            }
            indirect++;
            try {
                return method(thrown, constructor, depth + 1);
            } finally {
                indirect--;
            }
        }

        private static boolean isJdk(Class<?> type) {
            return type.getClassLoader() == null || type.getClassLoader() == ClassLoader.getPlatformClassLoader();
        }

        private static String at(ClassCode code, int line) {
            return code.sourceFile == null || line < 0 ? " in " + code.type.getName()
                : " at " + code.sourceFile + ":" + line;
        }

        /** A method's name for a user: a lambda's synthetic method becomes "a lambda in Owner.method". */
        private static String readable(ClassCode code, String name) {
            String owner = simpleName(code.internalName);
            if (name.startsWith("lambda$")) {
                String[] parts = name.split("\\$");
                return "a lambda in " + owner + (parts.length > 1 && !parts[1].isEmpty() ? "." + parts[1] : "");
            }
            return owner + "." + name;
        }
    }
}
