// The bytecode verifier: proves, once at load, everything the interpreter's
// hot loop relies on without checking.
//
// For each function it checks that every opcode exists; every operand lies
// inside the code; every register is inside its bank's declared count; every
// branch target is the start of an instruction; calls pass and receive
// exactly the registers (and banks) the callee's signature says; returns match
// the function's own signature; string, rodata, global and import indices are
// in range; global byte offsets fit the access width; and the code cannot run
// off its end. Each failure names the function, the pc, the instruction and
// the expected and actual values.
#pragma once

#include <cstdint>

#include "vm/base/status.h"

namespace strata::vm {

class BytecodeModule;

Status VerifyFunctionBytecode(const BytecodeModule& module, uint32_t function_ordinal);

}  // namespace strata::vm
