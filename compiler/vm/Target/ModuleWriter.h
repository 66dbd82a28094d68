//===- ModuleWriter.h - vm.module to a module file --------------*- C++ -*-===//
//
// Writes a module file (schemas/module.fbs): the size-prefixed ModuleDef
// FlatBuffer with identifier "SMOD", zero padding to a 64-byte boundary, then
// the external data (rodata segments of 64 bytes or more, each 64-byte
// aligned, so the runtime uses them in place), then the integrity record of
// schemas/integrity.h (a digest of each part and of the whole file, and a
// signature when a key is given).
//
// Numbering: functions, imports, rodata segments and ref globals take
// ordinals in the order they appear in the vm.module; scalar globals are laid
// out in that order too, each aligned to its size.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_VM_TARGET_MODULEWRITER_H
#define STRATA_COMPILER_VM_TARGET_MODULEWRITER_H

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/vm/IR/VMOps.h"

namespace strata::vm {

/// Allocates registers for every function of `module`, encodes them and
/// returns the bytes of the module file with its vm.executable ops embedded
/// (schemas/module.fbs ExecutableDef: the bytes go to the external data,
/// 64-byte aligned, so the runtime loads them in place). A
/// function's `strata.argument_types` / `strata.result_types` (arrays of
/// strings) and `strata.transient_bytes` attributes become its reflection.
/// With `signingKey` (a 64-byte Ed25519 secret key, libsodium's layout) the
/// integrity record carries a signature. Fails with diagnostics.
mlir::FailureOr<std::vector<uint8_t>>
serializeModule(ModuleOp module, llvm::ArrayRef<uint8_t> signingKey = {});

} // namespace strata::vm

#endif // STRATA_COMPILER_VM_TARGET_MODULEWRITER_H
