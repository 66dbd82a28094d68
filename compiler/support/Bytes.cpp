//===- Bytes.cpp - Byte payloads held in attributes -----------------------===//

#include "compiler/support/Bytes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;

namespace strata {

std::vector<uint8_t> elementsBytes(ElementsAttr attr) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return {};
    ArrayRef<char> data = blob->getData();
    return {data.begin(), data.end()};
  }
  auto dense = cast<DenseIntOrFPElementsAttr>(attr);
  ArrayRef<char> raw = dense.getRawData();
  std::vector<uint8_t> bytes;
  size_t copies = dense.isSplat() ? dense.getNumElements() : 1;
  bytes.reserve(raw.size() * copies);
  for (size_t i = 0; i < copies; ++i)
    bytes.insert(bytes.end(), raw.begin(), raw.end());
  return bytes;
}

ElementsAttr bytesAttr(MLIRContext *context, StringRef blobName,
                       ArrayRef<uint8_t> bytes) {
  auto type = RankedTensorType::get({int64_t(bytes.size())},
                                    IntegerType::get(context, 8));
  return DenseResourceElementsAttr::get(
      type, blobName,
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<char>(
          reinterpret_cast<const char *>(bytes.data()), bytes.size())));
}

LogicalResult verifyBytesAttr(Operation *op, StringRef what,
                              ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || type.getRank() != 1 || !type.getElementType().isInteger(8))
    return op->emitOpError("has ")
           << what << " of type " << attr.getType()
           << ", expected tensor<Nxi8> (the bytes)";
  if (!isa<DenseIntOrFPElementsAttr, DenseResourceElementsAttr>(attr))
    return op->emitOpError("has ")
           << what << " that is neither dense nor dense_resource";
  return success();
}

} // namespace strata
