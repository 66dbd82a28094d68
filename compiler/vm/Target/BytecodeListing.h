//===- BytecodeListing.h - a module file as text ----------------*- C++ -*-===//
//
// Prints a module file as text: its tables (imports, exports, strings,
// rodata, globals) and each function's instructions, decoded with the operand
// letters of schemas/bytecode_ops.def, with the source location recorded for
// each pc. compile-module --emit=bytecode-listing prints it so that tests can
// check the encoding of what was actually written.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_VM_TARGET_BYTECODELISTING_H
#define STRATA_COMPILER_VM_TARGET_BYTECODELISTING_H

#include <cstdint>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace strata::vm {

/// Prints the listing of the module file `file`; fails if it is not a valid
/// module file.
llvm::Error printBytecodeListing(llvm::ArrayRef<uint8_t> file,
                                 llvm::raw_ostream &os);

} // namespace strata::vm

#endif // STRATA_COMPILER_VM_TARGET_BYTECODELISTING_H
