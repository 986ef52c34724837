package dev.jpipeline.simt;

import java.lang.classfile.Attributes;
import java.lang.classfile.CodeElement;
import java.lang.classfile.Instruction;
import java.lang.classfile.Label;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeKind;
import java.lang.classfile.attribute.CodeAttribute;
import java.lang.classfile.attribute.StackMapFrameInfo;
import java.lang.classfile.attribute.StackMapFrameInfo.ObjectVerificationTypeInfo;
import java.lang.classfile.attribute.StackMapFrameInfo.SimpleVerificationTypeInfo;
import java.lang.classfile.attribute.StackMapFrameInfo.UninitializedVerificationTypeInfo;
import java.lang.classfile.attribute.StackMapFrameInfo.VerificationTypeInfo;
import java.lang.classfile.constantpool.ClassEntry;
import java.lang.classfile.constantpool.ConstantDynamicEntry;
import java.lang.classfile.constantpool.MethodHandleEntry;
import java.lang.classfile.constantpool.MethodTypeEntry;
import java.lang.classfile.constantpool.StringEntry;
import java.lang.classfile.instruction.ArrayLoadInstruction;
import java.lang.classfile.instruction.ArrayStoreInstruction;
import java.lang.classfile.instruction.BranchInstruction;
import java.lang.classfile.instruction.ConstantInstruction;
import java.lang.classfile.instruction.ConvertInstruction;
import java.lang.classfile.instruction.FieldInstruction;
import java.lang.classfile.instruction.IncrementInstruction;
import java.lang.classfile.instruction.InvokeDynamicInstruction;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.classfile.instruction.LoadInstruction;
import java.lang.classfile.instruction.LookupSwitchInstruction;
import java.lang.classfile.instruction.MonitorInstruction;
import java.lang.classfile.instruction.NewMultiArrayInstruction;
import java.lang.classfile.instruction.NewObjectInstruction;
import java.lang.classfile.instruction.NewPrimitiveArrayInstruction;
import java.lang.classfile.instruction.NewReferenceArrayInstruction;
import java.lang.classfile.instruction.NopInstruction;
import java.lang.classfile.instruction.OperatorInstruction;
import java.lang.classfile.instruction.ReturnInstruction;
import java.lang.classfile.instruction.StackInstruction;
import java.lang.classfile.instruction.StoreInstruction;
import java.lang.classfile.instruction.TableSwitchInstruction;
import java.lang.classfile.instruction.ThrowInstruction;
import java.lang.classfile.instruction.TypeCheckInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.MethodTypeDesc;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * The verifier's types of a method's locals and operand stack just before chosen instructions (the kernel's
 * resumption points), which the region compiler needs to spill and restore what lives across them.
 *
 * <pre>
 * Algorithm: the type-checking verifier's single pass (JVMS 4.10.1). Every branch target and exception handler of a
 * class file of version 50 or later carries a StackMapTable frame, so one pass in code order suffices: at a label
 * with a frame the state is the frame's; each instruction applies its effect to the state; after an unconditional
 * transfer (goto, return, athrow, a switch) the state is unknown until the next frame. Types are those the
 * verifier uses: int (boolean, byte, char and short too), float, long, double, null, a class, and uninitialized
 * (after new, before its constructor). Long and double take two local slots, the second top, and one stack entry.
 * A reference's class is the most precise the code states (an invoke's return type, a field's type, a checkcast, a
 * frame's declaration), which is what the verifier checks the method's later uses against.
 * </pre>
 */
final class FrameAnalysis {

    /** A verification type: kind, and the class of a reference or the bci of an uninitialized object's new. */
    record VType(Kind kind, ClassDesc type, int newAt) {
        static final VType TOP = new VType(Kind.TOP, null, -1);
        static final VType INT = new VType(Kind.INT, null, -1);
        static final VType FLOAT = new VType(Kind.FLOAT, null, -1);
        static final VType LONG = new VType(Kind.LONG, null, -1);
        static final VType DOUBLE = new VType(Kind.DOUBLE, null, -1);
        static final VType NULL = new VType(Kind.NULL, null, -1);
        static final VType UNINITIALIZED_THIS = new VType(Kind.UNINITIALIZED, null, -1);
        static final VType OBJECT = reference(ConstantDescs.CD_Object);

        static VType reference(ClassDesc type) {
            return new VType(Kind.REFERENCE, type, -1);
        }

        static VType of(TypeKind kind) {
            return switch (kind) {
                case BOOLEAN, BYTE, CHAR, SHORT, INT -> INT;
                case FLOAT -> FLOAT;
                case LONG -> LONG;
                case DOUBLE -> DOUBLE;
                case REFERENCE -> OBJECT;
                case VOID -> throw new IllegalArgumentException("void has no verification type");
            };
        }

        static VType of(ClassDesc type) {
            return type.isPrimitive() ? of(TypeKind.from(type)) : reference(type);
        }

        boolean wide() {
            return kind == Kind.LONG || kind == Kind.DOUBLE;
        }
    }

    /** The kinds of verification types. */
    enum Kind { TOP, INT, FLOAT, LONG, DOUBLE, NULL, REFERENCE, UNINITIALIZED }

    /** The state just before a chosen instruction: locals by slot, and the stack from bottom to top. */
    record State(VType[] locals, List<VType> stack) {
    }

    private final CodeAttribute code;
    private final Map<Integer, StackMapFrameInfo> frames = new HashMap<>();
    private VType[] locals;
    private ArrayList<VType> stack = new ArrayList<>();
    private boolean reachable = true;
    private int bci;

    private FrameAnalysis(CodeAttribute code) {
        this.code = code;
        code.findAttribute(Attributes.stackMapTable()).ifPresent(table -> {
            for (StackMapFrameInfo frame : table.entries()) {
                frames.put(code.labelToBci(frame.target()), frame);
            }
        });
    }

    /**
     * Analyses {@code code} and returns the state before each instruction that {@code chosen} accepts (given its
     * index in {@code code.elementList()} and itself), by that index (absent where the instruction is unreachable).
     *
     * @param owner      the method's class
     * @param isStatic   whether the method is static
     * @param descriptor the method's type
     * @throws IllegalArgumentException where the code is not what the verifier accepts (or uses jsr/ret)
     */
    static Map<Integer, State> analyse(CodeAttribute code, ClassDesc owner, boolean isStatic,
                                       MethodTypeDesc descriptor,
                                       BiPredicate<Integer, CodeElement> chosen) {
        FrameAnalysis analysis = new FrameAnalysis(code);
        analysis.locals = new VType[code.maxLocals()];
        Arrays.fill(analysis.locals, VType.TOP);
        int slot = 0;
        if (!isStatic) {
            analysis.locals[slot++] = VType.reference(owner);
        }
        for (ClassDesc parameter : descriptor.parameterList()) {
            VType type = VType.of(parameter);
            analysis.locals[slot] = type;
            slot += type.wide() ? 2 : 1;
        }
        Map<Integer, State> found = new HashMap<>();
        List<CodeElement> elements = code.elementList();
        for (int i = 0; i < elements.size(); i++) {
            CodeElement element = elements.get(i);
            if (element instanceof Label label) {
                StackMapFrameInfo frame = analysis.frames.get(code.labelToBci(label));
                if (frame != null) {
                    analysis.enter(frame);
                }
                continue;
            }
            if (!(element instanceof Instruction instruction)) {
                continue;
            }
            if (analysis.reachable) {
                if (chosen.test(i, element)) {
                    found.put(i, new State(analysis.locals.clone(), List.copyOf(analysis.stack)));
                }
                analysis.apply(instruction);
            }
            analysis.bci += instruction.sizeInBytes();
        }
        return found;
    }

    private void enter(StackMapFrameInfo frame) {
        Arrays.fill(locals, VType.TOP);
        int slot = 0;
        for (VerificationTypeInfo info : frame.locals()) {
            VType type = type(info);
            locals[slot] = type;
            slot += type.wide() ? 2 : 1;
        }
        stack = new ArrayList<>();
        for (VerificationTypeInfo info : frame.stack()) {
            stack.add(type(info));
        }
        reachable = true;
    }

    private VType type(VerificationTypeInfo info) {
        return switch (info) {
            case SimpleVerificationTypeInfo simple -> switch (simple) {
                case TOP -> VType.TOP;
                case INTEGER -> VType.INT;
                case FLOAT -> VType.FLOAT;
                case LONG -> VType.LONG;
                case DOUBLE -> VType.DOUBLE;
                case NULL -> VType.NULL;
                case UNINITIALIZED_THIS -> VType.UNINITIALIZED_THIS;
            };
            case ObjectVerificationTypeInfo object -> VType.reference(object.classSymbol());
            case UninitializedVerificationTypeInfo uninitialized ->
                new VType(Kind.UNINITIALIZED, null, code.labelToBci(uninitialized.newTarget()));
        };
    }

    private VType pop() {
        if (stack.isEmpty()) {
            throw new IllegalArgumentException("operand stack underflow at bci " + bci);
        }
        return stack.removeLast();
    }

    private void pop(int n) {
        for (int i = 0; i < n; i++) {
            pop();
        }
    }

    private void push(VType... types) {
        stack.addAll(Arrays.asList(types));
    }

    private void apply(Instruction instruction) {
        switch (instruction) {
            case LoadInstruction load -> push(load.typeKind() == TypeKind.REFERENCE ? locals[load.slot()]
                : VType.of(load.typeKind()));
            case StoreInstruction store -> store(store.slot(), pop());
            case IncrementInstruction ignored -> { }
            case ConstantInstruction constant -> push(constant(constant));
            case ArrayLoadInstruction load -> {
                pop();
                VType array = pop();
                push(load.typeKind() != TypeKind.REFERENCE ? VType.of(load.typeKind())
                    : array.kind() == Kind.REFERENCE && array.type().isArray()
                        ? VType.of(array.type().componentType()) : VType.OBJECT);
            }
            case ArrayStoreInstruction ignored -> pop(3);
            case OperatorInstruction operator -> operator(operator);
            case ConvertInstruction convert -> {
                pop();
                push(VType.of(convert.toType()));
            }
            case StackInstruction operation -> stackOperation(operation.opcode());
            case FieldInstruction field -> {
                switch (field.opcode()) {
                    case GETSTATIC -> push(VType.of(field.typeSymbol()));
                    case PUTSTATIC -> pop();
                    case GETFIELD -> {
                        pop();
                        push(VType.of(field.typeSymbol()));
                    }
                    default -> pop(2);
                }
            }
            case InvokeInstruction invoke -> invoke(invoke);
            case InvokeDynamicInstruction indy -> {
                pop(indy.typeSymbol().parameterCount());
                pushResult(indy.typeSymbol().returnType());
            }
            case NewObjectInstruction ignored -> push(new VType(Kind.UNINITIALIZED, null, bci));
            case NewPrimitiveArrayInstruction array -> {
                pop();
                push(VType.reference(array.typeKind().upperBound().arrayType()));
            }
            case NewReferenceArrayInstruction array -> {
                pop();
                push(VType.reference(array.componentType().asSymbol().arrayType()));
            }
            case NewMultiArrayInstruction array -> {
                pop(array.dimensions());
                push(VType.reference(array.arrayType().asSymbol()));
            }
            case TypeCheckInstruction check -> {
                pop();
                push(check.opcode() == Opcode.CHECKCAST ? VType.reference(check.type().asSymbol()) : VType.INT);
            }
            case BranchInstruction branch -> {
                switch (branch.opcode()) {
                    case GOTO, GOTO_W -> reachable = false;
                    case IFEQ, IFNE, IFLT, IFGE, IFGT, IFLE, IFNULL, IFNONNULL -> pop();
                    default -> pop(2);
                }
            }
            case LookupSwitchInstruction ignored -> reachable = false;
            case TableSwitchInstruction ignored -> reachable = false;
            case ReturnInstruction ignored -> reachable = false;
            case ThrowInstruction ignored -> reachable = false;
            case MonitorInstruction ignored -> pop();
            case NopInstruction ignored -> { }
            default -> throw new IllegalArgumentException("the instruction " + instruction.opcode()
                + " at bci " + bci + " is not supported (jsr and ret are not)");
        }
    }

    private void store(int slot, VType value) {
        locals[slot] = value;
        if (value.wide()) {
            locals[slot + 1] = VType.TOP;
        }
        if (slot > 0 && locals[slot - 1].wide()) {
            locals[slot - 1] = VType.TOP;       // the first half of a long or double is overwritten
        }
    }

    private static VType constant(ConstantInstruction constant) {
        if (constant.opcode() == Opcode.ACONST_NULL) {
            return VType.NULL;
        }
        if (constant.typeKind() != TypeKind.REFERENCE) {
            return VType.of(constant.typeKind());
        }
        if (constant instanceof ConstantInstruction.LoadConstantInstruction load) {
            return switch (load.constantEntry()) {
                case StringEntry ignored -> VType.reference(ConstantDescs.CD_String);
                case ClassEntry ignored -> VType.reference(ConstantDescs.CD_Class);
                case MethodTypeEntry ignored -> VType.reference(ConstantDescs.CD_MethodType);
                case MethodHandleEntry ignored -> VType.reference(ConstantDescs.CD_MethodHandle);
                case ConstantDynamicEntry dynamic -> VType.of(dynamic.typeSymbol());
                default -> VType.OBJECT;
            };
        }
        return VType.OBJECT;
    }

    private void operator(OperatorInstruction operator) {
        switch (operator.opcode()) {
            case INEG, LNEG, FNEG, DNEG -> {
                pop();
                push(VType.of(operator.typeKind()));
            }
            case ARRAYLENGTH -> {
                pop();
                push(VType.INT);
            }
            case LCMP, FCMPL, FCMPG, DCMPL, DCMPG -> {
                pop(2);
                push(VType.INT);
            }
            default -> {
                pop(2);
                push(VType.of(operator.typeKind()));
            }
        }
    }

    private void invoke(InvokeInstruction invoke) {
        MethodTypeDesc type = invoke.typeSymbol();
        pop(type.parameterCount());
        if (invoke.opcode() != Opcode.INVOKESTATIC) {
            VType receiver = pop();
            if (invoke.name().equalsString("<init>") && receiver.kind() == Kind.UNINITIALIZED) {
                VType made = VType.reference(invoke.owner().asSymbol());
                for (int s = 0; s < locals.length; s++) {
                    if (locals[s].equals(receiver)) {
                        locals[s] = made;
                    }
                }
                stack.replaceAll(v -> v.equals(receiver) ? made : v);
            }
        }
        pushResult(type.returnType());
    }

    private void pushResult(ClassDesc type) {
        if (!type.equals(ConstantDescs.CD_void)) {
            push(VType.of(type));
        }
    }

    /** The stack operations, which move words: a long or double is one entry of two words. */
    private void stackOperation(Opcode opcode) {
        switch (opcode) {
            case POP -> pop();
            case POP2 -> pop(top().wide() ? 1 : 2);
            case DUP -> push(top());
            case DUP_X1 -> {
                VType v1 = pop();
                VType v2 = pop();
                push(v1, v2, v1);
            }
            case DUP_X2 -> {
                VType v1 = pop();
                VType v2 = pop();
                if (v2.wide()) {
                    push(v1, v2, v1);
                } else {
                    VType v3 = pop();
                    push(v1, v3, v2, v1);
                }
            }
            case DUP2 -> {
                if (top().wide()) {
                    push(top());
                } else {
                    VType v1 = pop();
                    VType v2 = pop();
                    push(v2, v1, v2, v1);
                }
            }
            case DUP2_X1 -> {
                VType v1 = pop();
                if (v1.wide()) {
                    VType v2 = pop();
                    push(v1, v2, v1);
                } else {
                    VType v2 = pop();
                    VType v3 = pop();
                    push(v2, v1, v3, v2, v1);
                }
            }
            case DUP2_X2 -> {
                VType v1 = pop();
                if (v1.wide()) {
                    VType v2 = pop();
                    if (v2.wide()) {
                        push(v1, v2, v1);
                    } else {
                        VType v3 = pop();
                        push(v1, v3, v2, v1);
                    }
                } else {
                    VType v2 = pop();
                    VType v3 = pop();
                    if (v3.wide()) {
                        push(v2, v1, v3, v2, v1);
                    } else {
                        VType v4 = pop();
                        push(v2, v1, v4, v3, v2, v1);
                    }
                }
            }
            case SWAP -> {
                VType v1 = pop();
                VType v2 = pop();
                push(v1, v2);
            }
            default -> throw new IllegalArgumentException("unknown stack operation " + opcode + " at bci " + bci);
        }
    }

    private VType top() {
        if (stack.isEmpty()) {
            throw new IllegalArgumentException("operand stack underflow at bci " + bci);
        }
        return stack.getLast();
    }
}
