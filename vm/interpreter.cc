// The dispatch loop.
//
// Dispatch uses computed goto (a jump table of label addresses, one indirect
// jump at the end of every handler) where the compiler supports it, and a
// plain switch otherwise. Handlers decode their operands inline from the
// layout in bytecode_ops.def and trust everything the verifier proved:
// opcodes, register indices, branch targets, call shapes and index ranges.
// What the verifier cannot know (values: division by zero, buffer bounds,
// null refs, list element types) is checked here and fails with a status.
//
// Calls push frames on the VMStack (no C recursion). A callee's registers sit
// right after its caller's; arguments are copied into registers 0.. of their
// bank and results are copied back into the registers the call instruction
// names.

#include <cmath>
#include <cstring>
#include <limits>

#include "schemas/bytecode.h"
#include "vm/buffer.h"
#include "vm/list.h"
#include "vm/module_instance.h"

#if defined(__GNUC__) || defined(__clang__)
#define STRATA_COMPUTED_GOTO 1
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

// Slow paths that hold objects with destructors live out of line: a computed
// goto may not leave the scope of such a variable.
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
  if (length < 0) return InvalidArgumentError("buffer.alloc: negative length ", length);
  STRATA_RETURN_IF_ERROR(ChargeAllocation("buffer.alloc", static_cast<uint64_t>(length), budget));
  STRATA_ASSIGN_OR_RETURN(Ref<Buffer> buffer, Buffer::Allocate(static_cast<uint64_t>(length)));
  StoreOwned(slot, buffer.Detach());
  return OkStatus();
}

Status AllocateList(int32_t capacity, uint64_t* budget, RefObject** slot) {
  if (capacity < 0) return InvalidArgumentError("list.alloc: negative capacity ", capacity);
  STRATA_RETURN_IF_ERROR(ChargeAllocation("list.alloc", uint64_t(capacity) * sizeof(Value), budget));
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

}  // namespace

Status Execute(VMStack& stack, ModuleInstance* entry_instance, uint32_t entry_ordinal,
               std::span<const Value> args, std::vector<Value>* results,
               const InvocationOptions& options) {
  // Current frame, cached in locals for the hot loop.
  ModuleInstance* instance = entry_instance;
  const FunctionInfo* fn = &instance->functions[entry_ordinal];
  // A one-entry software cache of the last taken branch: (branch pc, target
  // pc). In a hot loop the latch hits it every time, and the new pc comes
  // from a register instead of a load that depends on the old pc, which takes
  // the bytecode load off the loop-carried dependency chain (the CPU predicts
  // the compare and runs ahead).
  const uint8_t* hot_branch = nullptr;
  const uint8_t* hot_target = nullptr;
  const uint8_t* pc = fn->code;
  uint64_t* s = stack.scalars.get();
  RefObject** r = stack.refs.get();
  // A frame fits if it starts below these guards: no bank of one function
  // holds more than kMaxRegistersPerBank registers, so one compare suffices.
  stack.scalar_guard = stack.scalars.get() + VMStack::kScalarSlots - bytecode::kMaxRegistersPerBank;
  stack.ref_guard = stack.refs.get() + VMStack::kRefSlots - bytecode::kMaxRegistersPerBank;
  const uint32_t max_depth = options.max_call_depth ? options.max_call_depth : 1;

  // Step accounting: a cheap countdown in the loop, refilled in chunks by a
  // slow path that checks the budget and the deadline.
  constexpr uint64_t kChunk = 1 << 16;
  uint64_t steps_left_total = options.max_steps ? options.max_steps : std::numeric_limits<uint64_t>::max();
  uint64_t chunk = std::min(kChunk, steps_left_total);
  int64_t countdown = static_cast<int64_t>(chunk);
  // Kept in the stack object, not a local: only allocating ops touch it, and
  // a local would compete with the hot loop's values for registers.
  stack.allocation_budget = options.max_allocation_bytes;
  stack.tracer = options.tracer;
  const bool has_deadline = options.deadline != std::chrono::steady_clock::time_point::max();

  Status status;
  // Frames live in a flat array; fp is the current one. A caller's pc rests
  // on its call instruction.
  if (stack.frames.size() < max_depth) stack.frames.resize(max_depth);
  VMStack::Frame* const frames = stack.frames.data();
  stack.frames_end = frames + max_depth;
  VMStack::Frame* fp = frames;
  static_assert(VMStack::kScalarSlots > bytecode::kMaxRegistersPerBank &&
                VMStack::kRefSlots > bytecode::kMaxRegistersPerBank);
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
  *fp = {instance, fn, pc, nullptr, s, r};

  // State handed to the shared call path.
  ModuleInstance* callee_instance;
  const FunctionInfo* callee;
  const uint8_t* arg_list;

#define U16(o) ReadLE<uint16_t>(pc + (o))
#define U32(o) ReadLE<uint32_t>(pc + (o))
#define U64(o) ReadLE<uint64_t>(pc + (o))
#define S(o) s[U16(o)]
#define R(o) r[U16(o)]
#define TAKE_BRANCH(operand)                        \
  do {                                              \
    if (STRATA_UNLIKELY(pc != hot_branch)) {        \
      hot_branch = pc;                              \
      hot_target = fn->code + U32(operand);         \
    }                                               \
    pc = hot_target;                                \
    JUMP();                                         \
  } while (0)
#define FAIL_WITH(expr) \
  do {                  \
    status = (expr);    \
    goto fail;          \
  } while (0)
#define STEP()                                    \
  if (STRATA_UNLIKELY(--countdown <= 0)) {        \
    status = RefillSteps();                       \
    if (!status.ok()) goto fail;                  \
  }

  auto RefillSteps = [&]() -> Status {
    steps_left_total -= chunk;
    if (steps_left_total == 0) {
      return ResourceExhaustedError("step budget of ", options.max_steps,
                                    " branches and calls exhausted; the program may loop forever");
    }
    if (has_deadline && std::chrono::steady_clock::now() >= options.deadline) {
      return DeadlineExceededError("invocation deadline exceeded");
    }
    chunk = std::min(kChunk, steps_left_total);
    countdown = static_cast<int64_t>(chunk);
    return OkStatus();
  };

#ifdef STRATA_COMPUTED_GOTO
  static const void* const kDispatch[256] = {
#define STRATA_OP(name, mnemonic, operands) &&L_##name,
#include "schemas/bytecode_ops.def"
#undef STRATA_OP
  };
#define DISPATCH() goto* kDispatch[*pc]
#define OP(name) L_##name:
#define NEXT(n)  \
  do {           \
    pc += (n);   \
    DISPATCH();  \
  } while (0)
#define JUMP() DISPATCH()
#define BEGIN_DISPATCH() DISPATCH();
#define END_DISPATCH()
#else
#define JUMP() continue
#define OP(name) case Opcode::name:
#define NEXT(n)  \
  do {           \
    pc += (n);   \
    continue;    \
  } while (0)
#define BEGIN_DISPATCH() \
  for (;;) {             \
    switch (static_cast<Opcode>(*pc)) {
#define END_DISPATCH()                                              \
  default:                                                          \
    FAIL_WITH(InternalError("unverified opcode ", int(*pc)));        \
  }                                                                 \
  }
#endif

  BEGIN_DISPATCH()

  // ---- constants ----
  OP(CONST_I32) { S(1) = U32(3); NEXT(7); }
  OP(CONST_I64) { S(1) = U64(3); NEXT(11); }
  OP(CONST_F32) { S(1) = U32(3); NEXT(7); }
  OP(CONST_F64) { S(1) = U64(3); NEXT(11); }
  OP(CONST_REF_ZERO) { AssignRef(R(1), nullptr); NEXT(3); }
  OP(CONST_REF_RODATA) {
    MakeRodataView(instance, U32(3), &R(1));
    NEXT(7);
  }

  // ---- integer arithmetic ----
#define BIN_I32(name, expr)                        \
  OP(name) {                                       \
    uint32_t a = static_cast<uint32_t>(S(3));      \
    uint32_t b = static_cast<uint32_t>(S(5));      \
    S(1) = static_cast<uint32_t>(expr);            \
    NEXT(7);                                       \
  }
#define BIN_I64(name, expr)  \
  OP(name) {                 \
    uint64_t a = S(3);       \
    uint64_t b = S(5);       \
    S(1) = (expr);           \
    NEXT(7);                 \
  }
#define DIV_OP(name, T, U, op, mnemonic, is_signed)                                           \
  OP(name) {                                                                                  \
    T a = static_cast<T>(static_cast<U>(S(3)));                                               \
    T b = static_cast<T>(static_cast<U>(S(5)));                                               \
    if (STRATA_UNLIKELY(b == 0)) FAIL_WITH(InvalidArgumentError("division by zero in " mnemonic)); \
    if (is_signed && STRATA_UNLIKELY(b == T(-1) && a == std::numeric_limits<T>::min())) {     \
      FAIL_WITH(InvalidArgumentError("signed division overflow in " mnemonic ": ", +a, " / -1")); \
    }                                                                                         \
    S(1) = static_cast<U>(a op b);                                                            \
    NEXT(7);                                                                                  \
  }

  BIN_I32(ADD_I32, a + b)
  BIN_I32(SUB_I32, a - b)
  BIN_I32(MUL_I32, a * b)
  DIV_OP(DIV_I32_S, int32_t, uint32_t, /, "div.i32.s", true)
  DIV_OP(DIV_I32_U, uint32_t, uint32_t, /, "div.i32.u", false)
  DIV_OP(REM_I32_S, int32_t, uint32_t, %, "rem.i32.s", true)
  DIV_OP(REM_I32_U, uint32_t, uint32_t, %, "rem.i32.u", false)
  BIN_I32(AND_I32, a & b)
  BIN_I32(OR_I32, a | b)
  BIN_I32(XOR_I32, a ^ b)
  BIN_I32(SHL_I32, a << (b & 31))
  BIN_I32(SHR_I32_S, static_cast<uint32_t>(static_cast<int32_t>(a) >> (b & 31)))
  BIN_I32(SHR_I32_U, a >> (b & 31))
  OP(NOT_I32) { S(1) = static_cast<uint32_t>(~static_cast<uint32_t>(S(3))); NEXT(5); }

  BIN_I64(ADD_I64, a + b)
  BIN_I64(SUB_I64, a - b)
  BIN_I64(MUL_I64, a * b)
  DIV_OP(DIV_I64_S, int64_t, uint64_t, /, "div.i64.s", true)
  DIV_OP(DIV_I64_U, uint64_t, uint64_t, /, "div.i64.u", false)
  DIV_OP(REM_I64_S, int64_t, uint64_t, %, "rem.i64.s", true)
  DIV_OP(REM_I64_U, uint64_t, uint64_t, %, "rem.i64.u", false)
  BIN_I64(AND_I64, a & b)
  BIN_I64(OR_I64, a | b)
  BIN_I64(XOR_I64, a ^ b)
  BIN_I64(SHL_I64, a << (b & 63))
  BIN_I64(SHR_I64_S, static_cast<uint64_t>(static_cast<int64_t>(a) >> (b & 63)))
  BIN_I64(SHR_I64_U, a >> (b & 63))
  OP(NOT_I64) { S(1) = ~S(3); NEXT(5); }

  // ---- float arithmetic ----
#define BIN_F32(name, expr)         \
  OP(name) {                        \
    float a = AsF32(S(3));          \
    float b = AsF32(S(5));          \
    S(1) = FromF32(expr);           \
    NEXT(7);                        \
  }
#define UN_F32(name, expr)          \
  OP(name) {                        \
    float a = AsF32(S(3));          \
    S(1) = FromF32(expr);           \
    NEXT(5);                        \
  }
#define BIN_F64(name, expr)         \
  OP(name) {                        \
    double a = AsF64(S(3));         \
    double b = AsF64(S(5));         \
    S(1) = FromF64(expr);           \
    NEXT(7);                        \
  }
#define UN_F64(name, expr)          \
  OP(name) {                        \
    double a = AsF64(S(3));         \
    S(1) = FromF64(expr);           \
    NEXT(5);                        \
  }
  BIN_F32(ADD_F32, a + b)
  BIN_F32(SUB_F32, a - b)
  BIN_F32(MUL_F32, a * b)
  BIN_F32(DIV_F32, a / b)
  BIN_F32(REM_F32, std::fmod(a, b))
  BIN_F32(MIN_F32, NanMin(a, b))
  BIN_F32(MAX_F32, NanMax(a, b))
  UN_F32(NEG_F32, -a)
  UN_F32(ABS_F32, std::fabs(a))
  UN_F32(SQRT_F32, std::sqrt(a))
  UN_F32(FLOOR_F32, std::floor(a))
  UN_F32(CEIL_F32, std::ceil(a))
  BIN_F64(ADD_F64, a + b)
  BIN_F64(SUB_F64, a - b)
  BIN_F64(MUL_F64, a * b)
  BIN_F64(DIV_F64, a / b)
  BIN_F64(REM_F64, std::fmod(a, b))
  BIN_F64(MIN_F64, NanMin(a, b))
  BIN_F64(MAX_F64, NanMax(a, b))
  UN_F64(NEG_F64, -a)
  UN_F64(ABS_F64, std::fabs(a))
  UN_F64(SQRT_F64, std::sqrt(a))
  UN_F64(FLOOR_F64, std::floor(a))
  UN_F64(CEIL_F64, std::ceil(a))

  // ---- comparisons ----
#define CMP(name, T, read, expr) \
  OP(name) {                     \
    T a = read(S(3));            \
    T b = read(S(5));            \
    S(1) = (expr) ? 1 : 0;       \
    NEXT(7);                     \
  }
#define RD_I32(x) static_cast<int32_t>(static_cast<uint32_t>(x))
#define RD_U32(x) static_cast<uint32_t>(x)
#define RD_I64(x) static_cast<int64_t>(x)
#define RD_U64(x) static_cast<uint64_t>(x)
  CMP(CMP_EQ_I32, uint32_t, RD_U32, a == b)
  CMP(CMP_NE_I32, uint32_t, RD_U32, a != b)
  CMP(CMP_LT_I32_S, int32_t, RD_I32, a < b)
  CMP(CMP_LE_I32_S, int32_t, RD_I32, a <= b)
  CMP(CMP_LT_I32_U, uint32_t, RD_U32, a < b)
  CMP(CMP_LE_I32_U, uint32_t, RD_U32, a <= b)
  CMP(CMP_EQ_I64, uint64_t, RD_U64, a == b)
  CMP(CMP_NE_I64, uint64_t, RD_U64, a != b)
  CMP(CMP_LT_I64_S, int64_t, RD_I64, a < b)
  CMP(CMP_LE_I64_S, int64_t, RD_I64, a <= b)
  CMP(CMP_LT_I64_U, uint64_t, RD_U64, a < b)
  CMP(CMP_LE_I64_U, uint64_t, RD_U64, a <= b)
  CMP(CMP_EQ_F32, float, AsF32, a == b)
  CMP(CMP_NE_F32, float, AsF32, a != b)
  CMP(CMP_LT_F32, float, AsF32, a < b)
  CMP(CMP_LE_F32, float, AsF32, a <= b)
  OP(CMP_NAN_F32) { S(1) = std::isnan(AsF32(S(3))) ? 1 : 0; NEXT(5); }
  CMP(CMP_EQ_F64, double, AsF64, a == b)
  CMP(CMP_NE_F64, double, AsF64, a != b)
  CMP(CMP_LT_F64, double, AsF64, a < b)
  CMP(CMP_LE_F64, double, AsF64, a <= b)
  OP(CMP_NAN_F64) { S(1) = std::isnan(AsF64(S(3))) ? 1 : 0; NEXT(5); }
  OP(CMP_EQ_REF) { S(1) = R(3) == R(5) ? 1 : 0; NEXT(7); }
  OP(CMP_NZ_REF) { S(1) = R(3) != nullptr ? 1 : 0; NEXT(5); }

  // ---- casts ----
#define CAST(name, expr) \
  OP(name) {             \
    uint64_t x = S(3);   \
    S(1) = (expr);       \
    NEXT(5);             \
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
#define SELECT_SCALAR(name) \
  OP(name) {                \
    S(1) = static_cast<uint32_t>(S(3)) ? S(5) : S(7); \
    NEXT(9);                \
  }
  SELECT_SCALAR(SELECT_I32)
  SELECT_SCALAR(SELECT_I64)
  SELECT_SCALAR(SELECT_F32)
  SELECT_SCALAR(SELECT_F64)
  OP(SELECT_REF) {
    AssignRef(R(1), static_cast<uint32_t>(S(3)) ? R(5) : R(7));
    NEXT(9);
  }

  // ---- control flow ----
  OP(BR) {
    STEP();
    uint16_t count = U16(5);
    for (uint32_t k = 0; k < count; ++k) {
      uint16_t src = U16(7 + 4 * k);
      uint16_t dst = U16(9 + 4 * k);
      if (src & kRefTag) {
        AssignRef(r[dst & ~kRefTag], r[src & ~kRefTag]);
      } else {
        s[dst] = s[src];
      }
    }
    pc = fn->code + U32(1);
    JUMP();
  }
  OP(COND_BR) {
    STEP();
    pc = fn->code + (static_cast<uint32_t>(S(1)) ? U32(3) : U32(7));
    JUMP();
  }
#define CMP_BR(name, T)                                        \
  OP(name) {                                                   \
    STEP();                                                    \
    T a = static_cast<T>(S(1));                                \
    T b = static_cast<T>(S(3));                                \
    if (CMP_BR_PRED(a, b)) {                                   \
      TAKE_BRANCH(5);                                          \
    }                                                          \
    NEXT(9);                                                   \
  }
#define CMP_BR_PRED(a, b) ((a) < (b))
  CMP_BR(BR_LT_I32_S, int32_t)
  CMP_BR(BR_LT_I64_S, int64_t)
#undef CMP_BR_PRED
#define CMP_BR_PRED(a, b) ((a) <= (b))
  CMP_BR(BR_LE_I32_S, int32_t)
  CMP_BR(BR_LE_I64_S, int64_t)
#undef CMP_BR_PRED

#define ADD_BR(name, T, U, PRED)                               \
  OP(name) {                                                   \
    STEP();                                                    \
    T sum = static_cast<T>(static_cast<U>(S(3)) + static_cast<U>(S(5))); \
    S(1) = static_cast<U>(sum);                                \
    if (STRATA_LIKELY(sum PRED static_cast<T>(S(7)))) {        \
      TAKE_BRANCH(9);                                          \
    }                                                          \
    NEXT(13);                                                  \
  }
  ADD_BR(ADD_BR_LT_I32_S, int32_t, uint32_t, <)
  ADD_BR(ADD_BR_LE_I32_S, int32_t, uint32_t, <=)
  ADD_BR(ADD_BR_LT_I64_S, int64_t, uint64_t, <)
  ADD_BR(ADD_BR_LE_I64_S, int64_t, uint64_t, <=)

  OP(CALL) {
    STEP();
    callee_instance = instance;
    callee = &instance->functions[U16(1)];
    arg_list = pc + 3;
    goto do_call;
  }
  OP(CALL_IMPORT) {
    STEP();
    const ImportTarget& target = instance->imports[U16(1)];
    if (target.instance->bytecode) {
      callee_instance = target.instance;
      callee = &callee_instance->functions[target.ordinal];
      arg_list = pc + 3;
      goto do_call;
    }
    // Native: marshal registers to Values, call, and copy results back.
    const NativeModule::Function& nf = target.instance->native->function(target.ordinal);
    uint16_t argc = U16(3);
    auto& nargs = stack.native_args;
    nargs.clear();
    for (uint32_t k = 0; k < argc; ++k) {
      uint16_t reg = U16(5 + 2 * k);
      char type = nf.arg_types[k];
      // Refs are lent, not retained: the registers hold them across the call
      // (an atomic increment and decrement saved per ref argument).
      nargs.push_back(type == 'r' ? Value::LendRef(r[reg & ~kRefTag])
                                  : Value::FromSlot(ValueTypeFromSignatureChar(type), s[reg]));
    }
    const uint64_t trace_begin = STRATA_UNLIKELY(stack.tracer != nullptr) ? Tracer::Now() : 0;
    status = CallNative(nf, nargs, &stack.native_results);
    if (STRATA_UNLIKELY(stack.tracer != nullptr)) TraceNativeCall(stack.tracer, *target.instance, nf, trace_begin);
    for (Value& arg : nargs) {
      if (arg.type() == ValueType::kRef) arg.ForgetLentRef();
    }
    nargs.clear();
    if (!status.ok()) {
      status.Annotate(StrCat("in ", target.instance->module->name(), ".", nf.name, ": "));
      goto fail;
    }
    const uint8_t* rl = pc + 5 + 2 * argc;
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
    NEXT(5 + 2 * argc + 2 + 2 * resc);
  }

  do_call: {
    if (STRATA_UNLIKELY(fp + 1 == stack.frames_end)) {
      FAIL_WITH(ResourceExhaustedError("call depth limit of ", max_depth, " exceeded"));
    }
    uint64_t* ns = s + fn->scalar_register_count;
    RefObject** nr = r + fn->ref_register_count;
    if (STRATA_UNLIKELY(ns > stack.scalar_guard || nr > stack.ref_guard)) {
      FAIL_WITH(ResourceExhaustedError("VM stack exhausted at call depth ", fp - frames + 1,
                                       " (register banks full)"));
    }
    if (callee->ref_register_count) std::memset(nr, 0, sizeof(RefObject*) * callee->ref_register_count);
    uint16_t argc = ReadLE<uint16_t>(arg_list);
    if (STRATA_LIKELY(callee->scalar_args)) {
      STRATA_SHORT_LOOP
      for (uint32_t k = 0; k < argc; ++k) ns[k] = s[ReadLE<uint16_t>(arg_list + 2 + 2 * k)];
    } else {
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
    }
    fp->pc = pc;
    fp->results = arg_list + 2 + 2 * argc;
    *++fp = {callee_instance, callee, callee->code, nullptr, ns, nr};
    instance = callee_instance;
    fn = callee;
    pc = callee->code;
    s = ns;
    r = nr;
    JUMP();
  }

  OP(RETURN) {
    uint16_t count = U16(1);
    if (fp == frames) {
      results->clear();
      for (uint32_t k = 0; k < count; ++k) {
        uint16_t reg = U16(3 + 2 * k);
        char type = fn->result_types[k];
        results->push_back(type == 'r' ? Value::FromRef(Ref<RefObject>::Borrow(r[reg & ~kRefTag]))
                                       : Value::FromSlot(ValueTypeFromSignatureChar(type), s[reg]));
      }
      for (uint32_t k = 0; k < fn->ref_register_count; ++k) ReleaseRef(r[k]);
      return OkStatus();
    }
    const VMStack::Frame& caller = fp[-1];
    const uint8_t* dst_list = caller.results + 2;  // skip the count (verified equal)
    if (STRATA_LIKELY(fn->scalar_results)) {
      STRATA_SHORT_LOOP
      for (uint32_t k = 0; k < count; ++k) {
        caller.scalars[ReadLE<uint16_t>(dst_list + 2 * k)] = s[U16(3 + 2 * k)];
      }
    } else {
      for (uint32_t k = 0; k < count; ++k) {
        uint16_t src = U16(3 + 2 * k);
        uint16_t dst = ReadLE<uint16_t>(dst_list + 2 * k);
        if (src & kRefTag) {
          AssignRef(caller.refs[dst & ~kRefTag], r[src & ~kRefTag]);
        } else {
          caller.scalars[dst] = s[src];
        }
      }
    }
    for (uint32_t k = 0; k < fn->ref_register_count; ++k) ReleaseRef(r[k]);
    --fp;
    instance = caller.instance;
    fn = caller.fn;
    s = caller.scalars;
    r = caller.refs;
    pc = dst_list + 2 * count;
    JUMP();
  }

  OP(FAIL) {
    FAIL_WITH(AbortedError(instance->bytecode->strings()[U32(1)]));
  }
  OP(COND_FAIL) {
    if (static_cast<uint32_t>(S(1))) FAIL_WITH(AbortedError(instance->bytecode->strings()[U32(3)]));
    NEXT(7);
  }

  // ---- globals ----
#define GLOBAL_LOAD(name, width)                     \
  OP(name) {                                         \
    uint64_t v = 0;                                  \
    std::memcpy(&v, instance->globals_bytes + U32(3), width);        \
    S(1) = v;                                        \
    NEXT(7);                                         \
  }
#define GLOBAL_STORE(name, width)                    \
  OP(name) {                                         \
    uint64_t v = S(1);                               \
    std::memcpy(instance->globals_bytes + U32(3), &v, width);        \
    NEXT(7);                                         \
  }
  GLOBAL_LOAD(GLOBAL_LOAD_I32, 4)
  GLOBAL_LOAD(GLOBAL_LOAD_I64, 8)
  GLOBAL_LOAD(GLOBAL_LOAD_F32, 4)
  GLOBAL_LOAD(GLOBAL_LOAD_F64, 8)
  GLOBAL_STORE(GLOBAL_STORE_I32, 4)
  GLOBAL_STORE(GLOBAL_STORE_I64, 8)
  GLOBAL_STORE(GLOBAL_STORE_F32, 4)
  GLOBAL_STORE(GLOBAL_STORE_F64, 8)
  OP(GLOBAL_LOAD_REF) { AssignRef(R(1), instance->ref_globals[U32(3)]); NEXT(7); }
  OP(GLOBAL_STORE_REF) { AssignRef(instance->ref_globals[U32(3)], R(1)); NEXT(7); }

  // ---- buffers ----
#define BUFFER_OPERAND(var, reg, mnemonic)                                                      \
  Buffer* var = RefCast<Buffer>(reg);                                                         \
  if (STRATA_UNLIKELY(!var)) {                                                                  \
    FAIL_WITH(InvalidArgumentError(mnemonic ": expected a vm.buffer, got ",                   \
                                   reg ? reg->type_name() : "null"));                           \
  }
  OP(BUFFER_ALLOC) {
    status = AllocateBuffer(static_cast<int64_t>(S(3)), &stack.allocation_budget, &R(1));
    if (!status.ok()) goto fail;
    NEXT(5);
  }
  OP(BUFFER_LENGTH) {
    BUFFER_OPERAND(b, R(3), "buffer.length");
    S(1) = b->length();
    NEXT(5);
  }
  OP(BUFFER_COPY) {
    BUFFER_OPERAND(src, R(1), "buffer.copy");
    BUFFER_OPERAND(dst, R(5), "buffer.copy");
    uint64_t src_off = S(3), dst_off = S(7), length = S(9);
    status = src->CheckRange("buffer.copy source", src_off, length, false);
    if (status.ok()) status = dst->CheckRange("buffer.copy target", dst_off, length, true);
    if (!status.ok()) goto fail;
    std::memmove(dst->data() + dst_off, src->data() + src_off, length);
    NEXT(11);
  }
  OP(BUFFER_FILL_I8) {
    BUFFER_OPERAND(b, R(1), "buffer.fill.i8");
    uint64_t off = S(3), length = S(5);
    status = b->CheckRange("buffer.fill.i8", off, length, true);
    if (!status.ok()) goto fail;
    std::memset(b->data() + off, static_cast<uint8_t>(S(7)), length);
    NEXT(9);
  }
#define BUFFER_LOAD(name, mnemonic, T, convert)                                 \
  OP(name) {                                                                    \
    BUFFER_OPERAND(b, R(3), mnemonic);                                          \
    uint64_t off = S(5);                                                        \
    status = b->CheckRange(mnemonic, off, sizeof(T), false);                    \
    if (!status.ok()) goto fail;                                                \
    T v;                                                                        \
    std::memcpy(&v, b->data() + off, sizeof(T));                                \
    S(1) = convert;                                                             \
    NEXT(7);                                                                    \
  }
  BUFFER_LOAD(BUFFER_LOAD_I8_S, "buffer.load.i8.s", int8_t, static_cast<uint32_t>(int32_t{v}))
  BUFFER_LOAD(BUFFER_LOAD_I8_U, "buffer.load.i8.u", uint8_t, uint32_t{v})
  BUFFER_LOAD(BUFFER_LOAD_I16_S, "buffer.load.i16.s", int16_t, static_cast<uint32_t>(int32_t{v}))
  BUFFER_LOAD(BUFFER_LOAD_I16_U, "buffer.load.i16.u", uint16_t, uint32_t{v})
  BUFFER_LOAD(BUFFER_LOAD_I32, "buffer.load.i32", uint32_t, v)
  BUFFER_LOAD(BUFFER_LOAD_I64, "buffer.load.i64", uint64_t, v)
  BUFFER_LOAD(BUFFER_LOAD_F32, "buffer.load.f32", uint32_t, v)
  BUFFER_LOAD(BUFFER_LOAD_F64, "buffer.load.f64", uint64_t, v)
#define BUFFER_STORE(name, mnemonic, T)                                         \
  OP(name) {                                                                    \
    BUFFER_OPERAND(b, R(1), mnemonic);                                          \
    uint64_t off = S(3);                                                        \
    status = b->CheckRange(mnemonic, off, sizeof(T), true);                     \
    if (!status.ok()) goto fail;                                                \
    T v = static_cast<T>(S(5));                                                 \
    std::memcpy(b->data() + off, &v, sizeof(T));                                \
    NEXT(7);                                                                    \
  }
  BUFFER_STORE(BUFFER_STORE_I8, "buffer.store.i8", uint8_t)
  BUFFER_STORE(BUFFER_STORE_I16, "buffer.store.i16", uint16_t)
  BUFFER_STORE(BUFFER_STORE_I32, "buffer.store.i32", uint32_t)
  BUFFER_STORE(BUFFER_STORE_I64, "buffer.store.i64", uint64_t)
  BUFFER_STORE(BUFFER_STORE_F32, "buffer.store.f32", uint32_t)
  BUFFER_STORE(BUFFER_STORE_F64, "buffer.store.f64", uint64_t)

  // ---- lists ----
#define LIST_OPERAND(var, reg, mnemonic)                                                        \
  List* var = RefCast<List>(reg);                                                             \
  if (STRATA_UNLIKELY(!var)) {                                                                  \
    FAIL_WITH(InvalidArgumentError(mnemonic ": expected a vm.list, got ",                     \
                                   reg ? reg->type_name() : "null"));                           \
  }
  OP(LIST_ALLOC) {
    status = AllocateList(RD_I32(S(3)), &stack.allocation_budget, &R(1));
    if (!status.ok()) goto fail;
    NEXT(5);
  }
  OP(LIST_SIZE) {
    LIST_OPERAND(l, R(3), "list.size");
    S(1) = l->size();
    NEXT(5);
  }
  OP(LIST_RESIZE) {
    LIST_OPERAND(l, R(1), "list.resize");
    status = ChargeAllocation("list.resize", uint64_t(static_cast<uint32_t>(S(3))) * sizeof(Value),
                              &stack.allocation_budget);
    if (status.ok()) status = l->Resize(RD_I32(S(3)));
    if (!status.ok()) goto fail;
    NEXT(5);
  }
#define LIST_GET(name, mnemonic, type)                                    \
  OP(name) {                                                              \
    LIST_OPERAND(l, R(3), mnemonic);                                      \
    status = ListGetScalar(l, RD_I32(S(5)), type, &S(1));                 \
    if (!status.ok()) goto fail;                                          \
    NEXT(7);                                                              \
  }
  LIST_GET(LIST_GET_I32, "list.get.i32", ValueType::kI32)
  LIST_GET(LIST_GET_I64, "list.get.i64", ValueType::kI64)
  LIST_GET(LIST_GET_F32, "list.get.f32", ValueType::kF32)
  LIST_GET(LIST_GET_F64, "list.get.f64", ValueType::kF64)
  OP(LIST_GET_REF) {
    LIST_OPERAND(l, R(3), "list.get.ref");
    status = ListGetRef(l, RD_I32(S(5)), &R(1));
    if (!status.ok()) goto fail;
    NEXT(7);
  }
#define LIST_SET(name, mnemonic, type)                                        \
  OP(name) {                                                                  \
    LIST_OPERAND(l, R(1), mnemonic);                                          \
    status = l->Set(RD_I32(S(3)), Value::FromSlot(type, S(5)));               \
    if (!status.ok()) goto fail;                                              \
    NEXT(7);                                                                  \
  }
  LIST_SET(LIST_SET_I32, "list.set.i32", ValueType::kI32)
  LIST_SET(LIST_SET_I64, "list.set.i64", ValueType::kI64)
  LIST_SET(LIST_SET_F32, "list.set.f32", ValueType::kF32)
  LIST_SET(LIST_SET_F64, "list.set.f64", ValueType::kF64)
  OP(LIST_SET_REF) {
    LIST_OPERAND(l, R(1), "list.set.ref");
    status = l->Set(RD_I32(S(3)), Value::FromRef(Ref<RefObject>::Borrow(R(5))));
    if (!status.ok()) goto fail;
    NEXT(7);
  }

  END_DISPATCH()

fail:
  // Record the backtrace innermost first, then release every frame's refs.
  fp->pc = pc;
  for (VMStack::Frame* frame = fp; frame >= frames; --frame) {
    const BytecodeModule& module = *frame->instance->bytecode;
    uint32_t ordinal = static_cast<uint32_t>(frame->fn - module.functions().data());
    status.AddFrame(module.DescribeLocation(ordinal, static_cast<uint32_t>(frame->pc - frame->fn->code)));
    for (uint32_t k = 0; k < frame->fn->ref_register_count; ++k) ReleaseRef(frame->refs[k]);
  }
  return status;
}

}  // namespace strata::vm
