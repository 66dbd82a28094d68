//===- BytecodeEncoder.h - one vm.func to bytecode --------------*- C++ -*-===//
//
// Encodes a function body as VM bytecode. The encoding of each op comes from
// its row in schemas/bytecode_ops.def: the encoder walks the row's operand
// letters and takes results, operands, attributes and successors in order,
// so no op has hand-written encoding code.
//
// Control flow: blocks are laid out in region order (unreachable ones
// dropped). Branch targets are u32 byte offsets from the function's start,
// patched once every block is placed.
//   - vm.br is BR with a remap list that passes the block arguments; it is
//     dropped if it only falls through to the next block.
//   - vm.cond_br (COND_BR) and the fused vm.cmp_br.* rows carry no remap, so
//     a successor that needs moves is reached through a stub `BR target
//     remap` placed after the last block.
//   - vm.cmp_br.* is BR_xx to the true successor, then a BR to the false
//     successor unless that is the next block and needs no moves.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_VM_TARGET_BYTECODEENCODER_H
#define STRATA_COMPILER_VM_TARGET_BYTECODEENCODER_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "compiler/vm/IR/VMOps.h"
#include "compiler/vm/Target/RegisterAllocation.h"
#include "llvm/ADT/StringMap.h"

namespace strata::vm {

/// Module-wide numbers that instructions refer to.
struct ModuleSymbols {
  llvm::StringMap<uint16_t> functionOrdinals;    // 'k'
  llvm::StringMap<uint16_t> importOrdinals;      // 'm'
  llvm::StringMap<uint32_t> rodataOrdinals;      // 'o'
  llvm::StringMap<uint32_t> scalarGlobalOffsets; // 'g'
  llvm::StringMap<uint32_t> refGlobalOrdinals;   // 'h'
  /// Embedded executables by name, numbered in the order each name first
  /// appears among those written with the module ('e').
  llvm::StringMap<uint32_t> executableOrdinals;

  /// The module's string table ('s'), each string once.
  std::vector<std::string> strings;
  llvm::StringMap<uint32_t> stringIndices;

  /// The index of `string` in the string table, adding it if new.
  uint32_t internString(llvm::StringRef string);
};

struct EncodedFunction {
  std::vector<uint8_t> bytecode;
  /// (pc, "file:line:col") for every instruction whose op has a file
  /// location, in pc order.
  std::vector<std::pair<uint32_t, std::string>> sourceLocations;
};

/// Encodes the function that `registers` was computed for; strings its ops
/// use are added to `symbols`. Fails with a diagnostic on an op that is not
/// an instruction.
mlir::FailureOr<EncodedFunction>
encodeFunction(const RegisterAllocation &registers, ModuleSymbols &symbols);

} // namespace strata::vm

#endif // STRATA_COMPILER_VM_TARGET_BYTECODEENCODER_H
