// The dispatch loop.
//
// Every opcode has a handler function, and each handler ends by calling the
// next instruction's handler through a table indexed by its opcode. Where the
// compiler guarantees tail calls (clang's musttail) and offers a calling
// convention without callee-saved registers (preserve_none, x86-64 and
// AArch64), those calls are jumps and the interpreter's state (pc, register
// banks, current function, step countdown, branch cache) travels in machine
// registers from handler to handler; each handler ends in its own indirect
// jump, so each has its own branch history. Elsewhere, or with
// STRATA_VM_PORTABLE_DISPATCH, a handler parks that state and returns to a
// driver loop that calls the next one: the same handlers, slower.
//
// Handlers decode their operands inline from the layout in bytecode_ops.def
// and trust everything the verifier proved: opcodes, register indices, branch
// targets, call shapes and index ranges. What the verifier cannot know (values:
// division by zero, buffer bounds, null refs, list element types) is checked
// here and fails with a status.
//
// Calls push frames on the VMStack (no C recursion). A callee's registers sit
// right after its caller's; arguments are copied into registers 0.. of their
// bank and results are copied back into the registers the call instruction
// names.

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "schemas/bytecode.h"
#include "vm/buffer.h"
#include "vm/list.h"
#include "vm/module_instance.h"

#if defined(__GNUC__) || defined(__clang__)
#define STRATA_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define STRATA_LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define STRATA_LIKELY(x) (x)
#define STRATA_UNLIKELY(x) (x)
#endif

// Argument and result lists are short (usually 1-3 entries): unrolled or
// vectorised copies only add set-up instructions to every call.
#if defined(__clang__)
#define STRATA_SHORT_LOOP _Pragma("clang loop unroll(disable) vectorize(disable)")
#else
#define STRATA_SHORT_LOOP
#endif

namespace strata::vm {
namespace {

using bytecode::kRefTag;
using bytecode::Opcode;
using bytecode::ReadLE;

inline float AsF32(uint64_t slot) {
  uint32_t bits = static_cast<uint32_t>(slot);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint64_t FromF32(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}
inline double AsF64(uint64_t slot) {
  double d;
  std::memcpy(&d, &slot, 8);
  return d;
}
inline uint64_t FromF64(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits;
}

// Float to integer with saturation; NaN becomes 0 (C++ leaves both undefined).
template <typename I, typename F>
inline I SaturatingCast(F v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// Reports a call into a native module ("hal.queue.execute") that began at
// `begin`; out of line, so that the call path only tests the tracer pointer.
[[gnu::noinline]] void TraceNativeCall(Tracer* tracer, const ModuleInstance& instance,
                                       const NativeModule::Function& fn, uint64_t begin) {
  const std::string name = StrCat(instance.module->name(), ".", fn.name);
  tracer->Record({"import", name, begin, Tracer::Now(), {}});
}

// IEEE-754 minimum/maximum: NaN if either is NaN.
template <typename F>
inline F NanMin(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<F>::quiet_NaN();
  return a < b ? a : (b < a ? b : (std::signbit(a) ? a : b));
}
template <typename F>
inline F NanMax(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<F>::quiet_NaN();
  return a > b ? a : (b > a ? b : (std::signbit(a) ? b : a));
}

inline void AssignRef(RefObject*& slot, RefObject* value) {
  RetainRef(value);
  ReleaseRef(slot);
  slot = value;
}

// Slow paths that hold objects with destructors live out of line: a handler's
// tail call may not leave the scope of such a variable.
void StoreOwned(RefObject** slot, RefObject* owned) {
  ReleaseRef(*slot);
  *slot = owned;
}

void MakeRodataView(ModuleInstance* instance, uint32_t ordinal, RefObject** slot) {
  const RodataInfo& seg = instance->bytecode->rodata()[ordinal];
  Ref<Buffer> view = Buffer::Wrap({const_cast<uint8_t*>(seg.bytes.data()), seg.bytes.size()},
                                  instance->module, /*writable=*/false);
  StoreOwned(slot, view.Detach());
}

void MakeExecutableRef(ModuleInstance* instance, uint32_t group, RefObject** slot) {
  Ref<EmbeddedExecutable> executable =
      MakeRef<EmbeddedExecutable>(Ref<BytecodeModule>::Borrow(instance->bytecode), group);
  StoreOwned(slot, executable.Detach());
}

// What a program allocates is charged against the invocation's
// max_allocation_bytes, so an untrusted module cannot exhaust memory.
Status ChargeAllocation(const char* what, uint64_t bytes, uint64_t* budget) {
  if (bytes > *budget) {
    return ResourceExhaustedError(what, ": ", bytes, " bytes requested, ", *budget,
                                  " left of the invocation's allocation budget"
                                  " (InvocationOptions::max_allocation_bytes)");
  }
  *budget -= bytes;
  return OkStatus();
}

Status AllocateBuffer(int64_t length, uint64_t* budget, RefObject** slot) {
  const char* mnemonic = STRATA_FOR_MESSAGE(bytecode::Mnemonic(bytecode::Opcode::BUFFER_ALLOC));
  if (length < 0) return InvalidArgumentError(mnemonic, ": negative length ", length);
  STRATA_RETURN_IF_ERROR(ChargeAllocation(mnemonic, static_cast<uint64_t>(length), budget));
  STRATA_ASSIGN_OR_RETURN(Ref<Buffer> buffer, Buffer::Allocate(static_cast<uint64_t>(length)));
  StoreOwned(slot, buffer.Detach());
  return OkStatus();
}

Status AllocateList(int32_t capacity, uint64_t* budget, RefObject** slot) {
  const char* mnemonic = STRATA_FOR_MESSAGE(bytecode::Mnemonic(bytecode::Opcode::LIST_ALLOC));
  if (capacity < 0) return InvalidArgumentError(mnemonic, ": negative capacity ", capacity);
  STRATA_RETURN_IF_ERROR(ChargeAllocation(mnemonic, uint64_t(capacity) * sizeof(Value), budget));
  STRATA_ASSIGN_OR_RETURN(Ref<List> list, List::Create(static_cast<uint32_t>(capacity)));
  StoreOwned(slot, list.Detach());
  return OkStatus();
}

Status ListGetScalar(const List* list, int32_t index, ValueType type, uint64_t* out) {
  Value v;
  STRATA_RETURN_IF_ERROR(list->Get(index, type, &v));
  *out = type == ValueType::kI32 ? static_cast<uint32_t>(v.i32()) : v.slot();
  return OkStatus();
}

Status ListGetRef(const List* list, int32_t index, RefObject** slot) {
  Value v;
  STRATA_RETURN_IF_ERROR(list->Get(index, ValueType::kRef, &v));
  AssignRef(*slot, v.ref().get());
  return OkStatus();
}

// The address of a register, computed into a machine register of its own.
// Left to itself the compiler folds `s[i]` into an indexed operand
// (base + i*8). x86 cores forward a store to a later load of the same address
// in about a cycle only when both use a plain base (+ displacement) operand;
// through indexed operands a value that one instruction writes and the next
// reads waits about 7 cycles, and a loop's values travel through the register
// file every iteration. Computing the address with its own lea costs one ALU
// instruction and no latency.
template <typename T>
inline T* RegisterAddress(T* bank, uint32_t index) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  T* address;
  __asm__("lea (%1,%2,8), %0" : "=r"(address) : "r"(bank), "r"(static_cast<uint64_t>(index)));
  static_assert(sizeof(T) == 8);
  return address;
#else
  return bank + index;
#endif
}

// ---------------------------------------------------------------------------
// Handler plumbing

#if !defined(STRATA_VM_PORTABLE_DISPATCH) && defined(__clang__) &&                     \
    (defined(__x86_64__) || defined(__aarch64__)) && __has_attribute(preserve_none) && \
    __has_cpp_attribute(clang::musttail)
#define STRATA_VM_TAIL_CALLS 1
// AddressSanitizer's stack instrumentation cannot realign the stack under
// preserve_none; sanitized builds keep the tail calls, in the C convention.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_HANDLER_CC
#endif
#endif
#ifndef STRATA_HANDLER_CC
#define STRATA_HANDLER_CC __attribute__((preserve_none))
#endif
#else
#define STRATA_VM_TAIL_CALLS 0
#define STRATA_HANDLER_CC
#endif

struct Interp;
struct HandlerTable;

// The state every handler receives. `fn` is the running function, `countdown`
// the steps left before the budget and deadline are checked again, and
// (hot_branch, hot_target) a one-entry cache of the last taken branch: in a
// loop the latch hits it every time, so the new pc comes from a register
// instead of a load that depends on the old pc, which keeps the bytecode load
// off the loop-carried dependency chain.
#define HANDLER_PARAMS                                                                      \
  const uint8_t *pc, uint64_t *s, RefObject **r, const FunctionInfo *fn, int64_t countdown, \
      const uint8_t *hot_branch, const uint8_t *hot_target, Interp *ix, const HandlerTable *table
#define HANDLER_ARGS pc, s, r, fn, countdown, hot_branch, hot_target, ix, table

typedef void (*Handler)(HANDLER_PARAMS) STRATA_HANDLER_CC;
struct HandlerTable {
  Handler at[bytecode::kOpcodeCount];  // the verifier admits no other opcode
};

// Everything of one invocation that handlers need only off the hot path.
struct Interp {
  VMStack* stack;
  VMStack::Frame* frames;      // frames[0] is the entry function's
  VMStack::Frame* fp;          // the running function's frame
  VMStack::Frame* frames_end;  // one past the deepest frame allowed
  // A frame fits if it starts at or below these: no bank of one function
  // holds more than kMaxRegistersPerBank registers, so one compare suffices.
  uint64_t* scalar_guard;
  RefObject** ref_guard;
  const InvocationOptions* options;
  std::vector<Value>* results;
  Status status;
  uint64_t allocation_budget;  // bytes the invocation may still allocate
  bool has_deadline;
  // Step accounting: handlers count down; RefillSteps checks the budget and
  // the deadline every kChunk branches and calls.
  static constexpr uint64_t kChunk = 1 << 16;
  uint64_t steps_left_total;
  uint64_t chunk;
  // A call's target, handed from CALL/CALL_IMPORT to DoCall.
  ModuleInstance* callee_instance;
  const FunctionInfo* callee;
#if !STRATA_VM_TAIL_CALLS
  // The parked state of the portable driver loop; `next` is null once the
  // invocation returned or failed.
  Handler next = nullptr;
  const uint8_t* pc;
  uint64_t* s;
  RefObject** r;
  const FunctionInfo* fn;
  int64_t countdown;
  const uint8_t* hot_branch;
  const uint8_t* hot_target;
#endif
};

// Not constexpr: a consteval function that reaches one of these does not
// compile, with the name saying why.
void OperandOfAnotherKindOrPastAList() {}
void InstructionWithAListHasNoFixedSize() {}

consteval size_t OperandAt(bytecode::Opcode op, size_t index, std::string_view kinds) {
  const size_t offset = bytecode::OperandOffset(op, index);
  if (offset == 0 || kinds.find(bytecode::OperandLetter(op, index)) == std::string_view::npos) {
    OperandOfAnotherKindOrPastAList();
  }
  return offset;
}

consteval size_t InstructionSize(bytecode::Opcode op) {
  const size_t size = bytecode::FixedInstructionSize(op);
  if (size == 0) InstructionWithAListHasNoFixedSize();
  return size;
}

#if STRATA_VM_TAIL_CALLS
#define TAIL(f) [[clang::musttail]] return (f)(HANDLER_ARGS)
#else
#define TAIL(f)                                                                \
  do {                                                                         \
    ix->next = (f);                                                            \
    ix->pc = pc, ix->s = s, ix->r = r, ix->fn = fn, ix->countdown = countdown; \
    ix->hot_branch = hot_branch, ix->hot_target = hot_target;                  \
    return;                                                                    \
  } while (0)
#endif
#define DISPATCH() TAIL(table->at[*pc])
// A handler is a function template whose default argument is its opcode, so
// its body reads operand k of kOp at the offset bytecode_ops.def gives and
// steps over an instruction of the size the table gives: no offset or length
// is written by hand. Reading an operand of the wrong kind, or one past a
// list, does not compile.
#define OP(name)                                           \
  template <bytecode::Opcode kOp = bytecode::Opcode::name> \
  STRATA_HANDLER_CC void Op_##name(HANDLER_PARAMS)
#define NEXT()                  \
  do {                          \
    pc += InstructionSize(kOp); \
    DISPATCH();                 \
  } while (0)
#define U16(k) ReadLE<uint16_t>(pc + OperandAt(kOp, k, "kmvVx"))
#define U32(k) ReadLE<uint32_t>(pc + OperandAt(kOp, k, "4bsoghe"))
#define U64(k) ReadLE<uint64_t>(pc + OperandAt(kOp, k, "8"))
#define S(k) (*RegisterAddress(s, ReadLE<uint16_t>(pc + OperandAt(kOp, k, "iIlLfFdD"))))
#define R(k) (*RegisterAddress(r, ReadLE<uint16_t>(pc + OperandAt(kOp, k, "rR"))))
// The first byte (the u16 count) of list operand k.
#define LIST(k) (pc + OperandAt(kOp, k, "vVx"))
// The handler's mnemonic, for messages.
#define MNEMONIC STRATA_FOR_MESSAGE(bytecode::Mnemonic(kOp))
#define TAKE_BRANCH(operand)                 \
  do {                                       \
    if (STRATA_UNLIKELY(pc != hot_branch)) { \
      hot_branch = pc;                       \
      hot_target = fn->code + U32(operand);  \
    }                                        \
    pc = hot_target;                         \
    DISPATCH();                              \
  } while (0)
// The status lives in the Interp, so no object with a destructor is in scope
// at the tail call.
#define FAIL_WITH(expr)  \
  do {                   \
    ix->status = (expr); \
    TAIL(Fail);          \
  } while (0)
#define TRY(expr) \
  if (STRATA_UNLIKELY(!(ix->status = (expr)).ok())) TAIL(Fail)
// Branches and calls count steps. The slow path is a handler of its own, so
// that the counting handlers make no calls and need no stack frame.
#define STEP() \
  if (STRATA_UNLIKELY(--countdown <= 0)) TAIL(Refill)

STRATA_HANDLER_CC void Fail(HANDLER_PARAMS);
STRATA_HANDLER_CC void DoCall(HANDLER_PARAMS);
STRATA_HANDLER_CC void Refill(HANDLER_PARAMS);
STRATA_HANDLER_CC void DoCallWithRefs(HANDLER_PARAMS);
STRATA_HANDLER_CC void CallOverflow(HANDLER_PARAMS);
STRATA_HANDLER_CC void ReturnGeneral(HANDLER_PARAMS);

// Enters ix->callee from the call instruction at pc, whose result list starts
// at `results`. A new frame's pc is written when it calls or fails.
inline void PushFrame(Interp* ix, const uint8_t* pc, const uint8_t* results, uint64_t* ns,
                      RefObject** nr) {
  VMStack::Frame* fp = ix->fp;
  fp->pc = pc;
  fp->results = results;
  ++fp;
  fp->instance = ix->callee_instance;
  fp->fn = ix->callee;
  fp->scalars = ns;
  fp->refs = nr;
  ix->fp = fp;
}

// Leaves the running frame for its caller's registers; the caller sets pc.
inline void PopFrame(Interp* ix, const FunctionInfo*& fn, uint64_t*& s, RefObject**& r) {
  const VMStack::Frame& caller = ix->fp[-1];
  ix->fp = ix->fp - 1;
  fn = caller.fn;
  s = caller.scalars;
  r = caller.refs;
}

// Returns the next countdown, or 0 with ix->status set when the step budget
// is spent or the deadline passed.
[[gnu::noinline]] int64_t RefillSteps(Interp* ix) {
  ix->steps_left_total -= ix->chunk;
  if (ix->steps_left_total == 0) {
    ix->status = ResourceExhaustedError("step budget of ", ix->options->max_steps,
                                        " branches and calls exhausted; the program may loop forever");
    return 0;
  }
  if (ix->has_deadline && std::chrono::steady_clock::now() >= ix->options->deadline) {
    ix->status = DeadlineExceededError("invocation deadline exceeded");
    return 0;
  }
  ix->chunk = std::min(Interp::kChunk, ix->steps_left_total);
  return static_cast<int64_t>(ix->chunk);
}

// Calls a function of a native module: marshals registers to Values, calls,
// and copies results back. Returns the pc after the call instruction, or null
// with ix->status set.
[[gnu::noinline]] const uint8_t* CallNativeImport(Interp* ix, const ImportTarget& target,
                                                  const uint8_t* pc, uint64_t* s, RefObject** r) {
  VMStack& stack = *ix->stack;
  constexpr bytecode::Opcode kOp = bytecode::Opcode::CALL_IMPORT;
  const NativeModule::Function& nf = target.instance->native->function(target.ordinal);
  const uint8_t* arg_list = LIST(1);
  uint16_t argc = ReadLE<uint16_t>(arg_list);
  // Between calls no element holds a ref, so the arguments are set in
  // place (Value::SetSlot says why) and only a longer list constructs.
  auto& nargs = stack.native_args;
  if (nargs.size() < argc) nargs.resize(argc);
  for (uint32_t k = 0; k < argc; ++k) {
    uint16_t reg = ReadLE<uint16_t>(arg_list + 2 + 2 * k);
    char type = nf.arg_types[k];
    // Refs are lent, not retained: the registers hold them across the call
    // (an atomic increment and decrement saved per ref argument).
    if (type == 'r') nargs[k].SetLentRef(r[reg & ~kRefTag]);
    else nargs[k].SetSlot(ValueTypeFromSignatureChar(type), s[reg]);
  }
  Tracer* const tracer = ActiveTracer(ix->options->tracer);
  const uint64_t trace_begin = STRATA_UNLIKELY(tracer != nullptr) ? Tracer::Now() : 0;
  Status status = CallNative(nf, std::span<const Value>(nargs.data(), argc), &stack.native_results);
  if (STRATA_UNLIKELY(tracer != nullptr)) TraceNativeCall(tracer, *target.instance, nf, trace_begin);
  for (uint32_t k = 0; k < argc; ++k) {
    if (nargs[k].type() == ValueType::kRef) nargs[k].ForgetLentRef();
  }
  if (!status.ok()) {
    status.Annotate("in ", target.instance->module->name(), ".", nf.name, ": ");
    ix->status = std::move(status);
    return nullptr;
  }
  const uint8_t* rl = arg_list + 2 + 2 * argc;
  uint16_t resc = ReadLE<uint16_t>(rl);
  for (uint32_t k = 0; k < resc; ++k) {
    uint16_t reg = ReadLE<uint16_t>(rl + 2 + 2 * k);
    Value& v = stack.native_results[k];
    if (reg & kRefTag) {
      // The result's reference moves into the register.
      RefObject* old = r[reg & ~kRefTag];
      r[reg & ~kRefTag] = v.TakeRef();
      ReleaseRef(old);
    } else {
      s[reg] = v.type() == ValueType::kI32 ? static_cast<uint32_t>(v.i32()) : v.slot();
    }
  }
  stack.native_results.clear();
  return rl + 2 + 2 * resc;
}

// The entry function returned: hand its results to the caller of Execute.
[[gnu::noinline]] void ReturnFromEntry(Interp* ix, const uint8_t* pc, uint64_t* s, RefObject** r,
                                       const FunctionInfo* fn) {
  constexpr bytecode::Opcode kOp = bytecode::Opcode::RETURN;
  const uint8_t* list = LIST(0);
  uint16_t count = ReadLE<uint16_t>(list);
  ix->results->clear();
  for (uint32_t k = 0; k < count; ++k) {
    uint16_t reg = ReadLE<uint16_t>(list + 2 + 2 * k);
    char type = fn->result_types[k];
    ix->results->push_back(type == 'r' ? Value::FromRef(Ref<RefObject>::Borrow(r[reg & ~kRefTag]))
                                       : Value::FromSlot(ValueTypeFromSignatureChar(type), s[reg]));
  }
  for (uint32_t k = 0; k < fn->ref_register_count; ++k) ReleaseRef(r[k]);
}

// ---------------------------------------------------------------------------
// Handlers

// ---- constants ----
OP(CONST_I32) { S(0) = U32(1); NEXT(); }
OP(CONST_I64) { S(0) = U64(1); NEXT(); }
OP(CONST_F32) { S(0) = U32(1); NEXT(); }
OP(CONST_F64) { S(0) = U64(1); NEXT(); }
OP(CONST_REF_ZERO) { AssignRef(R(0), nullptr); NEXT(); }
OP(CONST_REF_RODATA) {
  MakeRodataView(ix->fp->instance, U32(1), &R(0));
  NEXT();
}
OP(CONST_REF_EXECUTABLE) {
  MakeExecutableRef(ix->fp->instance, U32(1), &R(0));
  NEXT();
}

// ---- integer arithmetic ----
#define BIN_I32(name, expr)                 \
OP(name) {                                  \
  uint32_t a = static_cast<uint32_t>(S(1)); \
  uint32_t b = static_cast<uint32_t>(S(2)); \
  S(0) = static_cast<uint32_t>(expr);       \
  NEXT();                                   \
}
#define BIN_I64(name, expr) \
OP(name) {                  \
  uint64_t a = S(1);        \
  uint64_t b = S(2);        \
  S(0) = (expr);            \
  NEXT();                   \
}
#define DIV_OP(name, T, U, op, is_signed)                                                         \
OP(name) {                                                                                        \
  T a = static_cast<T>(static_cast<U>(S(1)));                                                     \
  T b = static_cast<T>(static_cast<U>(S(2)));                                                     \
  if (STRATA_UNLIKELY(b == 0)) FAIL_WITH(InvalidArgumentError("division by zero in ", MNEMONIC)); \
  if (is_signed && STRATA_UNLIKELY(b == T(-1) && a == std::numeric_limits<T>::min())) {           \
    FAIL_WITH(InvalidArgumentError("signed division overflow in ", MNEMONIC, ": ", +a, " / -1")); \
  }                                                                                               \
  S(0) = static_cast<U>(a op b);                                                                  \
  NEXT();                                                                                         \
}

// One width's integer opcodes: W is 32 or 64, BIN its binary-op macro, ST/UT
// its signed and unsigned types.
#define INT_OPS(W, BIN, ST, UT)                                           \
  BIN(ADD_I##W, a + b)                                                    \
  BIN(SUB_I##W, a - b)                                                    \
  BIN(MUL_I##W, a * b)                                                    \
  DIV_OP(DIV_I##W##_S, ST, UT, /, true)                                   \
  DIV_OP(DIV_I##W##_U, UT, UT, /, false)                                  \
  DIV_OP(REM_I##W##_S, ST, UT, %, true)                                   \
  DIV_OP(REM_I##W##_U, UT, UT, %, false)                                  \
  BIN(AND_I##W, a & b)                                                    \
  BIN(OR_I##W, a | b)                                                     \
  BIN(XOR_I##W, a ^ b)                                                    \
  BIN(SHL_I##W, a << (b & (W - 1)))                                       \
  BIN(SHR_I##W##_S, static_cast<UT>(static_cast<ST>(a) >> (b & (W - 1)))) \
  BIN(SHR_I##W##_U, a >> (b & (W - 1)))                                   \
  OP(NOT_I##W) { S(0) = static_cast<UT>(~static_cast<UT>(S(1))); NEXT(); }
INT_OPS(32, BIN_I32, int32_t, uint32_t)
INT_OPS(64, BIN_I64, int64_t, uint64_t)
#undef INT_OPS

// ---- float arithmetic ----
// T is float or double; AS/FROM move it in and out of a 64-bit slot.
#define BIN_FLOAT(name, T, AS, FROM, expr) \
OP(name) {                                 \
  T a = AS(S(1));                          \
  T b = AS(S(2));                          \
  S(0) = FROM(expr);                       \
  NEXT();                                  \
}
#define UN_FLOAT(name, T, AS, FROM, expr) \
OP(name) {                                \
  T a = AS(S(1));                         \
  S(0) = FROM(expr);                      \
  NEXT();                                 \
}
// One width's float opcodes: W is 32 or 64.
#define FLOAT_OPS(W, T)                                     \
  BIN_FLOAT(ADD_F##W, T, AsF##W, FromF##W, a + b)           \
  BIN_FLOAT(SUB_F##W, T, AsF##W, FromF##W, a - b)           \
  BIN_FLOAT(MUL_F##W, T, AsF##W, FromF##W, a * b)           \
  BIN_FLOAT(DIV_F##W, T, AsF##W, FromF##W, a / b)           \
  BIN_FLOAT(REM_F##W, T, AsF##W, FromF##W, std::fmod(a, b)) \
  BIN_FLOAT(MIN_F##W, T, AsF##W, FromF##W, NanMin(a, b))    \
  BIN_FLOAT(MAX_F##W, T, AsF##W, FromF##W, NanMax(a, b))    \
  UN_FLOAT(NEG_F##W, T, AsF##W, FromF##W, -a)               \
  UN_FLOAT(ABS_F##W, T, AsF##W, FromF##W, std::fabs(a))     \
  UN_FLOAT(SQRT_F##W, T, AsF##W, FromF##W, std::sqrt(a))    \
  UN_FLOAT(FLOOR_F##W, T, AsF##W, FromF##W, std::floor(a))  \
  UN_FLOAT(CEIL_F##W, T, AsF##W, FromF##W, std::ceil(a))
FLOAT_OPS(32, float)
FLOAT_OPS(64, double)
#undef FLOAT_OPS

// ---- comparisons ----
#define CMP(name, T, read, expr) \
OP(name) {                       \
  T a = read(S(1));              \
  T b = read(S(2));              \
  S(0) = (expr) ? 1 : 0;         \
  NEXT();                        \
}
#define RD_I32(x) static_cast<int32_t>(static_cast<uint32_t>(x))
#define RD_U32(x) static_cast<uint32_t>(x)
#define RD_I64(x) static_cast<int64_t>(x)
#define RD_U64(x) static_cast<uint64_t>(x)
// One width's compares: W is 32 or 64.
#define INT_CMPS(W)                                 \
  CMP(CMP_EQ_I##W, uint##W##_t, RD_U##W, a == b)    \
  CMP(CMP_NE_I##W, uint##W##_t, RD_U##W, a != b)    \
  CMP(CMP_LT_I##W##_S, int##W##_t, RD_I##W, a < b)  \
  CMP(CMP_LE_I##W##_S, int##W##_t, RD_I##W, a <= b) \
  CMP(CMP_LT_I##W##_U, uint##W##_t, RD_U##W, a < b) \
  CMP(CMP_LE_I##W##_U, uint##W##_t, RD_U##W, a <= b)
#define FLOAT_CMPS(W, T)              \
  CMP(CMP_EQ_F##W, T, AsF##W, a == b) \
  CMP(CMP_NE_F##W, T, AsF##W, a != b) \
  CMP(CMP_LT_F##W, T, AsF##W, a < b)  \
  CMP(CMP_LE_F##W, T, AsF##W, a <= b) \
  OP(CMP_NAN_F##W) { S(0) = std::isnan(AsF##W(S(1))) ? 1 : 0; NEXT(); }
INT_CMPS(32)
INT_CMPS(64)
FLOAT_CMPS(32, float)
FLOAT_CMPS(64, double)
#undef INT_CMPS
#undef FLOAT_CMPS
OP(CMP_EQ_REF) { S(0) = R(1) == R(2) ? 1 : 0; NEXT(); }
OP(CMP_NZ_REF) { S(0) = R(1) != nullptr ? 1 : 0; NEXT(); }

// ---- casts ----
#define CAST(name, expr) \
OP(name) {               \
  uint64_t x = S(1);     \
  S(0) = (expr);         \
  NEXT();                \
}
CAST(TRUNC_I64_I32, static_cast<uint32_t>(x))
CAST(EXT_I32_I64_S, static_cast<uint64_t>(static_cast<int64_t>(RD_I32(x))))
CAST(EXT_I32_I64_U, static_cast<uint64_t>(RD_U32(x)))
CAST(TRUNC_I32_I8, static_cast<uint32_t>(static_cast<uint8_t>(x)))
CAST(TRUNC_I32_I16, static_cast<uint32_t>(static_cast<uint16_t>(x)))
CAST(EXT_I8_I32_S, static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(x))))
CAST(EXT_I16_I32_S, static_cast<uint32_t>(static_cast<int32_t>(static_cast<int16_t>(x))))
CAST(CAST_SI32_F32, FromF32(static_cast<float>(RD_I32(x))))
CAST(CAST_UI32_F32, FromF32(static_cast<float>(RD_U32(x))))
CAST(CAST_SI64_F32, FromF32(static_cast<float>(RD_I64(x))))
CAST(CAST_SI32_F64, FromF64(static_cast<double>(RD_I32(x))))
CAST(CAST_SI64_F64, FromF64(static_cast<double>(RD_I64(x))))
CAST(CAST_UI64_F64, FromF64(static_cast<double>(x)))
CAST(CAST_F32_SI32, static_cast<uint32_t>(SaturatingCast<int32_t>(AsF32(x))))
CAST(CAST_F32_UI32, SaturatingCast<uint32_t>(AsF32(x)))
CAST(CAST_F32_SI64, static_cast<uint64_t>(SaturatingCast<int64_t>(AsF32(x))))
CAST(CAST_F64_SI32, static_cast<uint32_t>(SaturatingCast<int32_t>(AsF64(x))))
CAST(CAST_F64_SI64, static_cast<uint64_t>(SaturatingCast<int64_t>(AsF64(x))))
CAST(CAST_F64_UI64, SaturatingCast<uint64_t>(AsF64(x)))
CAST(EXT_F32_F64, FromF64(static_cast<double>(AsF32(x))))
CAST(TRUNC_F64_F32, FromF32(static_cast<float>(AsF64(x))))
// Scalar slots already hold raw bits, so bitcasts only keep the width.
CAST(BITCAST_I32_F32, static_cast<uint32_t>(x))
CAST(BITCAST_F32_I32, static_cast<uint32_t>(x))
CAST(BITCAST_I64_F64, x)
CAST(BITCAST_F64_I64, x)

// ---- select ----
#define SELECT_SCALAR(name)                         \
OP(name) {                                          \
  S(0) = static_cast<uint32_t>(S(1)) ? S(2) : S(3); \
  NEXT();                                           \
}
SELECT_SCALAR(SELECT_I32)
SELECT_SCALAR(SELECT_I64)
SELECT_SCALAR(SELECT_F32)
SELECT_SCALAR(SELECT_F64)
OP(SELECT_REF) {
  AssignRef(R(0), static_cast<uint32_t>(S(1)) ? R(2) : R(3));
  NEXT();
}

// ---- control flow ----
OP(BR) {
  STEP();
  const uint8_t* remap = LIST(1);
  uint16_t count = ReadLE<uint16_t>(remap);
  for (uint32_t k = 0; k < count; ++k) {
    uint16_t src = ReadLE<uint16_t>(remap + 2 + 4 * k);
    uint16_t dst = ReadLE<uint16_t>(remap + 4 + 4 * k);
    if (src & kRefTag) {
      AssignRef(r[dst & ~kRefTag], r[src & ~kRefTag]);
    } else {
      *RegisterAddress(s, dst) = *RegisterAddress(s, src);
    }
  }
  TAKE_BRANCH(0);
}
OP(COND_BR) {
  STEP();
  pc = fn->code + (static_cast<uint32_t>(S(0)) ? U32(1) : U32(2));
  DISPATCH();
}
#define CMP_BR(name, T)       \
OP(name) {                    \
  STEP();                     \
  T a = static_cast<T>(S(0)); \
  T b = static_cast<T>(S(1)); \
  if (CMP_BR_PRED(a, b)) {    \
    TAKE_BRANCH(2);           \
  }                           \
  NEXT();                     \
}
#define CMP_BR_PRED(a, b) ((a) < (b))
CMP_BR(BR_LT_I32_S, int32_t)
CMP_BR(BR_LT_I64_S, int64_t)
#undef CMP_BR_PRED
#define CMP_BR_PRED(a, b) ((a) <= (b))
CMP_BR(BR_LE_I32_S, int32_t)
CMP_BR(BR_LE_I64_S, int64_t)
#undef CMP_BR_PRED

#define ADD_BR(name, T, U, PRED)                                       \
OP(name) {                                                             \
  STEP();                                                              \
  T sum = static_cast<T>(static_cast<U>(S(1)) + static_cast<U>(S(2))); \
  S(0) = static_cast<U>(sum);                                          \
  if (STRATA_LIKELY(sum PRED static_cast<T>(S(3)))) {                  \
    TAKE_BRANCH(4);                                                    \
  }                                                                    \
  NEXT();                                                              \
}
ADD_BR(ADD_BR_LT_I32_S, int32_t, uint32_t, <)
ADD_BR(ADD_BR_LE_I32_S, int32_t, uint32_t, <=)
ADD_BR(ADD_BR_LT_I64_S, int64_t, uint64_t, <)
ADD_BR(ADD_BR_LE_I64_S, int64_t, uint64_t, <=)

OP(CALL) {
  STEP();
  ix->callee_instance = ix->fp->instance;
  ix->callee = &ix->callee_instance->functions[U16(0)];
  TAIL(DoCall);
}
OP(CALL_IMPORT) {
  STEP();
  const ImportTarget& target = ix->fp->instance->imports[U16(0)];
  if (target.instance->bytecode) {
    ix->callee_instance = target.instance;
    ix->callee = &target.instance->functions[target.ordinal];
    TAIL(DoCall);
  }
  const uint8_t* next = CallNativeImport(ix, target, pc, s, r);
  if (STRATA_UNLIKELY(next == nullptr)) TAIL(Fail);
  pc = next;
  DISPATCH();
}

// Returns from a function without ref registers to a caller: scalar results
// only, nothing to release, no calls, so no stack frame. Everything else goes
// to ReturnGeneral.
OP(RETURN) {
  VMStack::Frame* fp = ix->fp;
  if (STRATA_UNLIKELY(fn->ref_register_count != 0 || fp == ix->frames)) TAIL(ReturnGeneral);
  const uint8_t* src_list = LIST(0);
  uint16_t count = ReadLE<uint16_t>(src_list);
  const VMStack::Frame& caller = fp[-1];
  const uint8_t* dst_list = caller.results + 2;  // skip the count (verified equal)
  STRATA_SHORT_LOOP
  for (uint32_t k = 0; k < count; ++k) {
    *RegisterAddress(caller.scalars, ReadLE<uint16_t>(dst_list + 2 * k)) =
        *RegisterAddress(s, ReadLE<uint16_t>(src_list + 2 + 2 * k));
  }
  PopFrame(ix, fn, s, r);
  pc = dst_list + 2 * count;
  DISPATCH();
}

OP(FAIL) {
  FAIL_WITH(AbortedError(ix->fp->instance->bytecode->strings()[U32(0)]));
}
OP(COND_FAIL) {
  if (static_cast<uint32_t>(S(0))) FAIL_WITH(AbortedError(ix->fp->instance->bytecode->strings()[U32(1)]));
  NEXT();
}
OP(CHECK_EQ_I64) {
  int64_t a = static_cast<int64_t>(S(0)), b = static_cast<int64_t>(S(1));
  if (STRATA_UNLIKELY(a != b)) {
    FAIL_WITH(InvalidArgumentError(ix->fp->instance->bytecode->strings()[U32(2)], "; they are ", a,
                                   " and ", b));
  }
  NEXT();
}
OP(CHECK_LE_I64_S) {
  int64_t a = static_cast<int64_t>(S(0)), b = static_cast<int64_t>(S(1));
  if (STRATA_UNLIKELY(a > b)) {
    FAIL_WITH(InvalidArgumentError(ix->fp->instance->bytecode->strings()[U32(2)], "; they are ", a,
                                   " and ", b));
  }
  NEXT();
}

// ---- globals ----
#define GLOBAL_LOAD(name, width)                                    \
OP(name) {                                                          \
  uint64_t v = 0;                                                   \
  std::memcpy(&v, ix->fp->instance->globals_bytes + U32(1), width); \
  S(0) = v;                                                         \
  NEXT();                                                           \
}
#define GLOBAL_STORE(name, width)                                   \
OP(name) {                                                          \
  uint64_t v = S(0);                                                \
  std::memcpy(ix->fp->instance->globals_bytes + U32(1), &v, width); \
  NEXT();                                                           \
}
GLOBAL_LOAD(GLOBAL_LOAD_I32, 4)
GLOBAL_LOAD(GLOBAL_LOAD_I64, 8)
GLOBAL_LOAD(GLOBAL_LOAD_F32, 4)
GLOBAL_LOAD(GLOBAL_LOAD_F64, 8)
GLOBAL_STORE(GLOBAL_STORE_I32, 4)
GLOBAL_STORE(GLOBAL_STORE_I64, 8)
GLOBAL_STORE(GLOBAL_STORE_F32, 4)
GLOBAL_STORE(GLOBAL_STORE_F64, 8)
OP(GLOBAL_LOAD_REF) { AssignRef(R(0), ix->fp->instance->ref_globals[U32(1)]); NEXT(); }
OP(GLOBAL_STORE_REF) { AssignRef(ix->fp->instance->ref_globals[U32(1)], R(0)); NEXT(); }

// ---- buffers ----
#define BUFFER_OPERAND(var, reg)                                           \
Buffer* var = RefCast<Buffer>(reg);                                        \
if (STRATA_UNLIKELY(!var)) {                                               \
  FAIL_WITH(InvalidArgumentError(MNEMONIC, ": expected a vm.buffer, got ", \
                                 reg ? reg->type_name() : "null"));        \
}
OP(BUFFER_ALLOC) {
  TRY(AllocateBuffer(static_cast<int64_t>(S(1)), &ix->allocation_budget, &R(0)));
  NEXT();
}
OP(BUFFER_LENGTH) {
  BUFFER_OPERAND(b, R(1));
  S(0) = b->length();
  NEXT();
}
OP(BUFFER_COPY) {
  BUFFER_OPERAND(src, R(0));
  BUFFER_OPERAND(dst, R(2));
  uint64_t src_off = S(1), dst_off = S(3), length = S(4);
  TRY(src->CheckRange("buffer.copy source", src_off, length, false));
  TRY(dst->CheckRange("buffer.copy target", dst_off, length, true));
  std::memmove(dst->data() + dst_off, src->data() + src_off, length);
  NEXT();
}
OP(BUFFER_FILL_I8) {
  BUFFER_OPERAND(b, R(0));
  uint64_t off = S(1), length = S(2);
  TRY(b->CheckRange(MNEMONIC, off, length, true));
  std::memset(b->data() + off, static_cast<uint8_t>(S(3)), length);
  NEXT();
}
#define BUFFER_LOAD(name, T, convert)                  \
OP(name) {                                             \
  BUFFER_OPERAND(b, R(1));                             \
  uint64_t off = S(2);                                 \
  TRY(b->CheckRange(MNEMONIC, off, sizeof(T), false)); \
  T v;                                                 \
  std::memcpy(&v, b->data() + off, sizeof(T));         \
  S(0) = convert;                                      \
  NEXT();                                              \
}
BUFFER_LOAD(BUFFER_LOAD_I8_S, int8_t, static_cast<uint32_t>(int32_t{v}))
BUFFER_LOAD(BUFFER_LOAD_I8_U, uint8_t, uint32_t{v})
BUFFER_LOAD(BUFFER_LOAD_I16_S, int16_t, static_cast<uint32_t>(int32_t{v}))
BUFFER_LOAD(BUFFER_LOAD_I16_U, uint16_t, uint32_t{v})
BUFFER_LOAD(BUFFER_LOAD_I32, uint32_t, v)
BUFFER_LOAD(BUFFER_LOAD_I64, uint64_t, v)
BUFFER_LOAD(BUFFER_LOAD_F32, uint32_t, v)
BUFFER_LOAD(BUFFER_LOAD_F64, uint64_t, v)
#define BUFFER_STORE(name, T)                         \
OP(name) {                                            \
  BUFFER_OPERAND(b, R(0));                            \
  uint64_t off = S(1);                                \
  TRY(b->CheckRange(MNEMONIC, off, sizeof(T), true)); \
  T v = static_cast<T>(S(2));                         \
  std::memcpy(b->data() + off, &v, sizeof(T));        \
  NEXT();                                             \
}
BUFFER_STORE(BUFFER_STORE_I8, uint8_t)
BUFFER_STORE(BUFFER_STORE_I16, uint16_t)
BUFFER_STORE(BUFFER_STORE_I32, uint32_t)
BUFFER_STORE(BUFFER_STORE_I64, uint64_t)
BUFFER_STORE(BUFFER_STORE_F32, uint32_t)
BUFFER_STORE(BUFFER_STORE_F64, uint64_t)

// ---- lists ----
#define LIST_OPERAND(var, reg)                                           \
List* var = RefCast<List>(reg);                                          \
if (STRATA_UNLIKELY(!var)) {                                             \
  FAIL_WITH(InvalidArgumentError(MNEMONIC, ": expected a vm.list, got ", \
                                 reg ? reg->type_name() : "null"));      \
}
OP(LIST_ALLOC) {
  TRY(AllocateList(RD_I32(S(1)), &ix->allocation_budget, &R(0)));
  NEXT();
}
OP(LIST_SIZE) {
  LIST_OPERAND(l, R(1));
  S(0) = l->size();
  NEXT();
}
OP(LIST_RESIZE) {
  LIST_OPERAND(l, R(0));
  TRY(ChargeAllocation(MNEMONIC, uint64_t(static_cast<uint32_t>(S(1))) * sizeof(Value),
                       &ix->allocation_budget));
  TRY(l->Resize(RD_I32(S(1))));
  NEXT();
}
#define LIST_GET(name, type)                        \
OP(name) {                                          \
  LIST_OPERAND(l, R(1));                            \
  TRY(ListGetScalar(l, RD_I32(S(2)), type, &S(0))); \
  NEXT();                                           \
}
LIST_GET(LIST_GET_I32, ValueType::kI32)
LIST_GET(LIST_GET_I64, ValueType::kI64)
LIST_GET(LIST_GET_F32, ValueType::kF32)
LIST_GET(LIST_GET_F64, ValueType::kF64)
OP(LIST_GET_REF) {
  LIST_OPERAND(l, R(1));
  TRY(ListGetRef(l, RD_I32(S(2)), &R(0)));
  NEXT();
}
#define LIST_SET(name, type)                                  \
OP(name) {                                                    \
  LIST_OPERAND(l, R(0));                                      \
  if (STRATA_UNLIKELY(!l->TrySetScalar(RD_I32(S(1)), type, S(2)))) { \
    TRY(l->Set(RD_I32(S(1)), Value::FromSlot(type, S(2))));   \
  }                                                           \
  NEXT();                                                     \
}
LIST_SET(LIST_SET_I32, ValueType::kI32)
LIST_SET(LIST_SET_I64, ValueType::kI64)
LIST_SET(LIST_SET_F32, ValueType::kF32)
LIST_SET(LIST_SET_F64, ValueType::kF64)
OP(LIST_SET_REF) {
  LIST_OPERAND(l, R(0));
  if (STRATA_UNLIKELY(!l->TrySetRef(RD_I32(S(1)), R(2)))) {
    TRY(l->Set(RD_I32(S(1)), Value::FromRef(Ref<RefObject>::Borrow(R(2)))));
  }
  NEXT();
}


// The countdown ran out at the instruction at pc: check the budget and the
// deadline, then run that instruction again (it counts its step once more,
// which the extra step in the new countdown pays for).
STRATA_HANDLER_CC void Refill(HANDLER_PARAMS) {
  countdown = RefillSteps(ix);
  if (STRATA_UNLIKELY(countdown <= 0)) TAIL(Fail);
  ++countdown;
  DISPATCH();
}

// Where the argument list of call and call.import starts.
constexpr size_t kCallArgumentsOffset = OperandAt(bytecode::Opcode::CALL, 1, "v");
static_assert(kCallArgumentsOffset == OperandAt(bytecode::Opcode::CALL_IMPORT, 1, "v"));

// Pushes a frame for ix->callee and enters it. The call instruction is at pc;
// its argument list starts at kCallArgumentsOffset for both call and
// call.import. This is the path for callees without ref registers (so every
// argument is a scalar): no calls, so no stack frame. DoCallWithRefs takes
// the others.
STRATA_HANDLER_CC void DoCall(HANDLER_PARAMS) {
  const FunctionInfo* callee = ix->callee;
  if (STRATA_UNLIKELY(callee->ref_register_count != 0)) TAIL(DoCallWithRefs);
  uint64_t* ns = s + fn->scalar_register_count;
  // The ref bank is not touched: a deeper callee with refs checks its own.
  if (STRATA_UNLIKELY(ix->fp + 1 == ix->frames_end || ns > ix->scalar_guard)) {
    TAIL(CallOverflow);
  }
  const uint8_t* arg_list = pc + kCallArgumentsOffset;
  uint16_t argc = ReadLE<uint16_t>(arg_list);
  STRATA_SHORT_LOOP
  for (uint32_t k = 0; k < argc; ++k) {
    *RegisterAddress(ns, k) = *RegisterAddress(s, ReadLE<uint16_t>(arg_list + 2 + 2 * k));
  }
  PushFrame(ix, pc, arg_list + 2 + 2 * argc, ns, r);
  fn = callee;
  pc = callee->code;
  s = ns;
  DISPATCH();
}

STRATA_HANDLER_CC void DoCallWithRefs(HANDLER_PARAMS) {
  const FunctionInfo* callee = ix->callee;
  uint64_t* ns = s + fn->scalar_register_count;
  RefObject** nr = r + fn->ref_register_count;
  if (STRATA_UNLIKELY(ix->fp + 1 == ix->frames_end || ns > ix->scalar_guard ||
                      nr > ix->ref_guard)) {
    TAIL(CallOverflow);
  }
  std::memset(nr, 0, sizeof(RefObject*) * callee->ref_register_count);
  const uint8_t* arg_list = pc + kCallArgumentsOffset;
  uint16_t argc = ReadLE<uint16_t>(arg_list);
  uint32_t si = 0, ri = 0;
  for (uint32_t k = 0; k < argc; ++k) {
    uint16_t reg = ReadLE<uint16_t>(arg_list + 2 + 2 * k);
    if (reg & kRefTag) {
      RefObject* v = r[reg & ~kRefTag];
      RetainRef(v);
      nr[ri++] = v;
    } else {
      ns[si++] = s[reg];
    }
  }
  PushFrame(ix, pc, arg_list + 2 + 2 * argc, ns, nr);
  fn = callee;
  pc = callee->code;
  s = ns;
  r = nr;
  DISPATCH();
}

// A call found no room: say which limit it hit.
STRATA_HANDLER_CC void CallOverflow(HANDLER_PARAMS) {
  if (ix->fp + 1 == ix->frames_end) {
    FAIL_WITH(ResourceExhaustedError("call depth limit of ", ix->frames_end - ix->frames, " exceeded"));
  }
  FAIL_WITH(ResourceExhaustedError("VM stack exhausted at call depth ", ix->fp - ix->frames + 1,
                                   " (register banks full)"));
}

// Returns from the entry function, or from a function with ref registers
// (ref results are retained into the caller's registers; the callee's refs
// are released).
STRATA_HANDLER_CC void ReturnGeneral(HANDLER_PARAMS) {
  if (ix->fp == ix->frames) {
    ReturnFromEntry(ix, pc, s, r, fn);
    return;
  }
  constexpr bytecode::Opcode kOp = bytecode::Opcode::RETURN;
  const uint8_t* src_list = LIST(0);
  uint16_t count = ReadLE<uint16_t>(src_list);
  const VMStack::Frame& caller = ix->fp[-1];
  const uint8_t* dst_list = caller.results + 2;
  for (uint32_t k = 0; k < count; ++k) {
    uint16_t src = ReadLE<uint16_t>(src_list + 2 + 2 * k);
    uint16_t dst = ReadLE<uint16_t>(dst_list + 2 * k);
    if (src & kRefTag) {
      AssignRef(caller.refs[dst & ~kRefTag], r[src & ~kRefTag]);
    } else {
      caller.scalars[dst] = s[src];
    }
  }
  for (uint32_t k = 0; k < fn->ref_register_count; ++k) ReleaseRef(r[k]);
  PopFrame(ix, fn, s, r);
  pc = dst_list + 2 * count;
  DISPATCH();
}

// Records the backtrace innermost first, then releases every frame's refs.
// ix->status says what failed.
STRATA_HANDLER_CC void Fail(HANDLER_PARAMS) {
  ix->fp->pc = pc;
  for (VMStack::Frame* frame = ix->fp; frame >= ix->frames; --frame) {
    const BytecodeModule& module = *frame->instance->bytecode;
    uint32_t ordinal = static_cast<uint32_t>(frame->fn - module.functions().data());
    ix->status.AddFrame(
        module.DescribeLocation(ordinal, static_cast<uint32_t>(frame->pc - frame->fn->code)));
    for (uint32_t k = 0; k < frame->fn->ref_register_count; ++k) ReleaseRef(frame->refs[k]);
  }
}

constexpr HandlerTable kHandlers = {{
#define STRATA_OP(name, mnemonic, operands) &Op_##name<>,
#include "schemas/bytecode_ops.def"
#undef STRATA_OP
}};

}  // namespace

Status Execute(VMStack& stack, ModuleInstance* entry_instance, uint32_t entry_ordinal,
               std::span<const Value> args, std::vector<Value>* results,
               const InvocationOptions& options) {
  const FunctionInfo* fn = &entry_instance->functions[entry_ordinal];
  uint64_t* s = stack.scalars.get();
  RefObject** r = stack.refs.get();
  static_assert(VMStack::kScalarSlots > bytecode::kMaxRegistersPerBank &&
                VMStack::kRefSlots > bytecode::kMaxRegistersPerBank);
  Interp ix;
  ix.stack = &stack;
  ix.scalar_guard = s + VMStack::kScalarSlots - bytecode::kMaxRegistersPerBank;
  ix.ref_guard = r + VMStack::kRefSlots - bytecode::kMaxRegistersPerBank;
  ix.options = &options;
  ix.results = results;
  ix.allocation_budget = options.max_allocation_bytes;
  ix.has_deadline = options.deadline != std::chrono::steady_clock::time_point::max();
  ix.steps_left_total = options.max_steps ? options.max_steps : std::numeric_limits<uint64_t>::max();
  ix.chunk = std::min(Interp::kChunk, ix.steps_left_total);
  // Frames live in a flat array; a caller's pc rests on its call instruction.
  const uint32_t max_depth = options.max_call_depth ? options.max_call_depth : 1;
  if (stack.frames.size() < max_depth) stack.frames.resize(max_depth);
  ix.frames = stack.frames.data();
  ix.frames_end = ix.frames + max_depth;
  ix.fp = ix.frames;

  std::memset(r, 0, sizeof(RefObject*) * fn->ref_register_count);
  {
    uint32_t si = 0, ri = 0;
    for (const Value& arg : args) {
      if (arg.type() == ValueType::kRef) {
        r[ri++] = Ref<RefObject>(arg.ref()).Detach();
      } else {
        s[si++] = arg.type() == ValueType::kI32 ? static_cast<uint32_t>(arg.i32()) : arg.slot();
      }
    }
  }
  const uint8_t* pc = fn->code;
  *ix.fp = {entry_instance, fn, pc, nullptr, s, r};
  const int64_t countdown = static_cast<int64_t>(ix.chunk);
  kHandlers.at[*pc](pc, s, r, fn, countdown, nullptr, nullptr, &ix, &kHandlers);
#if !STRATA_VM_TAIL_CALLS
  while (ix.next != nullptr) {
    Handler next = ix.next;
    ix.next = nullptr;
    next(ix.pc, ix.s, ix.r, ix.fn, ix.countdown, ix.hot_branch, ix.hot_target, &ix, &kHandlers);
  }
#endif
  return std::move(ix.status);
}

}  // namespace strata::vm
