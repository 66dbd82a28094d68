//===- Bytes.h - Byte payloads held in attributes ---------------*- C++ -*-===//
//
// Weights (vm.rodata) and compiled executables (flow.executable_binary,
// vm.executable) travel through the IR as dense or dense_resource elements
// attributes; the module writer reads their bytes back from here.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_SUPPORT_BYTES_H
#define STRATA_COMPILER_SUPPORT_BYTES_H

#include <cstdint>
#include <vector>

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"

namespace strata {

/// The packed little-endian elements of a dense int or float attribute (a
/// splat repeated) or a dense_resource's blob (empty without a blob).
std::vector<uint8_t> elementsBytes(mlir::ElementsAttr attr);

/// `bytes` as a dense_resource tensor<Nxi8> whose blob is named after
/// `blobName` (printed out of line, in the file's resource section).
mlir::ElementsAttr bytesAttr(mlir::MLIRContext *context,
                             llvm::StringRef blobName,
                             llvm::ArrayRef<uint8_t> bytes);

/// Fails, naming `what`, unless `attr` is a dense or dense_resource
/// tensor<Nxi8>.
mlir::LogicalResult verifyBytesAttr(mlir::Operation *op, llvm::StringRef what,
                                    mlir::ElementsAttr attr);

} // namespace strata

#endif // STRATA_COMPILER_SUPPORT_BYTES_H
