package dev.jpipeline.simt;

import dev.jpipeline.simt.FrameAnalysis.State;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.Label;
import java.lang.classfile.MethodModel;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeKind;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.attribute.SourceFileAttribute;
import java.lang.classfile.instruction.BranchInstruction;
import java.lang.classfile.instruction.CharacterRange;
import java.lang.classfile.instruction.ExceptionCatch;
import java.lang.classfile.instruction.IncrementInstruction;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.classfile.instruction.LineNumber;
import java.lang.classfile.instruction.LoadInstruction;
import java.lang.classfile.instruction.LocalVariable;
import java.lang.classfile.instruction.LocalVariableType;
import java.lang.classfile.instruction.LookupSwitchInstruction;
import java.lang.classfile.instruction.ReturnInstruction;
import java.lang.classfile.instruction.StoreInstruction;
import java.lang.classfile.instruction.SwitchCase;
import java.lang.classfile.instruction.TableSwitchInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.MethodTypeDesc;
import java.lang.reflect.AccessFlag;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Inlines into a kernel's method the helpers of its class that sync (CUDA's {@code __device__} functions that call
 * {@code __syncthreads}), so that every sync is in one method, which RegionCompiler splits.
 *
 * <pre>
 * A call is inlined when its target is a method of the kernel's class that binds statically (static, private, final,
 * of a final class) and syncs, itself or through such helpers, at most MAX_DEPTH calls deep; the operand stack at the
 * call must hold only its arguments (a call that is a statement, or whose result is stored or returned: javac's
 * usual code), since a sync needs nothing else on the stack. The helper's code is copied in place: its arguments are
 * stored into fresh locals past the caller's (its receiver too), its locals moved there, its labels renamed, each
 * return a jump past the copy with the result left on the stack. Its exception handlers are listed before the
 * caller's, so that the innermost handler catches first, as across a real call. Its line numbers are kept: a frame
 * KernelFrames adds names the kernel's method with the helper's line.
 * The result is the kernel's method in a class of the same name that is never loaded: its code, for RegionCompiler.
 * </pre>
 */
final class SyncInliner {

    /** How deep helpers that sync may call each other. */
    static final int MAX_DEPTH = 4;

    /** The kernel's class file with its method inlined. */
    record Inlined(ClassModel model, MethodModel method) {
    }

    private final Class<?> host;
    private final ClassModel model;
    private final Map<String, MethodModel> methods = new HashMap<>();
    private final Map<String, Boolean> syncs = new HashMap<>();
    /** The next free local of the method being built. */
    private int nextLocal;

    private SyncInliner(Class<?> host, ClassModel model) {
        this.host = host;
        this.model = model;
        for (MethodModel m : model.methods()) {
            methods.put(m.methodName().stringValue() + m.methodType().stringValue(), m);
        }
    }

    /**
     * @throws RegionCompiler.Refusal where a call cannot be inlined (the stack holds more than its arguments, a
     *                                recursion, too deep)
     */
    static Inlined inline(Class<?> host, ClassModel model, MethodModel method) throws RegionCompiler.Refusal {
        SyncInliner inliner = new SyncInliner(host, model);
        CodeAttribute code = (CodeAttribute) method.code()
            .orElseThrow(() -> new RegionCompiler.Refusal(host.getName() + "." + method.methodName() + " has no code"));
        inliner.nextLocal = code.maxLocals();
        String sourceFile = model.findAttribute(java.lang.classfile.Attributes.sourceFile())
            .map(a -> a.sourceFile().stringValue()).orElse(null);
        byte[] bytes;
        try {
            bytes = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(RegionCompiler.resolver(host)))
                .build(model.thisClass().asSymbol(), cb -> {
                    cb.withVersion(model.majorVersion(), model.minorVersion());
                    model.superclass().ifPresent(cb::withSuperclass);
                    cb.withInterfaces(model.interfaces());
                    cb.withFlags(model.flags().flagsMask());
                    if (sourceFile != null) {
                        cb.with(SourceFileAttribute.of(sourceFile));
                    }
                    cb.withMethod(method.methodName(), method.methodType(), method.flags().flagsMask(), mb ->
                        mb.withCode(b -> inliner.copy(b, method, code, 0, null, 0)));
                });
        } catch (Unfit e) {
            throw new RegionCompiler.Refusal(e.getMessage());
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new RegionCompiler.Refusal("its helpers that sync could not be inlined: " + e);
        }
        ClassModel inlined = ClassFile.of().parse(bytes);
        MethodModel result = inlined.methods().stream()
            .filter(m -> m.methodName().equals(method.methodName()) && m.methodType().equals(method.methodType()))
            .findFirst().orElseThrow();
        return new Inlined(inlined, result);
    }

    /** Thrown from inside the class builder (whose lambdas cannot throw checked exceptions). */
    private static final class Unfit extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unfit(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Copies {@code code} of {@code method} into {@code b}, its locals moved up by {@code base}; with {@code end} not
     * null (an inlined helper), each return becomes a jump to {@code end}.
     */
    private void copy(CodeBuilder b, MethodModel method, CodeAttribute code, int base, Label end, int depth) {
        Map<Label, Label> labels = new HashMap<>();
        List<ExceptionCatch> catches = new ArrayList<>();
        List<CodeElement> elements = code.elementList();
        Map<Integer, State> calls = FrameAnalysis.analyse(code, model.thisClass().asSymbol(),
            method.flags().has(AccessFlag.STATIC), method.methodTypeSymbol(), (i, e) -> inlinable(e, depth) != null);
        for (int i = 0; i < elements.size(); i++) {
            CodeElement element = elements.get(i);
            switch (element) {
                case Label label -> b.labelBinding(rename(labels, b, label));
                case LoadInstruction load -> b.loadLocal(load.typeKind(), load.slot() + base);
                case StoreInstruction store -> b.storeLocal(store.typeKind(), store.slot() + base);
                case IncrementInstruction inc -> b.iinc(inc.slot() + base, inc.constant());
                case BranchInstruction branch -> b.branch(branch.opcode(), rename(labels, b, branch.target()));
                case TableSwitchInstruction table -> b.tableswitch(table.lowValue(), table.highValue(),
                    rename(labels, b, table.defaultTarget()), cases(labels, b, table.cases()));
                case LookupSwitchInstruction lookup -> b.lookupswitch(rename(labels, b, lookup.defaultTarget()),
                    cases(labels, b, lookup.cases()));
                case ExceptionCatch handler -> catches.add(handler);
                case LineNumber number -> b.lineNumber(number.line());
                case LocalVariable ignored -> { }
                case LocalVariableType ignored -> { }
                case CharacterRange ignored -> { }
                case ReturnInstruction ret when end != null -> b.goto_(end);
                case InvokeInstruction invoke when inlinable(invoke, depth) != null -> {
                    MethodModel helper = inlinable(invoke, depth);
                    State state = calls.get(i);
                    int arguments = invoke.typeSymbol().parameterCount() + (invoke.opcode() == Opcode.INVOKESTATIC
                        ? 0 : 1);
                    if (state == null || state.stack().size() != arguments) {
                        throw new Unfit(host.getName() + "." + method.methodName() + " calls the helper "
                            + helper.methodName() + ", which syncs, with other values on the operand stack (inside "
                            + "an expression): it cannot be inlined");
                    }
                    inlineCall(b, helper, invoke, depth);
                }
                case java.lang.classfile.Attribute<?> ignored -> { }
                default -> b.with(element);
            }
        }
        for (ExceptionCatch handler : catches) {       // after an inlined copy's: the innermost is listed first
            b.exceptionCatch(rename(labels, b, handler.tryStart()), rename(labels, b, handler.tryEnd()),
                rename(labels, b, handler.handler()), handler.catchType());
        }
    }

    private void inlineCall(CodeBuilder b, MethodModel helper, InvokeInstruction invoke, int depth) {
        CodeAttribute code = (CodeAttribute) helper.code()
            .orElseThrow(() -> new Unfit(helper.methodName() + " has no code"));
        int base = nextLocal;
        nextLocal += code.maxLocals();
        MethodTypeDesc type = invoke.typeSymbol();
        boolean isStatic = helper.flags().has(AccessFlag.STATIC);
        int[] slots = new int[type.parameterCount()];
        int slot = isStatic ? 0 : 1;
        for (int p = 0; p < slots.length; p++) {
            slots[p] = slot;
            slot += TypeKind.from(type.parameterType(p)).slotSize();
        }
        for (int p = slots.length - 1; p >= 0; p--) {   // the last argument is on top
            b.storeLocal(TypeKind.from(type.parameterType(p)), base + slots[p]);
        }
        if (!isStatic) {
            b.astore(base);
            // a call on null throws NullPointerException before the helper runs, even one that never reads this
            b.aload(base).invokevirtual(ConstantDescs.CD_Object, "getClass", MethodTypeDesc.of(ConstantDescs.CD_Class))
                .pop();
        }
        Label end = b.newLabel();
        copy(b, helper, code, base, end, depth + 1);
        b.labelBinding(end);
    }

    /** The helper {@code element} calls, when it is one to inline: of this class, bound statically, and syncing. */
    private MethodModel inlinable(CodeElement element, int depth) {
        if (!(element instanceof InvokeInstruction invoke)
            || !invoke.owner().asSymbol().equals(model.thisClass().asSymbol())
            || invoke.name().equalsString("<init>")) {     // invokeinterface: a private method of an interface
            return null;
        }
        MethodModel target = methods.get(invoke.name().stringValue() + invoke.type().stringValue());
        if (target == null || !boundStatically(invoke, target) || !syncs(target, 0)
            || target.flags().has(AccessFlag.SYNCHRONIZED)) {   // its monitor: left as a call, which blocks
            return null;
        }
        if (depth + 1 > MAX_DEPTH) {
            throw new Unfit("its helpers that sync call each other more than " + MAX_DEPTH + " deep (or recursively)");
        }
        return target;
    }

    private boolean boundStatically(InvokeInstruction invoke, MethodModel target) {
        // an interface's private instance method is called with invokeinterface (javac 11+), which the scan follows
        // as the helper it is: left uninlined, its sync ran as a call inside the compiled block
        return invoke.opcode() == Opcode.INVOKESTATIC || invoke.opcode() == Opcode.INVOKESPECIAL
            || target.flags().has(AccessFlag.PRIVATE) || target.flags().has(AccessFlag.FINAL)
            || java.lang.reflect.Modifier.isFinal(host.getModifiers());
    }

    /** Whether {@code method} syncs, itself or through helpers it would inline. */
    private boolean syncs(MethodModel method, int depth) {
        String key = method.methodName().stringValue() + method.methodType().stringValue();
        Boolean known = syncs.get(key);
        if (known != null) {
            return known;
        }
        if (depth > MAX_DEPTH) {
            return true;                        // deep or recursive: inlining it refuses (inlinable)
        }
        syncs.put(key, false);                  // a recursion in progress counts as not syncing for now
        boolean found = false;
        for (CodeElement element : method.code().map(c -> c.elementList()).orElse(List.of())) {
            if (RegionCompiler.isSync(element) || RegionCompiler.isWarpSync(element)
                || RegionCompiler.isWait(element) || RegionCompiler.isMake(element)) {    // a wait a thread on the scheduler suspends at, too
                found = true;
                break;
            }
            if (element instanceof InvokeInstruction invoke
                && invoke.owner().asSymbol().equals(model.thisClass().asSymbol())) {
                MethodModel target = methods.get(invoke.name().stringValue() + invoke.type().stringValue());
                if (target != null && !target.equals(method) && syncs(target, depth + 1)) {
                    found = true;
                    break;
                }
            }
        }
        syncs.put(key, found);
        return found;
    }

    private static Label rename(Map<Label, Label> labels, CodeBuilder b, Label label) {
        return labels.computeIfAbsent(label, l -> b.newLabel());
    }

    private static List<SwitchCase> cases(Map<Label, Label> labels, CodeBuilder b, List<SwitchCase> cases) {
        List<SwitchCase> renamed = new ArrayList<>(cases.size());
        for (SwitchCase c : cases) {
            renamed.add(SwitchCase.of(c.caseValue(), rename(labels, b, c.target())));
        }
        return renamed;
    }
}
