package dev.jpipeline.simt;

import dev.jpipeline.simt.FrameAnalysis.Kind;
import dev.jpipeline.simt.FrameAnalysis.State;
import dev.jpipeline.simt.FrameAnalysis.VType;
import java.lang.classfile.Attribute;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.Label;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeKind;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.attribute.SourceFileAttribute;
import java.lang.classfile.instruction.CharacterRange;
import java.lang.classfile.instruction.IncrementInstruction;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.classfile.instruction.LoadInstruction;
import java.lang.classfile.instruction.LocalVariable;
import java.lang.classfile.instruction.LocalVariableType;
import java.lang.classfile.instruction.ReturnInstruction;
import java.lang.classfile.instruction.StoreInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.DynamicConstantDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.AccessFlag;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Compiles a kernel whose only resumption points are {@code __syncthreads} in its own body into a resumable step
 * and a loop over a block's threads (issue 27, slice 2: PoCL's work-group loops, MCUDA's deep fission, the
 * continuations of SYCL Native CPU).
 *
 * <pre>
 * The kernel's method M(captured..., KernelContext ctx) becomes, in a hidden class that is a nestmate of M's class
 * (so that M's code keeps its access to private members), the static method
 *
 *   int step(Object[] captured, KernelContext ctx, long[] prims, Object[] refs, int base, int state)
 *
 * which runs one CUDA thread from its state to its next __syncthreads or its end: it returns the number k (1..K)
 * of the sync it stopped at, or -1 when the thread has returned. Its code is M's, with M's locals moved up by the
 * six slots of step's parameters, and:
 *   - a prologue: M's parameters taken from captured (unboxed where primitive) and ctx, then a tableswitch on state
 *     to the start (0) or to the restore block of sync k, which reloads the locals that live across sync k (those
 *     the verifier types there: FrameAnalysis, less the parameters M never stores to, which the prologue has
 *     unpacked already) from the thread's frame, prims[base + slot] (int, float and double
 *     as long bits) and refs[base + slot] (checkcast to the verifier's type), and jumps behind the sync;
 *   - each ctx.syncThreads() replaced by: null-check the receiver, store those locals into the frame, return k;
 *   - each return replaced by returning -1; each invokespecial of a private method of M's class by invokevirtual
 *     (a nestmate calls private methods that way).
 * Only a sync with nothing on the operand stack below its receiver is allowed (javac's statement ctx.syncThreads();
 * always is), and nothing the verifier types uninitialized may live across it.
 *
 * The loop, in the same class so that the JIT sees one monomorphic step call and can inline it:
 *
 *   int region(Object[] captured, KernelContext ctx, long[] prims, Object[] refs, int[] states, int width, int size)
 *
 * runs every thread r of the block whose state is not -1 (bound with ctx.bindPlainRank(r) through a class-data
 * method handle, which the JIT inlines as a constant), stores its new state, and returns how many threads stopped
 * at a sync, or -2 when the launch was found aborted (looked at every 32 threads: a warp). A throwable from a thread
 * leaves the loop; ctx's rank says which thread threw.
 *
 * Run on the block's scheduler (Strand.runCompiledThread: a kernel that also waits elsewhere, or any compiled kernel
 * under checked execution), step has more kinds of point, numbered after the syncs:
 *   - waits (isWait): pipe.producerAcquire() / pipe.consumerWait() with the receiver in a local; the point is the
 *     receiver's load, and the call goes through a helper that returns false where the thread is suspended (it
 *     resumes by loading the receiver and calling again);
 *   - under checked execution only, scheduling points (isSchedulingPoint): before an accessor or pipeline call the
 *     thread may hand the turn on; the operand stack then goes into temporaries past M's locals and into the frame
 *     (width grows by the deepest such stack), and comes back when the thread resumes. A deferring call
 *     (isDeferringCall) has a second point behind it, with its result on the stack. That variant has no loop-head
 *     yields: a checked schedule orders threads only where strands would.
 *
 * A static M's class may not be initialized yet (a method reference Other::kernel does not initialize Other; the call
 * that strands make does, JLS 12.4.1): region initializes it once, with thread 0 bound, before its first thread runs.
 * </pre>
 */
final class RegionCompiler {

    /**
     * What compiling gave: the loop's handle and the frame width, or why the kernel cannot be compiled.
     *
     * @param syncs      the sync points: states 1..blockSyncs are __syncthreads, blockSyncs+1..syncs __syncwarp
     * @param yields     the loop heads where a thread may yield: states syncs+1..syncs+yields
     * @param blockSyncs how many of the syncs are __syncthreads
     * @param waits      the pipeline waits a thread may suspend at without a stack (isWait): states
     *                   syncs+1..syncs+waits, then the yields follow (only a kernel run on the scheduler has them:
     *                   Strand.runCompiledThread)
     * @param schedulingPoints in the variant for checked execution only (compile's {@code checked}): the accessor
     *                   and pipeline calls where a thread may hand the turn on without a stack (isSchedulingPoint),
     *                   states syncs+waits+1..; that variant has no loop-head yields (a checked schedule orders
     *                   threads only at scheduling points, as on strands)
     * @param lines      the kernel's method, then where each resumption point is (pointLines)
     * @param sites      checked execution's sync sites by state, made on first use (site)
     */
    record Compiled(MethodHandle region, MethodHandle step, int width, int syncs, int yields, int blockSyncs,
                    int waits, int schedulingPoints, List<String> lines, CheckedLaunch.Site[] sites) {

        /**
         * Where the sync of state {@code state} (1..syncs) is, as checked execution's sync checks name a call site:
         * the kernel's method and the sync's number (two syncs are two sites, as two call sites are on strands),
         * shown by method, file and line.
         */
        CheckedLaunch.Site site(int state) {
            CheckedLaunch.Site site = sites[state];
            if (site == null) {     // racy and benign: two make equal sites
                site = new CheckedLaunch.Site("compiled sync " + state + " of " + lines.get(0), lines.get(state));
                sites[state] = site;
            }
            return site;
        }
    }

    /** Raised where the kernel's code is beyond this compiler: the kernel runs on strands. */
    static final class Refusal extends Exception {
        private static final long serialVersionUID = 1L;

        Refusal(String message) {
            super(message, null, false, false);
        }
    }

    /** The state a thread has once it has returned. */
    static final int RETURNED = -1;
    /** What region returns when it found the launch aborted. */
    static final int ABORTED = -2;
    /** How many loop heads a step passes before it yields, so that the block's other threads run. */
    static final int YIELD_EVERY = 1 << 14;

    private static final ClassDesc CD_KERNEL_CONTEXT = ClassDesc.of("dev.jpipeline.simt.KernelContext");
    private static final ClassDesc CD_THREAD_BLOCK = ClassDesc.of("dev.jpipeline.simt.ThreadBlock");
    private static final ClassDesc CD_OBJECTS = ClassDesc.of("java.util.Objects");
    private static final MethodTypeDesc STEP_TYPE = MethodTypeDesc.of(ConstantDescs.CD_int,
        ConstantDescs.CD_Object.arrayType(), CD_KERNEL_CONTEXT, ConstantDescs.CD_long.arrayType(),
        ConstantDescs.CD_Object.arrayType(), ConstantDescs.CD_int, ConstantDescs.CD_int);
    private static final MethodTypeDesc REGION_TYPE = MethodTypeDesc.of(ConstantDescs.CD_int,
        ConstantDescs.CD_Object.arrayType(), CD_KERNEL_CONTEXT, ConstantDescs.CD_long.arrayType(),
        ConstantDescs.CD_Object.arrayType(), ConstantDescs.CD_int.arrayType(), ConstantDescs.CD_int,
        ConstantDescs.CD_int);
    /** The region method's type as a handle sees it. */
    static final MethodType REGION_METHOD_TYPE = MethodType.methodType(int.class, Object[].class, KernelContext.class,
        long[].class, Object[].class, int[].class, int.class, int.class);
    private static final MethodTypeDesc BIND_TYPE = MethodTypeDesc.of(ConstantDescs.CD_void, CD_KERNEL_CONTEXT,
        ConstantDescs.CD_int);
    private static final MethodTypeDesc ABORTED_TYPE = MethodTypeDesc.of(ConstantDescs.CD_boolean, CD_KERNEL_CONTEXT);
    private static final DynamicConstantDesc<MethodHandle> BIND = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 0);
    private static final DynamicConstantDesc<MethodHandle> ABORTED_CHECK = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 1);
    /** Initializes M's class (class data 2, for a static M only): Lookup.ensureInitialized bound to it, ()V. */
    private static final DynamicConstantDesc<MethodHandle> INITIALIZE_HOST = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 4);
    /** KernelFrames.add bound to the kernel's class, method and file, (Throwable, int)void (class data 3). */
    private static final DynamicConstantDesc<MethodHandle> ADD_FRAME = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 3);
    private static final MethodTypeDesc ADD_FRAME_TYPE = MethodTypeDesc.of(ConstantDescs.CD_void,
        ClassDesc.of("java.lang.Throwable"), ConstantDescs.CD_int);
    private static final MethodHandle ADD_FRAME_HANDLE;
    /** KernelContext.abortedAtSync, (KernelContext)RuntimeException: the exception a stopped thread unwinds with. */
    private static final DynamicConstantDesc<MethodHandle> ABORTED_AT_SYNC = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 2);
    private static final MethodTypeDesc ABORTED_AT_SYNC_TYPE = MethodTypeDesc.of(
        ClassDesc.of("java.lang.RuntimeException"), CD_KERNEL_CONTEXT);
    /**
     * Added to a sync's state to resume its thread by unwinding: the sync throws KernelAbortedException, as a wait of
     * a failed launch does on strands, so the thread's finally blocks run (Strand.runCompiledBlock).
     */
    static final int UNWIND = 1 << 24;
    /** The step method's type as a handle sees it. */
    static final MethodType STEP_METHOD_TYPE = MethodType.methodType(int.class, Object[].class, KernelContext.class,
        long[].class, Object[].class, int.class, int.class);
    /** The hidden class's static flag: M's class has been initialized (a benign race: initializing is idempotent). */
    private static final String HOST_READY = "hostReady";
    private static final MethodHandle ENSURE_INITIALIZED;
    /** step's own parameters take slots 0..5; M's locals follow. */
    private static final int CAPTURED = 0;
    private static final int CONTEXT = 1;
    private static final int PRIMS = 2;
    private static final int REFS = 3;
    private static final int BASE = 4;
    private static final int STATE = 5;
    private static final int SHIFT = 6;

    private static final List<MethodHandle> CLASS_DATA;
    /** The waits a compiled thread may suspend at without a stack, by name (isWait), and their helpers. */
    private static final List<String> WAIT_NAMES = List.of("producerAcquire", "consumerWait");
    private static final MethodType WAIT_METHOD_TYPE = MethodType.methodType(boolean.class,
        dev.jpipeline.Pipeline.class);
    private static final MethodTypeDesc WAIT_TYPE = MethodTypeDesc.of(ConstantDescs.CD_boolean,
        ClassDesc.of("dev.jpipeline.Pipeline"));
    private static final List<MethodHandle> WAIT_HANDLES;
    /** Class data index of the first wait helper: after bind, aborted, abortedAtSync, addFrame, initialize. */
    private static final int FIRST_WAIT_DATA = 5;
    /** Strand.schedulingPoint and schedulingPointPassed: class data after the wait helpers. */
    private static final List<MethodHandle> POINT_HANDLES;
    /** CompiledMake's helpers, by Pipeline.make's descriptor (isMake): class data after the scheduling points'. */
    private static final Map<String, MethodHandle> MAKE_HANDLES;
    private static final List<String> MAKE_TYPES = List.of(
        "(Ldev/jpipeline/Group;Ldev/jpipeline/PipelineSharedState;)Ldev/jpipeline/Pipeline;",
        "(Ldev/jpipeline/Group;Ldev/jpipeline/PipelineSharedState;I)Ldev/jpipeline/Pipeline;",
        "(Ldev/jpipeline/Group;Ldev/jpipeline/PipelineSharedState;Ldev/jpipeline/PipelineRole;)Ldev/jpipeline/Pipeline;");
    private static final int FIRST_MAKE_DATA = 11;
    private static final DynamicConstantDesc<MethodHandle> POINT = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 7);
    private static final DynamicConstantDesc<MethodHandle> POINT_PASSED = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 8);
    private static final MethodTypeDesc POINT_TYPE = MethodTypeDesc.of(ConstantDescs.CD_boolean, CD_KERNEL_CONTEXT,
        ConstantDescs.CD_String);
    private static final DynamicConstantDesc<MethodHandle> DEFERRING_POINT = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 9);
    private static final DynamicConstantDesc<MethodHandle> DEFERRED_POINT = DynamicConstantDesc.ofNamed(
        ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, ConstantDescs.CD_MethodHandle, 10);
    private static final MethodTypeDesc DEFERRED_TYPE = MethodTypeDesc.of(ConstantDescs.CD_boolean,
        CD_KERNEL_CONTEXT);
    private static final MethodTypeDesc POINT_PASSED_TYPE = MethodTypeDesc.of(ConstantDescs.CD_void,
        CD_KERNEL_CONTEXT);
    /** The accessors that are scheduling points under checked execution (CheckedLaunch.load, store, atomic). */
    private static final java.util.Set<String> ACCESSORS = java.util.Set.of("loadFloat", "storeFloat", "loadInt",
        "storeInt", "atomicAddInt", "atomicCasInt");
    /** The pipeline operations whose first act is a scheduling point (PipelineHandle.checkOwner). */
    private static final java.util.Set<String> PIPELINE_POINTS = java.util.Set.of("producerAcquire",
        "producerCommit", "consumerWait", "consumerRelease");

    static {
        try {
            MethodHandles.Lookup own = MethodHandles.lookup();
            CLASS_DATA = List.of(
                own.findVirtual(KernelContext.class, "bindPlainRank", MethodType.methodType(void.class, int.class)),
                own.findVirtual(KernelContext.class, "launchAborted", MethodType.methodType(boolean.class)),
                own.findVirtual(KernelContext.class, "abortedAtSync",
                    MethodType.methodType(KernelAbortedException.class))
                    .asType(MethodType.methodType(RuntimeException.class, KernelContext.class)));
            WAIT_HANDLES = List.of(
                own.findStatic(Strand.class, "producerAcquireWithoutStack", WAIT_METHOD_TYPE),
                own.findStatic(Strand.class, "consumerWaitWithoutStack", WAIT_METHOD_TYPE));
            POINT_HANDLES = List.of(
                own.findStatic(Strand.class, "schedulingPoint", MethodType.methodType(boolean.class,
                    KernelContext.class, String.class)),
                own.findStatic(Strand.class, "schedulingPointPassed", MethodType.methodType(void.class,
                    KernelContext.class)),
                own.findStatic(Strand.class, "deferringPoint", MethodType.methodType(boolean.class,
                    KernelContext.class, String.class)),
                own.findStatic(Strand.class, "deferredPoint", MethodType.methodType(boolean.class,
                    KernelContext.class)));
            MAKE_HANDLES = new java.util.LinkedHashMap<>();
            for (String descriptor : MAKE_TYPES) {
                MethodType call = MethodType.fromMethodDescriptorString(descriptor, RegionCompiler.class.getClassLoader());
                MAKE_HANDLES.put(descriptor, own.findStatic(CompiledMake.class, "make",
                    call.appendParameterTypes(KernelContext.class)));
            }
            ADD_FRAME_HANDLE = own.findStatic(KernelFrames.class, "add", MethodType.methodType(void.class,
                String.class, String.class, String.class, Throwable.class, int.class));
            ENSURE_INITIALIZED = own.findVirtual(MethodHandles.Lookup.class, "ensureInitialized",
                MethodType.methodType(Class.class, Class.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private RegionCompiler() {
    }

    /**
     * Compiles {@code method} of {@code host}.
     *
     * @param host      the class that declares the kernel's method (a lambda's implementation class)
     * @param model     its class file
     * @param method    the kernel's method: its last parameter is the KernelContext, the others (and the receiver
     *                  of an instance method) are the captured values in order
     * @throws Refusal where the code is beyond this compiler, saying why
     */
    static Compiled compile(Class<?> host, ClassModel model, MethodModel method) throws Refusal {
        return compile(host, model, method, false);
    }

    /**
     * Compiles {@code method} of {@code host}, for checked execution when {@code checked}: then each scheduling
     * point of its method (isSchedulingPoint) is a point where its thread may hand the turn on without a stack.
     */
    static Compiled compile(Class<?> host, ClassModel model, MethodModel method, boolean checked) throws Refusal {
        boolean isStatic = method.flags().has(AccessFlag.STATIC);
        MethodTypeDesc type = method.methodTypeSymbol();
        String where = host.getName() + "." + method.methodName().stringValue();
        if (type.parameterCount() == 0 || !type.parameterType(type.parameterCount() - 1).equals(CD_KERNEL_CONTEXT)
            || !type.returnType().equals(ConstantDescs.CD_void)) {
            throw new Refusal(where + type.descriptorString() + " does not end with a KernelContext parameter and "
                + "return void");
        }
        Module module = host.getModule();
        if (module.isNamed() && module != RegionCompiler.class.getModule()) {
            throw new Refusal("its class " + host.getName() + " is in the named module " + module.getName()
                + ": a kernel is compiled into a class defined beside its own with its full privilege, which Java "
                + "gives only within one module (opens and --add-reads do not: put the kernel on the class path to "
                + "compile it)");
        }
        if (model.majorVersion() < ClassFile.JAVA_7_VERSION) {
            throw new Refusal(host.getName() + " is a class file of version " + model.majorVersion()
                + ", older than Java 7's (its code carries no stack map frames)");
        }
        if (method.flags().has(AccessFlag.SYNCHRONIZED)) {
            throw new Refusal(where + " is synchronized");
        }
        CodeAttribute code = (CodeAttribute) method.code()
            .orElseThrow(() -> new Refusal(where + " has no code"));
        List<CodeElement> elements = code.elementList();
        java.util.Set<Integer> loopHeads = loopHeads(code, elements);
        Map<Integer, Integer> waitLoads = waitLoads(elements);
        Map<Integer, Integer> afterCalls = checked ? afterCalls(elements) : Map.of();   // call -> next instruction
        java.util.Set<Integer> afterNext = new java.util.HashSet<>(afterCalls.values());
        Map<Integer, State> syncs;
        try {
            syncs = FrameAnalysis.analyse(code, model.thisClass().asSymbol(), isStatic, type,
                (i, e) -> isSync(e) || isWarpSync(e) || isMake(e) || loopHeads.contains(i) || waitLoads.containsKey(i)
                    || checked && isSchedulingPoint(e) || afterNext.contains(i));
        } catch (IllegalArgumentException e) {
            throw new Refusal("the code of " + where + " could not be analysed: " + e.getMessage());
        }
        List<Integer> order = new ArrayList<>();
        List<Integer> yields = new ArrayList<>();
        List<Integer> warpSyncs = new ArrayList<>();
        java.util.Set<Integer> makes = new java.util.HashSet<>();
        int stackCells = 0;                     // frame cells for the operand stack at a make or scheduling point
        for (int i = 0; i < elements.size(); i++) {
            if (!checked && loopHeads.contains(i) && syncs.containsKey(i) && syncs.get(i).stack().isEmpty()
                && java.util.Arrays.stream(syncs.get(i).locals()).noneMatch(v -> v.kind() == Kind.UNINITIALIZED)) {
                yields.add(i);                  // a loop's head with nothing on the stack: a yield point
            }
            if (isSync(elements.get(i)) || isWarpSync(elements.get(i))) {
                State state = syncs.get(i);
                if (state == null) {
                    continue;                   // unreachable: left as it is (it never runs)
                }
                if (state.stack().size() != 1) {
                    throw new Refusal(where + " calls syncThreads with values on the operand stack (inside an "
                        + "expression)");
                }
                for (VType local : state.locals()) {
                    if (local.kind() == Kind.UNINITIALIZED) {
                        throw new Refusal(where + " keeps an object under construction across syncThreads");
                    }
                }
                (isSync(elements.get(i)) ? order : warpSyncs).add(i);
            }
            State made = isMake(elements.get(i)) ? syncs.get(i) : null;
            if (made != null && made.stack().stream().noneMatch(v -> v.kind() == Kind.UNINITIALIZED)
                && java.util.Arrays.stream(made.locals()).noneMatch(v -> v.kind() == Kind.UNINITIALIZED)) {
                order.add(i);                   // a block sync point (else the call waits with its stack)
                makes.add(i);
                stackCells = Math.max(stackCells, cells(made));
            }
        }
        int blockSyncCount = order.size();
        order.addAll(warpSyncs);                // states 1..K: __syncthreads, K+1..K+W: __syncwarp, then waits
        int syncCount = order.size();
        Map<Integer, Integer> waitInvokes = new java.util.HashMap<>();     // a wait's invoke -> its load's index
        for (Map.Entry<Integer, Integer> wait : new java.util.TreeMap<>(waitLoads).entrySet()) {
            State state = syncs.get(wait.getKey());
            if (state != null && state.stack().isEmpty() && java.util.Arrays.stream(state.locals())
                .noneMatch(v -> v.kind() == Kind.UNINITIALIZED)) {
                order.add(wait.getKey());
                waitInvokes.put(wait.getValue(), wait.getKey());
            }
        }
        int waitCount = order.size() - syncCount;
        Map<Integer, Integer> afterPoints = new java.util.HashMap<>();  // a point behind a call -> the call
        if (checked) {
            for (int i = 0; i < elements.size(); i++) {
                State state = syncs.get(i);
                if (isSchedulingPoint(elements.get(i)) && state != null && state.stack().stream()
                    .noneMatch(v -> v.kind() == Kind.UNINITIALIZED) && java.util.Arrays.stream(state.locals())
                    .noneMatch(v -> v.kind() == Kind.UNINITIALIZED)) {
                    order.add(i);               // else its call hands the turn on with its stack, as on strands
                    stackCells = Math.max(stackCells, cells(state));
                    Integer next = afterCalls.get(i);
                    State after = next == null ? null : syncs.get(next);
                    if (after != null && after.stack().stream().noneMatch(v -> v.kind() == Kind.UNINITIALIZED)) {
                        order.add(next);        // its deferred scheduling point, behind the call
                        afterPoints.put(next, i);
                        stackCells = Math.max(stackCells, cells(after));
                    }
                }
            }
        }
        int pointCount = order.size() - syncCount - waitCount;
        order.addAll(yields);                   // then the loop heads
        boolean[] kept = parametersNeverStored(code, isStatic, type);
        for (int k = 0; k < order.size(); k++) {
            VType[] locals = syncs.get(order.get(k)).locals();
            for (int s = 0; s < locals.length; s++) {
                if (kept[s]) {
                    locals[s] = VType.TOP;      // unpacked again by the prologue of every step: nothing to keep
                }
            }
        }
        ClassDesc self = ClassDesc.of(host.getName() + "$$KernelRegions");
        boolean hostIsInterface = host.isInterface();
        String sourceFile = model.findAttribute(java.lang.classfile.Attributes.sourceFile())
            .map(a -> a.sourceFile().stringValue()).orElse(null);
        ClassHierarchyResolver resolver = resolver(host);
        byte[] bytes;
        try {
            bytes = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(resolver)).build(self, cb -> {
                cb.withFlags(AccessFlag.FINAL, AccessFlag.SYNTHETIC);
                if (sourceFile != null) {
                    cb.with(SourceFileAttribute.of(sourceFile));
                }
                cb.withMethod("step", STEP_TYPE, ClassFile.ACC_STATIC | ClassFile.ACC_PRIVATE, mb ->
                    mb.transformCode(code, new StepTransform(type, isStatic, model.thisClass().asSymbol(),
                        hostIsInterface, syncs, order, syncCount, waitCount, pointCount, waitInvokes, afterPoints,
                        makes, code.maxLocals(), where)));
                if (isStatic) {
                    cb.withField(HOST_READY, ConstantDescs.CD_boolean, ClassFile.ACC_STATIC | ClassFile.ACC_PRIVATE);
                }
                cb.withMethodBody("region", REGION_TYPE, ClassFile.ACC_STATIC, b -> {
                    if (isStatic) {
                        initializeHost(b, self);
                    }
                    if (order.isEmpty()) {
                        plainRegion(b, self);
                    } else {
                        region(b, self, syncCount);
                    }
                });
            });
        } catch (RefusalInBuild e) {
            throw new Refusal(e.getMessage());
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new Refusal("the regions of " + where + " could not be generated: " + e);
        }
        try {
            MethodHandles.Lookup hostLookup = MethodHandles.privateLookupIn(host, MethodHandles.lookup());
            // a static M's class need not be initialized yet (a method reference Other::kernel does not initialize
            // Other; calling it does, JLS 12.4.1): the region initializes it as the call on strands would
            MethodHandle addFrame = MethodHandles.insertArguments(ADD_FRAME_HANDLE, 0, host.getName(),
                method.methodName().stringValue(), sourceFile);
            List<MethodHandle> classData = new ArrayList<>(List.of(CLASS_DATA.get(0), CLASS_DATA.get(1),
                CLASS_DATA.get(2), addFrame, !isStatic ? MethodHandles.empty(MethodType.methodType(void.class))
                    : MethodHandles.dropReturn(ENSURE_INITIALIZED.bindTo(hostLookup).bindTo(host))));
            classData.addAll(WAIT_HANDLES);
            classData.addAll(POINT_HANDLES);
            classData.addAll(MAKE_HANDLES.values());
            MethodHandles.Lookup hidden = hostLookup.defineHiddenClassWithClassData(bytes, classData, true,
                MethodHandles.Lookup.ClassOption.NESTMATE);
            MethodHandle region = hidden.findStatic(hidden.lookupClass(), "region", REGION_METHOD_TYPE);
            MethodHandle step = hidden.findStatic(hidden.lookupClass(), "step", STEP_METHOD_TYPE);
            int width = pointCount == 0 && makes.isEmpty() ? code.maxLocals()
                : StepTransform.temps(code.maxLocals()) + stackCells;
            List<String> lines = pointLines(host, method, sourceFile, elements, order);
            return new Compiled(region, step, width, syncCount, order.size() - syncCount - waitCount - pointCount,
                blockSyncCount, waitCount, pointCount, lines, new CheckedLaunch.Site[lines.size()]);
        } catch (IllegalAccessException e) {
            throw new Refusal("its class " + host.getName() + " is not open to dev.jpipeline.simt for defining "
                + "code beside it (" + e.getMessage() + ")");
        } catch (ReflectiveOperationException | LinkageError | IllegalArgumentException e) {
            throw new Refusal("the regions of " + where + " did not load: " + e);
        }
    }

    /**
     * The kernel's method by name (first), then where each resumption point is, by state (1, 2, ...):
     * {@code Owner.method(File.java:line)}, the line of the instruction the point is at.
     */
    private static List<String> pointLines(Class<?> host, MethodModel method, String sourceFile,
                                           List<CodeElement> elements, List<Integer> order) {
        String owner = host.getName().substring(host.getName().lastIndexOf('.') + 1);
        String name = owner + "." + method.methodName().stringValue();
        int[] lineAt = new int[elements.size()];
        int line = -1;
        for (int i = 0; i < elements.size(); i++) {
            if (elements.get(i) instanceof java.lang.classfile.instruction.LineNumber number) {
                line = number.line();
            }
            lineAt[i] = line;
        }
        List<String> lines = new ArrayList<>();
        lines.add(host.getName() + "." + method.methodName().stringValue() + method.methodType().stringValue());
        for (int index : order) {
            lines.add(name + "(" + (sourceFile == null ? "?" : sourceFile) + ":" + lineAt[index] + ")");
        }
        return List.copyOf(lines);
    }

    /** Resolves the classes M's code names, for the stack maps: the JDK's, then through host's loader. */
    static ClassHierarchyResolver resolver(Class<?> host) {
        ClassLoader loader = host.getClassLoader();
        return ClassHierarchyResolver.defaultResolver()
            .orElse(loader == null ? ClassHierarchyResolver.defaultResolver()
                : ClassHierarchyResolver.ofResourceParsing(loader))
            .orElse(ClassHierarchyResolver.ofClassLoading(loader == null ? ClassLoader.getPlatformClassLoader()
                : loader));
    }

    /**
     * The slots of M's parameters (and receiver) that its code never stores to: each step's prologue unpacks them
     * from its arguments, so they need no frame cell.
     */
    private static boolean[] parametersNeverStored(CodeAttribute code, boolean isStatic, MethodTypeDesc type) {
        boolean[] kept = new boolean[code.maxLocals()];
        int slot = 0;
        if (!isStatic) {
            kept[slot++] = true;
        }
        for (ClassDesc parameter : type.parameterList()) {
            kept[slot] = true;
            slot += TypeKind.from(parameter).slotSize();
        }
        for (CodeElement element : code) {
            switch (element) {
                case StoreInstruction store -> {
                    kept[store.slot()] = false;
                    if (store.typeKind().slotSize() == 2) {
                        kept[store.slot() + 1] = false;
                    }
                }
                case IncrementInstruction inc -> kept[inc.slot()] = false;
                default -> { }
            }
        }
        return kept;
    }

    /**
     * The indices of the first instruction after each loop head: a label that a branch or switch after it targets
     * (a backward branch), where a thread that has run a loop long enough yields (see the class comment).
     */
    private static java.util.Set<Integer> loopHeads(CodeAttribute code, List<CodeElement> elements) {
        Map<Integer, Integer> labelIndex = new java.util.HashMap<>();
        for (int i = 0; i < elements.size(); i++) {
            if (elements.get(i) instanceof Label label) {
                labelIndex.putIfAbsent(code.labelToBci(label), i);
            }
        }
        java.util.Set<Integer> heads = new java.util.TreeSet<>();
        for (int i = 0; i < elements.size(); i++) {
            List<Label> targets = switch (elements.get(i)) {
                case java.lang.classfile.instruction.BranchInstruction branch -> List.of(branch.target());
                case java.lang.classfile.instruction.TableSwitchInstruction table -> java.util.stream.Stream.concat(
                    java.util.stream.Stream.of(table.defaultTarget()),
                    table.cases().stream().map(java.lang.classfile.instruction.SwitchCase::target)).toList();
                case java.lang.classfile.instruction.LookupSwitchInstruction lookup -> java.util.stream.Stream.concat(
                    java.util.stream.Stream.of(lookup.defaultTarget()),
                    lookup.cases().stream().map(java.lang.classfile.instruction.SwitchCase::target)).toList();
                default -> List.of();
            };
            for (Label target : targets) {
                int at = labelIndex.getOrDefault(code.labelToBci(target), Integer.MAX_VALUE);
                if (at <= i) {
                    int first = at;
                    while (first < elements.size() && !(elements.get(first)
                        instanceof java.lang.classfile.Instruction)) {
                        first++;
                    }
                    heads.add(first);
                }
            }
        }
        return heads;
    }

    /**
     * A pipeline wait a compiled thread may suspend at without a stack: {@code pipe.producerAcquire()} or
     * {@code pipe.consumerWait()}. Until it can go on, such a wait has done nothing a second call would do again
     * (StageHandle: it claims its side once, and its state changes only once the stage is free or ready), so the
     * thread resumes by calling it again.
     */
    static boolean isWait(CodeElement element) {
        return element instanceof InvokeInstruction invoke && invoke.opcode() == Opcode.INVOKEVIRTUAL
            && invoke.type().equalsString("()V") && invoke.owner().asInternalName().equals("dev/jpipeline/Pipeline")
            && WAIT_NAMES.contains(invoke.name().stringValue());
    }

    /** The frame cells the operand stack of {@code state} takes (a long or double two). */
    private static int cells(State state) {
        int cells = 0;
        for (VType v : state.stack()) {
            cells += v.wide() ? 2 : 1;
        }
        return cells;
    }

    /**
     * A pipeline's memcpyAsync, whose scheduling points are two: its first act (the handle's, as every pipeline
     * operation's) and, once its copy is issued, another (CheckedLaunch.issue). The compiled call decides the first
     * before it and defers the second behind it (KernelThread.deferring): what the call does between them is the
     * thread's own (it checks its arguments, marks and issues its copy), so deciding it on return orders the threads
     * as strands do.
     */
    static boolean isDeferringCall(CodeElement element) {
        return element instanceof InvokeInstruction invoke && invoke.opcode() == Opcode.INVOKESTATIC
            && invoke.owner().asInternalName().equals("dev/jpipeline/MemcpyAsync")
            && invoke.name().equalsString("memcpyAsync")
            && invoke.type().stringValue().endsWith("Ldev/jpipeline/Pipeline;)Ldev/jpipeline/AsyncContractFulfillment;");
    }

    /** Each deferring call's index and the index of the instruction behind it (where its second point is). */
    private static Map<Integer, Integer> afterCalls(List<CodeElement> elements) {
        Map<Integer, Integer> after = new java.util.HashMap<>();
        for (int i = 0; i < elements.size(); i++) {
            if (isDeferringCall(elements.get(i))) {
                int j = i + 1;
                while (j < elements.size() && !(elements.get(j) instanceof java.lang.classfile.Instruction)) {
                    if (elements.get(j) instanceof Label) {
                        j = elements.size();    // a branch target: no point there
                    }
                    j++;
                }
                if (j < elements.size()) {
                    after.put(i, j);
                }
            }
        }
        return after;
    }

    /** A scheduling point's name in checked execution's trace, as the call's own scheduling point gives it. */
    private static String traceName(String method) {
        return switch (method) {
            case "loadFloat", "loadInt" -> "load";
            case "storeFloat", "storeInt" -> "store";
            case "atomicAddInt", "atomicCasInt" -> "atomic";
            default -> method.replaceAll("([A-Z])", "_$1").toLowerCase(java.util.Locale.ROOT);
        };
    }

    /**
     * Under checked execution, a call whose first act is a scheduling point (BlockScheduler.yieldPoint): an accessor
     * of shared or global memory, or a pipeline operation of a handle. The compiled call decides first, and may hand
     * the turn on without a stack; the call's own scheduling point is then passed (KernelThread.yieldDecided).
     */
    static boolean isSchedulingPoint(CodeElement element) {
        return isDeferringCall(element) || element instanceof InvokeInstruction invoke
            && invoke.opcode() == Opcode.INVOKEVIRTUAL
            && (invoke.owner().asSymbol().equals(CD_KERNEL_CONTEXT) && ACCESSORS.contains(invoke.name().stringValue())
                || invoke.owner().asInternalName().equals("dev/jpipeline/Pipeline") && invoke.type().equalsString("()V")
                    && PIPELINE_POINTS.contains(invoke.name().stringValue()));
    }

    /**
     * The waits (isWait) whose receiver a local variable gives, just before the call (aload, with no label between:
     * nothing jumps in): by the index of that load, where the thread resumes (it loads the receiver again), the index
     * of the call. A wait whose receiver comes otherwise (a field, a call) is left as a call, which blocks as on
     * strands.
     */
    private static Map<Integer, Integer> waitLoads(List<CodeElement> elements) {
        Map<Integer, Integer> loads = new java.util.HashMap<>();
        for (int i = 0; i < elements.size(); i++) {
            if (!isWait(elements.get(i))) {
                continue;
            }
            int j = i - 1;
            while (j >= 0 && elements.get(j) instanceof java.lang.classfile.PseudoInstruction
                && !(elements.get(j) instanceof Label)) {
                j--;
            }
            if (j >= 0 && elements.get(j) instanceof LoadInstruction load && load.typeKind() == TypeKind.REFERENCE) {
                loads.put(j, i);
            }
        }
        return loads;
    }

    /**
     * {@code Pipeline.make(group, state)}, or its partitioned forms: a collective that syncs the group twice. A
     * compiled thread makes it in steps (CompiledMake): the call is a block sync point whose frame keeps its
     * arguments, and the thread calls it again behind each of the two syncs.
     */
    static boolean isMake(CodeElement element) {
        return element instanceof InvokeInstruction invoke && invoke.opcode() == Opcode.INVOKESTATIC
            && invoke.owner().asInternalName().equals("dev/jpipeline/Pipeline") && invoke.name().equalsString("make")
            && MAKE_TYPES.contains(invoke.type().stringValue());
    }

    /** ctx.syncWarp(), the full-mask __syncwarp. */
    static boolean isWarpSync(CodeElement element) {
        return element instanceof InvokeInstruction invoke && invoke.opcode() == Opcode.INVOKEVIRTUAL
            && invoke.type().equalsString("()V") && invoke.owner().asSymbol().equals(CD_KERNEL_CONTEXT)
            && invoke.name().equalsString("syncWarp");
    }

    static boolean isSync(CodeElement element) {
        return element instanceof InvokeInstruction invoke && invoke.opcode() == Opcode.INVOKEVIRTUAL
            && invoke.type().equalsString("()V")
            && (invoke.owner().asSymbol().equals(CD_KERNEL_CONTEXT) && invoke.name().equalsString("syncThreads")
                || invoke.owner().asSymbol().equals(CD_THREAD_BLOCK) && invoke.name().equalsString("sync"));
    }

    /** A refusal found while the class is being built (the builder's lambdas cannot throw checked exceptions). */
    private static final class RefusalInBuild extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RefusalInBuild(String message) {
            super(message, null, false, false);
        }
    }

    /** Rewrites M's code into step (see the class comment). Stateful: one per method built. */
    private static final class StepTransform implements CodeTransform {
        private final MethodTypeDesc type;
        private final boolean isStatic;
        private final ClassDesc owner;
        private final boolean ownerIsInterface;
        private final Map<Integer, State> syncs;
        private final List<Integer> order;
        private final int syncCount;
        /** A local after M's: how many loop heads this step has passed (a yield after YIELD_EVERY). */
        private final int counter;
        /** The next local: 1 when this step resumes a thread behind a sync by unwinding it (state past UNWIND). */
        private final int unwinding;
        /** The next: the source line of M the step is on (from its LineNumberTable), for KernelFrames. */
        private final int line;
        /** The next: the throwable that leaves the step, in its handler. */
        private final int thrown;
        /** Where M's code starts and ends in step: the handler that adds M's frame covers it. */
        private Label codeStart;
        private Label codeEnd;
        private final String where;
        private final Label[] resume;
        private int index;
        /** Where each resumption point is, by instruction index: the point's number k (state k + 1). */
        private final Map<Integer, Integer> syncAt = new java.util.HashMap<>();
        private final Map<Integer, Integer> waitAt = new java.util.HashMap<>();
        private final Map<Integer, Integer> yieldAt = new java.util.HashMap<>();
        private final Map<Integer, Integer> pointAt = new java.util.HashMap<>();
        /** A deferring call's point behind it, by the call's index. */
        private final Map<Integer, Integer> afterAt = new java.util.HashMap<>();
        private final int pointCount;
        private final int firstPoint;
        /** The first slot (of M's numbering) of the temporaries that keep the operand stack at a scheduling point. */
        private final int tempBase;
        /** Where each scheduling point's call is, to jump to behind its decision. */
        private final Map<Integer, Label> pointCall = new java.util.HashMap<>();
        /** A wait's call, by index: the index of its receiver's load (its point). */
        private final Map<Integer, Integer> waitInvokes;
        /** The makes (isMake) that are block sync points, by index. */
        private final java.util.Set<Integer> makes;

        StepTransform(MethodTypeDesc type, boolean isStatic, ClassDesc owner, boolean ownerIsInterface,
                      Map<Integer, State> syncs, List<Integer> order, int syncCount, int waitCount, int pointCount,
                      Map<Integer, Integer> waitInvokes, Map<Integer, Integer> afterPoints,
                      java.util.Set<Integer> makes, int maxLocals, String where) {
            this.makes = makes;
            for (int k = 0; k < order.size(); k++) {
                if (k >= syncCount + waitCount && k < syncCount + waitCount + pointCount
                    && afterPoints.containsKey(order.get(k))) {
                    afterAt.put(afterPoints.get(order.get(k)), k);     // keyed by its call
                    continue;
                }
                (k < syncCount ? syncAt : k < syncCount + waitCount ? waitAt
                    : k < syncCount + waitCount + pointCount ? pointAt : yieldAt).put(order.get(k), k);
            }
            this.pointCount = pointCount;
            this.firstPoint = syncCount + waitCount;
            this.tempBase = temps(maxLocals);
            this.waitInvokes = waitInvokes;
            this.syncCount = syncCount;
            this.counter = SHIFT + maxLocals;
            this.unwinding = SHIFT + maxLocals + 1;
            this.line = SHIFT + maxLocals + 2;
            this.thrown = SHIFT + maxLocals + 3;
            this.type = type;
            this.isStatic = isStatic;
            this.owner = owner;
            this.ownerIsInterface = ownerIsInterface;
            this.syncs = syncs;
            this.order = order;
            this.where = where;
            this.resume = new Label[order.size()];
        }

        /** The first temporary slot (of M's numbering): past M's locals and step's own four. */
        static int temps(int maxLocals) {
            return maxLocals + 4;
        }

        /** The operand stack at a scheduling point kept in temporaries: their types, slot by slot from tempBase. */
        private VType[] stackAsLocals(List<VType> stack) {
            List<VType> slots = new ArrayList<>();
            for (VType v : stack) {
                slots.add(v);
                if (v.wide()) {
                    slots.add(VType.TOP);
                }
            }
            return slots.toArray(VType[]::new);
        }

        @Override
        public void atStart(CodeBuilder b) {
            int slot = 0;
            int captured = 0;
            if (!isStatic) {
                b.aload(CAPTURED).loadConstant(captured++).aaload().checkcast(owner).astore(SHIFT + slot++);
            }
            for (int p = 0; p < type.parameterCount(); p++) {
                ClassDesc parameter = type.parameterType(p);
                TypeKind kind = TypeKind.from(parameter);
                if (p == type.parameterCount() - 1) {
                    b.aload(CONTEXT).astore(SHIFT + slot);
                } else {
                    b.aload(CAPTURED).loadConstant(captured++).aaload();
                    unbox(b, parameter);
                    b.storeLocal(kind, SHIFT + slot);
                }
                slot += kind.slotSize();
            }
            if (!yieldAt.isEmpty()) {
                b.iconst_0().istore(counter);
            }
            b.iconst_0().istore(line);
            codeStart = b.newLabel();
            codeEnd = b.newLabel();
            if (order.isEmpty()) {
                b.labelBinding(codeStart);
                return;
            }
            Label start = b.newLabel();
            Label[] restore = new Label[order.size()];
            List<java.lang.classfile.instruction.SwitchCase> cases = new ArrayList<>();
            cases.add(java.lang.classfile.instruction.SwitchCase.of(0, start));
            for (int k = 0; k < order.size(); k++) {
                restore[k] = b.newLabel();
                resume[k] = b.newLabel();
                cases.add(java.lang.classfile.instruction.SwitchCase.of(k + 1, restore[k]));
            }
            Label bad = b.newLabel();
            if (syncCount + waitAt.size() + pointCount > 0) {   // past UNWIND: resume there by unwinding
                Label normal = b.newLabel();
                Label dispatch = b.newLabel();
                b.iload(STATE).loadConstant(UNWIND).if_icmplt(normal);
                b.iload(STATE).loadConstant(UNWIND).isub().istore(STATE).iconst_1().istore(unwinding).goto_(dispatch);
                b.labelBinding(normal);
                b.iconst_0().istore(unwinding);
                b.labelBinding(dispatch);
            }
            b.iload(STATE).tableswitch(0, order.size(), bad, cases);
            b.labelBinding(bad);
            b.new_(ClassDesc.of("java.lang.IllegalStateException")).dup().ldc("no such resumption state").invokespecial(ClassDesc.of("java.lang.IllegalStateException"),
                    ConstantDescs.INIT_NAME, MethodTypeDesc.of(ConstantDescs.CD_void, ConstantDescs.CD_String))
                .athrow();
            for (int k = 0; k < order.size(); k++) {
                b.labelBinding(restore[k]);
                VType[] locals = syncs.get(order.get(k)).locals();
                for (int s = 0; s < locals.length; s++) {
                    restoreLocal(b, locals[s], s);
                }
                if (k >= firstPoint && k < firstPoint + pointCount || makes.contains(order.get(k))) {
                    VType[] temps = stackAsLocals(syncs.get(order.get(k)).stack());
                    for (int s = 0; s < temps.length; s++) {
                        restoreLocal(b, temps[s], tempBase + s);
                    }
                }
                b.goto_(resume[k]);
            }
            b.labelBinding(start);
            b.labelBinding(codeStart);
        }

        /**
         * After M's code: a handler for whatever leaves it, which adds M's frame to its stack trace (hidden frames are
         * left out of stack traces) and throws it on; listed after M's own handlers, so it is the outermost.
         */
        @Override
        public void atEnd(CodeBuilder b) {
            Label handler = b.newLabel();
            b.labelBinding(codeEnd);
            b.exceptionCatchAll(codeStart, codeEnd, handler);
            b.labelBinding(handler);
            b.astore(thrown);
            b.ldc(ADD_FRAME).aload(thrown).iload(line)
                .invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", ADD_FRAME_TYPE);
            b.aload(thrown).athrow();
        }

        @Override
        public void accept(CodeBuilder b, CodeElement element) {
            int i = index++;
            Integer yieldPoint = yieldAt.get(i);
            if (yieldPoint != null) {           // a loop head: yield once the step has passed enough of them
                int point = yieldPoint;
                Label go = b.newLabel();
                b.iinc(counter, 1).iload(counter).loadConstant(YIELD_EVERY).if_icmplt(go);
                VType[] locals = syncs.get(i).locals();
                for (int s = 0; s < locals.length; s++) {
                    spillLocal(b, locals[s], s);
                }
                b.loadConstant(point + 1).ireturn();
                b.labelBinding(resume[point]);
                b.labelBinding(go);
            }
            Integer waitPoint = waitAt.get(i);
            if (waitPoint != null) {            // a wait's receiver is loaded here: a thread resumes here, calling it again
                b.labelBinding(resume[waitPoint]);
                unwindHere(b);
            }
            Integer schedulingPoint = pointAt.get(i);
            if (schedulingPoint != null) {      // checked: decide first, and hand the turn on without a stack
                schedulingPoint(b, i, schedulingPoint, traceName(((InvokeInstruction) element).name().stringValue()),
                    afterAt.containsKey(i) ? DEFERRING_POINT : POINT);
            }
            Integer waitLoad = waitInvokes.get(i);
            if (waitLoad != null) {             // the wait, through its helper: false when the thread is suspended
                InvokeInstruction invoke = (InvokeInstruction) element;
                int k = waitAt.get(waitLoad);
                Label go = b.newLabel();
                b.ldc(DynamicConstantDesc.ofNamed(ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME,
                        ConstantDescs.CD_MethodHandle, FIRST_WAIT_DATA + WAIT_NAMES.indexOf(invoke.name().stringValue())))
                    .swap().invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", WAIT_TYPE).ifne(go);
                VType[] locals = syncs.get(waitLoad).locals();
                for (int s = 0; s < locals.length; s++) {
                    spillLocal(b, locals[s], s);
                }
                b.loadConstant(k + 1).ireturn();
                b.labelBinding(go);
                if (schedulingPoint != null) {
                    pointPassed(b);
                }
                return;
            }
            Integer syncPoint = syncAt.get(i);
            int point = syncPoint == null ? -1 : syncPoint;
            if (point >= 0 && makes.contains(i)) {
                make(b, (InvokeInstruction) element, syncs.get(i), point);
                return;
            }
            switch (element) {
                case java.lang.classfile.instruction.LineNumber number -> {
                    b.with(number);
                    b.loadConstant(number.line()).istore(line);
                }
                case LoadInstruction load -> b.loadLocal(load.typeKind(), load.slot() + SHIFT);
                case StoreInstruction store -> b.storeLocal(store.typeKind(), store.slot() + SHIFT);
                case IncrementInstruction inc -> b.iinc(inc.slot() + SHIFT, inc.constant());
                case ReturnInstruction ignored -> b.loadConstant(RETURNED).ireturn();
                case LocalVariable ignored -> { }
                case LocalVariableType ignored -> { }
                case CharacterRange ignored -> { }
                case InvokeInstruction invoke when (isSync(invoke) || isWarpSync(invoke)) && point >= 0 -> {
                    int k = point;
                    b.invokestatic(CD_OBJECTS, "requireNonNull", MethodTypeDesc.of(ConstantDescs.CD_Object,
                        ConstantDescs.CD_Object)).pop();
                    VType[] locals = syncs.get(i).locals();
                    for (int s = 0; s < locals.length; s++) {
                        spillLocal(b, locals[s], s);
                    }
                    b.loadConstant(k + 1).ireturn();
                    b.labelBinding(resume[k]);
                    unwindHere(b);
                }
                case InvokeInstruction invoke when invoke.opcode() == Opcode.INVOKESPECIAL
                    && !invoke.name().equalsString(ConstantDescs.INIT_NAME) -> {
                    if (!invoke.owner().asSymbol().equals(owner)) {
                        throw new RefusalInBuild(where + " calls " + invoke.owner().asInternalName() + "."
                            + invoke.name() + " with invokespecial (super.): a nestmate cannot");
                    }
                    if (ownerIsInterface) {
                        b.invokeinterface(owner, invoke.name().stringValue(), invoke.typeSymbol());
                    } else {
                        b.invokevirtual(owner, invoke.name().stringValue(), invoke.typeSymbol());
                    }
                }
                case Attribute<?> ignored -> { }
                default -> b.with(element);
            }
            if (schedulingPoint != null) {
                pointPassed(b);
            }
            Integer after = afterAt.get(i);
            if (after != null) {                // the call's deferred scheduling point
                deferredPoint(b, after);
            }
        }

        /**
         * A make (isMake) at block sync point {@code k}: its arguments and whatever lies below them go into
         * temporaries; the thread calls CompiledMake's helper with them and its context. A null result means "sync,
         * then call again": the frame keeps the locals and the temporaries and the step returns k + 1, which
         * Strand.stepCompiled passes as a __syncthreads; the thread resumes in front of the call (resume[k]) with its
         * temporaries restored.
         */
        private void make(CodeBuilder b, InvokeInstruction invoke, State state, int k) {
            List<VType> stack = state.stack();
            VType[] temps = stackAsLocals(stack);
            int[] slots = new int[stack.size()];
            int slot = 0;
            for (int j = 0; j < stack.size(); j++) {
                slots[j] = slot;
                slot += stack.get(j).wide() ? 2 : 1;
            }
            for (int j = stack.size() - 1; j >= 0; j--) {
                storeTemp(b, stack.get(j), SHIFT + tempBase + slots[j]);
            }
            b.labelBinding(resume[k]);
            unwindHere(b);
            int arguments = invoke.typeSymbol().parameterCount();
            for (int j = 0; j < stack.size() - arguments; j++) {
                loadTemp(b, stack.get(j), SHIFT + tempBase + slots[j]);
            }
            b.ldc(DynamicConstantDesc.ofNamed(ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME,
                ConstantDescs.CD_MethodHandle, FIRST_MAKE_DATA + MAKE_TYPES.indexOf(invoke.type().stringValue())));
            for (int j = stack.size() - arguments; j < stack.size(); j++) {
                loadTemp(b, stack.get(j), SHIFT + tempBase + slots[j]);
            }
            b.aload(CONTEXT).invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact",
                invoke.typeSymbol().insertParameterTypes(arguments, CD_KERNEL_CONTEXT));
            Label go = b.newLabel();
            b.dup().ifnonnull(go).pop();
            spillAndReturn(b, state, temps, k);
            b.labelBinding(go);
        }

        /** Keeps {@code state}'s locals and the temporaries {@code temps} in the frame, and returns k + 1. */
        private void spillAndReturn(CodeBuilder b, State state, VType[] temps, int k) {
            VType[] locals = state.locals();
            for (int s = 0; s < locals.length; s++) {
                spillLocal(b, locals[s], s);
            }
            for (int s = 0; s < temps.length; s++) {
                spillLocal(b, temps[s], tempBase + s);
            }
            b.loadConstant(k + 1).ireturn();
        }

        /**
         * Behind a deferring call (point {@code k}): its deferred decision, which may hand the turn on without a
         * stack, the operand stack (the call's result) kept as at a point before a call.
         */
        private void deferredPoint(CodeBuilder b, int k) {
            Label go = b.newLabel();
            b.ldc(DEFERRED_POINT).aload(CONTEXT)
                .invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", DEFERRED_TYPE).ifne(go);
            keepAndReturn(b, syncs.get(order.get(k)), k);
            b.labelBinding(go);
        }

        /**
         * A scheduling point's decision before its call (element {@code i}, point {@code k}): the operand stack
         * goes into temporaries, then with the locals into the frame, and the step returns k + 1 when the thread
         * hands the turn on; it resumes behind the decision with the stack pushed back.
         */
        private void schedulingPoint(CodeBuilder b, int i, int k, String what,
                                     DynamicConstantDesc<MethodHandle> helper) {
            Label call = b.newLabel();
            b.ldc(helper).aload(CONTEXT).ldc(what)
                .invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", POINT_TYPE).ifne(call);
            keepAndReturn(b, syncs.get(i), k);
            b.labelBinding(call);
        }

        /**
         * Keeps the operand stack (in temporaries) and the locals of {@code state} in the frame and returns k + 1;
         * then, where the thread resumes (resume[k]), pushes the stack back.
         */
        private void keepAndReturn(CodeBuilder b, State state, int k) {
            VType[] temps = stackAsLocals(state.stack());
            List<VType> stack = state.stack();
            int slot = temps.length;
            for (int j = stack.size() - 1; j >= 0; j--) {
                VType v = stack.get(j);
                slot -= v.wide() ? 2 : 1;
                storeTemp(b, v, SHIFT + tempBase + slot);
            }
            spillAndReturn(b, state, temps, k);
            b.labelBinding(resume[k]);
            unwindHere(b);
            slot = 0;
            for (VType v : stack) {
                loadTemp(b, v, SHIFT + tempBase + slot);
                slot += v.wide() ? 2 : 1;
            }
        }

        private static void storeTemp(CodeBuilder b, VType v, int local) {
            switch (v.kind()) {
                case INT -> b.istore(local);
                case FLOAT -> b.fstore(local);
                case LONG -> b.lstore(local);
                case DOUBLE -> b.dstore(local);
                default -> b.astore(local);     // a reference or null
            }
        }

        private static void loadTemp(CodeBuilder b, VType v, int local) {
            switch (v.kind()) {
                case INT -> b.iload(local);
                case FLOAT -> b.fload(local);
                case LONG -> b.lload(local);
                case DOUBLE -> b.dload(local);
                case NULL -> b.aconst_null();
                default -> b.aload(local);
            }
        }

        /** Behind a scheduling point's call: its decision is spent, whether the call used it or not. */
        private static void pointPassed(CodeBuilder b) {
            b.ldc(POINT_PASSED).aload(CONTEXT)
                .invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", POINT_PASSED_TYPE);
        }

        /** At a resumption point: a thread resumed by unwinding (state past UNWIND) throws KernelAbortedException. */
        private void unwindHere(CodeBuilder b) {
            Label go = b.newLabel();
            b.iload(unwinding).ifeq(go);
            b.ldc(ABORTED_AT_SYNC).aload(CONTEXT)
                .invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", ABORTED_AT_SYNC_TYPE).athrow();
            b.labelBinding(go);
        }

        private static void unbox(CodeBuilder b, ClassDesc parameter) {
            if (!parameter.isPrimitive()) {
                b.checkcast(parameter);
                return;
            }
            ClassDesc box = switch (TypeKind.from(parameter)) {
                case BOOLEAN -> ConstantDescs.CD_Boolean;
                case BYTE -> ConstantDescs.CD_Byte;
                case CHAR -> ConstantDescs.CD_Character;
                case SHORT -> ConstantDescs.CD_Short;
                case INT -> ConstantDescs.CD_Integer;
                case LONG -> ConstantDescs.CD_Long;
                case FLOAT -> ConstantDescs.CD_Float;
                case DOUBLE -> ConstantDescs.CD_Double;
                default -> throw new IllegalArgumentException(parameter.displayName());
            };
            b.checkcast(box).invokevirtual(box, parameter.displayName() + "Value", MethodTypeDesc.of(parameter));
        }

        /** prims[base + slot] or refs[base + slot]: leaves the array and index on the stack. */
        private static void frameCell(CodeBuilder b, int array, int slot) {
            b.aload(array).iload(BASE);
            if (slot != 0) {
                b.loadConstant(slot).iadd();
            }
        }

        private static void spillLocal(CodeBuilder b, VType type, int slot) {
            int local = SHIFT + slot;
            switch (type.kind()) {
                case INT -> {
                    frameCell(b, PRIMS, slot);
                    b.iload(local).i2l().lastore();
                }
                case FLOAT -> {
                    frameCell(b, PRIMS, slot);
                    b.fload(local).invokestatic(ConstantDescs.CD_Float, "floatToRawIntBits",
                        MethodTypeDesc.of(ConstantDescs.CD_int, ConstantDescs.CD_float)).i2l().lastore();
                }
                case LONG -> {
                    frameCell(b, PRIMS, slot);
                    b.lload(local).lastore();
                }
                case DOUBLE -> {
                    frameCell(b, PRIMS, slot);
                    b.dload(local).invokestatic(ConstantDescs.CD_Double, "doubleToRawLongBits",
                        MethodTypeDesc.of(ConstantDescs.CD_long, ConstantDescs.CD_double)).lastore();
                }
                case REFERENCE -> {
                    frameCell(b, REFS, slot);
                    b.aload(local).aastore();
                }
                default -> { }                  // top: dead; null: restored as null
            }
        }

        private static void restoreLocal(CodeBuilder b, VType type, int slot) {
            int local = SHIFT + slot;
            switch (type.kind()) {
                case INT -> {
                    frameCell(b, PRIMS, slot);
                    b.laload().l2i().istore(local);
                }
                case FLOAT -> {
                    frameCell(b, PRIMS, slot);
                    b.laload().l2i().invokestatic(ConstantDescs.CD_Float, "intBitsToFloat",
                        MethodTypeDesc.of(ConstantDescs.CD_float, ConstantDescs.CD_int)).fstore(local);
                }
                case LONG -> {
                    frameCell(b, PRIMS, slot);
                    b.laload().lstore(local);
                }
                case DOUBLE -> {
                    frameCell(b, PRIMS, slot);
                    b.laload().invokestatic(ConstantDescs.CD_Double, "longBitsToDouble",
                        MethodTypeDesc.of(ConstantDescs.CD_double, ConstantDescs.CD_long)).dstore(local);
                }
                case REFERENCE -> {
                    frameCell(b, REFS, slot);
                    b.aaload().checkcast(type.type()).astore(local);
                }
                case NULL -> b.aconst_null().astore(local);
                default -> { }
            }
        }
    }

    // The loops' locals: region's parameters (as STEP's, then states, width and size), then its own.
    private static final int L_CAPTURED = 0;
    private static final int L_CTX = 1;
    private static final int L_PRIMS = 2;
    private static final int L_REFS = 3;
    private static final int L_STATES = 4;
    private static final int L_WIDTH = 5;
    private static final int L_SIZE = 6;
    private static final int L_RANK = 7;
    private static final int L_STATE = 8;
    private static final int L_YIELDED = 9;
    private static final int L_RESULT = 10;

    /**
     * Initializes a static M's class before its first thread runs, once per hidden class: on strands the first
     * thread's call of M does (and thread 0 of the block gets the ExceptionInInitializerError of a failing
     * initializer), so thread 0 is bound while it runs.
     */
    private static void initializeHost(CodeBuilder b, ClassDesc self) {
        Label ready = b.newLabel();
        b.getstatic(self, HOST_READY, ConstantDescs.CD_boolean).ifne(ready);
        b.ldc(BIND).aload(1).iconst_0().invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", BIND_TYPE);
        b.ldc(INITIALIZE_HOST).invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact",
            MethodTypeDesc.of(ConstantDescs.CD_void));
        b.iconst_1().putstatic(self, HOST_READY, ConstantDescs.CD_boolean);
        b.labelBinding(ready);
    }

    /**
     * The loop of a kernel with no sync and no loop head: every thread runs once, to its end, so no state is read
     * or kept; it returns 0 (no thread yielded; the caller finds every state 0, none arrived at a sync).
     */
    private static void plainRegion(CodeBuilder b, ClassDesc self) {
        Label loop = b.newLabel();
        Label end = b.newLabel();
        b.iconst_0().istore(L_RANK);
        b.labelBinding(loop);
        loopHead(b, end);
        bind(b);
        b.aload(L_CAPTURED).aload(L_CTX).aload(L_PRIMS).aload(L_REFS).iconst_0().iconst_0()
            .invokestatic(self, "step", STEP_TYPE).pop();
        b.iinc(L_RANK, 1).goto_(loop);
        b.labelBinding(end);
        b.iconst_0().ireturn();
    }

    /** The loop over the block's threads (see the class comment). */
    private static void region(CodeBuilder b, ClassDesc self, int syncCount) {
        Label loop = b.newLabel();
        Label notYielded = b.newLabel();
        Label arrived = b.newLabel();
        Label next = b.newLabel();
        Label end = b.newLabel();
        b.iconst_0().istore(L_YIELDED).iconst_0().istore(L_RANK);
        b.labelBinding(loop);
        loopHead(b, end);
        b.aload(L_STATES).iload(L_RANK).iaload().istore(L_STATE);
        b.iload(L_STATE).iflt(next);                                // returned, or arrived at a sync
        bind(b);
        b.aload(L_CAPTURED).aload(L_CTX).aload(L_PRIMS).aload(L_REFS).iload(L_RANK).iload(L_WIDTH).imul()
            .iload(L_STATE).invokestatic(self, "step", STEP_TYPE).istore(L_RESULT);
        b.iload(L_RESULT).loadConstant(syncCount).if_icmple(notYielded);
        b.aload(L_STATES).iload(L_RANK).iload(L_RESULT).iastore();   // yielded at a loop head: runnable
        b.iinc(L_YIELDED, 1).goto_(next);
        b.labelBinding(notYielded);
        b.iload(L_RESULT).ifge(arrived);
        b.aload(L_STATES).iload(L_RANK).loadConstant(RETURNED).iastore();
        b.goto_(next);
        b.labelBinding(arrived);
        b.aload(L_STATES).iload(L_RANK).iload(L_RESULT).ineg().iconst_1().isub().iastore();  // sync k: -(k + 1)
        b.labelBinding(next);
        b.iinc(L_RANK, 1).goto_(loop);
        b.labelBinding(end);
        b.iload(L_YIELDED).ireturn();
    }

    /** A loop's head: to {@code end} once every rank is done; at each warp's first rank, returns ABORTED if so. */
    private static void loopHead(CodeBuilder b, Label end) {
        Label running = b.newLabel();
        b.iload(L_RANK).iload(L_SIZE).if_icmpge(end);
        b.iload(L_RANK).bipush(Kernel.WARP_SIZE - 1).iand().ifne(running);
        b.ldc(ABORTED_CHECK).aload(L_CTX)
            .invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", ABORTED_TYPE)
            .ifeq(running);
        b.loadConstant(ABORTED).ireturn();
        b.labelBinding(running);
    }

    /** Points the context at the loop's rank (KernelContext.bindPlainRank, a class-data constant). */
    private static void bind(CodeBuilder b) {
        b.ldc(BIND).aload(L_CTX).iload(L_RANK)
            .invokevirtual(ConstantDescs.CD_MethodHandle, "invokeExact", BIND_TYPE);
    }
}
