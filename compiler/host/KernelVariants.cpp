//===- KernelVariants.cpp - How the host dispatches each kernel -----------===//

#include "compiler/host/KernelVariants.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace strata::host {

DictionaryAttr encodeKernelVariant(Builder &b, const KernelVariant &variant) {
  const codegen::DispatchInfo &info = variant.dispatch;
  auto i32s = [&](auto values) {
    SmallVector<int32_t> words(values.begin(), values.end());
    return b.getDenseI32ArrayAttr(words);
  };
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("format", b.getStringAttr(variant.format)),
      b.getNamedAttr("ordinal", b.getI32IntegerAttr(int32_t(variant.ordinal))),
      b.getNamedAttr("workgroup_size", i32s(info.workgroupSize)),
      b.getNamedAttr("scratch_bytes",
                     b.getI64IntegerAttr(int64_t(info.scratchBytes)))};
  if (info.workgroupCount) {
    fields.push_back(
        b.getNamedAttr("workgroup_count", i32s(*info.workgroupCount)));
  } else {
    fields.push_back(
        b.getNamedAttr("count_factor", b.getI64IntegerAttr(info.countFactor)));
    fields.push_back(b.getNamedAttr("count_words", i32s(info.countWords)));
    fields.push_back(b.getNamedAttr(
        "count_max", b.getI32IntegerAttr(int32_t(info.countMax))));
  }
  return b.getDictionaryAttr(fields);
}

LogicalResult addKernelVariant(func::FuncOp kernel,
                               const KernelVariant &variant) {
  Builder b(kernel.getContext());
  SmallVector<Attribute> variants;
  if (auto existing = kernel->getAttrOfType<ArrayAttr>(kVariantsAttr)) {
    FailureOr<SmallVector<KernelVariant>> decoded =
        kernelVariantsOf(kernel, kernel);
    if (failed(decoded))
      return failure();
    const KernelVariant &first = decoded->front();
    if (first.ordinal != variant.ordinal ||
        first.dispatch.scratchBytes != variant.dispatch.scratchBytes)
      return kernel.emitOpError("is laid out differently for ")
             << variant.format << " (entry point " << variant.ordinal << ", "
             << variant.dispatch.scratchBytes << " bytes of scratch) than for "
             << first.format << " (entry point " << first.ordinal << ", "
             << first.dispatch.scratchBytes << " bytes of scratch)";
    variants.append(existing.begin(), existing.end());
  }
  variants.push_back(encodeKernelVariant(b, variant));
  kernel->setAttr(kVariantsAttr, b.getArrayAttr(variants));
  return success();
}

FailureOr<SmallVector<KernelVariant>> kernelVariantsOf(func::FuncOp kernel,
                                                       Operation *user) {
  auto fail = [&](const Twine &what) {
    return user->emitOpError("dispatches '")
           << kernel.getSymName() << "', whose " << kVariantsAttr << " "
           << what;
  };
  auto array = kernel->getAttrOfType<ArrayAttr>(kVariantsAttr);
  if (!array || array.empty())
    return fail("is missing: the kernel has not been compiled into an "
                "executable");
  SmallVector<KernelVariant> variants;
  for (auto [index, element] : llvm::enumerate(array)) {
    auto dict = dyn_cast<DictionaryAttr>(element);
    std::string where = "entry " + std::to_string(index);
    if (!dict)
      return fail(where + " is not a dictionary");
    auto field = [&](StringRef name, auto type) {
      return dyn_cast_or_null<decltype(type)>(dict.get(name));
    };
    KernelVariant variant;
    auto format = field("format", StringAttr());
    auto ordinal = field("ordinal", IntegerAttr());
    auto size = field("workgroup_size", DenseI32ArrayAttr());
    auto scratch = field("scratch_bytes", IntegerAttr());
    if (!format || !ordinal || !size || size.size() != 3 || !scratch)
      return fail(where + " needs format (string), ordinal (integer), "
                          "workgroup_size (array<i32> of 3) and "
                          "scratch_bytes (integer)");
    variant.format = format.str();
    variant.ordinal = uint32_t(ordinal.getInt());
    codegen::DispatchInfo &info = variant.dispatch;
    for (int d = 0; d < 3; ++d)
      info.workgroupSize[d] = uint32_t(size[d]);
    info.scratchBytes = uint64_t(scratch.getInt());
    if (auto count = field("workgroup_count", DenseI32ArrayAttr())) {
      if (count.size() != 3)
        return fail(where + " has a workgroup_count of " +
                    std::to_string(count.size()) + " values, expected 3");
      info.workgroupCount = {uint32_t(count[0]), uint32_t(count[1]),
                             uint32_t(count[2])};
    } else {
      auto factor = field("count_factor", IntegerAttr());
      auto words = field("count_words", DenseI32ArrayAttr());
      auto max = field("count_max", IntegerAttr());
      if (!factor || !words || !max)
        return fail(where + " needs workgroup_count, or count_factor, "
                            "count_words and count_max");
      info.countFactor = factor.getInt();
      info.countWords.assign(words.asArrayRef().begin(),
                             words.asArrayRef().end());
      info.countMax = uint32_t(max.getInt());
    }
    if (!variants.empty() &&
        (variants.front().ordinal != variant.ordinal ||
         variants.front().dispatch.scratchBytes != info.scratchBytes))
      return fail(where + " (" + variant.format +
                  ") differs from the first in its ordinal or scratch");
    variants.push_back(std::move(variant));
  }
  return variants;
}

} // namespace strata::host
