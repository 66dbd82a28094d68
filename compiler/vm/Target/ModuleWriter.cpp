//===- ModuleWriter.cpp - vm.module to a module file ----------------------===//

#include "compiler/vm/Target/ModuleWriter.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <bit>
#include <limits>
#include <string>

#include "compiler/support/Bytes.h"
#include "compiler/vm/Target/BytecodeEncoder.h"
#include "compiler/vm/Target/RegisterAllocation.h"
#include "schemas/integrity.h"
#include "strata/schemas/module_generated.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <sodium.h>

using namespace mlir;

namespace strata::vm {
namespace {

// Dense element data is copied as the host stores it; the VM reads
// little-endian, and so must the host.
static_assert(std::endian::native == std::endian::little,
              "the module writer copies element data in host byte order");

/// Rodata segments smaller than this sit inline in the FlatBuffer; larger
/// ones go to the 64-byte aligned external data.
constexpr size_t kInlineRodataLimit = 64;
constexpr uint32_t kInlineRodataAlignment = 16;

/// Functions and imports are numbered by u16 operands.
constexpr size_t kMaxOrdinals = std::numeric_limits<uint16_t>::max();

char signatureChar(Type type) {
  if (type.isSignlessInteger(32))
    return 'i';
  if (type.isSignlessInteger(64))
    return 'I';
  if (type.isF32())
    return 'f';
  if (type.isF64())
    return 'F';
  return 'r';
}

/// "iI_f" for (i32, i64) -> f32; see module.fbs.
std::string signatureOf(FunctionType type) {
  std::string signature;
  for (Type input : type.getInputs())
    signature += signatureChar(input);
  signature += '_';
  for (Type result : type.getResults())
    signature += signatureChar(result);
  return signature;
}

std::vector<uint8_t> rodataBytes(RodataOp op) {
  if (auto string = dyn_cast<StringAttr>(op.getValue()))
    return {string.getValue().bytes_begin(), string.getValue().bytes_end()};
  // The verifier admits only dense whole-byte ints and floats and resource
  // blobs of them.
  return elementsBytes(cast<ElementsAttr>(op.getValue()));
}

/// The module's scalar globals: one byte array, each global aligned to its
/// size, with its initial value.
struct ScalarGlobals {
  uint32_t size = 0;
  /// Initial bytes up to the last nonzero one; the rest start zero.
  std::vector<uint8_t> init;

  uint32_t add(Type type, TypedAttr initialValue) {
    uint32_t bytes = type.getIntOrFloatBitWidth() / 8;
    uint32_t offset = llvm::alignTo(size, bytes);
    size = offset + bytes;
    uint64_t bits = 0;
    if (auto integer = dyn_cast_or_null<IntegerAttr>(initialValue))
      bits = integer.getValue().getZExtValue();
    else if (auto real = dyn_cast_or_null<FloatAttr>(initialValue))
      bits = real.getValue().bitcastToAPInt().getZExtValue();
    if (bits != 0) {
      init.resize(offset + bytes, 0);
      for (uint32_t i = 0; i < bytes; ++i)
        init[offset + i] = static_cast<uint8_t>(bits >> (8 * i));
    }
    return offset;
  }
};

} // namespace

FailureOr<std::vector<uint8_t>>
serializeModule(ModuleOp module, ArrayRef<uint8_t> signingKey) {
  ModuleSymbols symbols;
  // Every format of an executable shares its name and ordinal.
  struct EmbeddedExecutable {
    std::string name, format;
    std::vector<uint8_t> data, metadata;
  };
  std::vector<EmbeddedExecutable> executables;
  for (auto executable : module.getOps<ExecutableOp>()) {
    symbols.executableOrdinals.try_emplace(executable.getName(),
                                           symbols.executableOrdinals.size());
    executables.push_back({executable.getName().str(),
                           executable.getFormat().str(),
                           elementsBytes(executable.getData()),
                           elementsBytes(executable.getMetadata())});
  }
  SmallVector<FuncOp> functions;
  SmallVector<ImportOp> imports;
  SmallVector<ExportOp> exports;
  SmallVector<RodataOp> rodata;
  ScalarGlobals scalarGlobals;
  uint32_t refGlobalCount = 0;
  for (Operation &op : module.getBody().front()) {
    llvm::TypeSwitch<Operation *>(&op)
        .Case([&](FuncOp function) {
          symbols.functionOrdinals[function.getSymName()] = functions.size();
          functions.push_back(function);
        })
        .Case([&](ImportOp import) {
          symbols.importOrdinals[import.getSymName()] = imports.size();
          imports.push_back(import);
        })
        .Case([&](ExportOp exportOp) { exports.push_back(exportOp); })
        .Case([&](RodataOp segment) {
          symbols.rodataOrdinals[segment.getSymName()] = rodata.size();
          rodata.push_back(segment);
        })
        .Case<GlobalI32Op, GlobalI64Op, GlobalF32Op, GlobalF64Op>(
            [&](auto global) {
              symbols.scalarGlobalOffsets[global.getSymName()] =
                  scalarGlobals.add(global.getValueType(module.getContext()),
                                    global.getInitialValueAttr());
            })
        .Case([&](GlobalRefOp global) {
          symbols.refGlobalOrdinals[global.getSymName()] = refGlobalCount++;
        });
  }
  if (functions.size() > kMaxOrdinals || imports.size() > kMaxOrdinals)
    return module.emitOpError()
           << "has " << functions.size() << " functions and " << imports.size()
           << " imports; the VM numbers each with 16 bits (at most "
           << kMaxOrdinals << ")";

  flatbuffers::FlatBufferBuilder fbb;

  std::vector<uint8_t> bytecode;
  std::vector<flatbuffers::Offset<schema::FunctionDef>> functionDefs;
  for (FuncOp function : functions) {
    FailureOr<RegisterAllocation> registers =
        RegisterAllocation::compute(function);
    if (failed(registers))
      return failure();
    FailureOr<EncodedFunction> encoded = encodeFunction(*registers, symbols);
    if (failed(encoded))
      return failure();
    std::vector<flatbuffers::Offset<schema::SourceLocationDef>> locations;
    for (const auto &[pc, location] : encoded->sourceLocations)
      locations.push_back(
          schema::CreateSourceLocationDefDirect(fbb, pc, location.c_str()));
    auto strings = [&](StringRef attrName) {
      std::vector<flatbuffers::Offset<flatbuffers::String>> result;
      if (auto array = function->getAttrOfType<ArrayAttr>(attrName))
        for (auto text : array.getAsValueRange<StringAttr>())
          result.push_back(fbb.CreateString(text.str()));
      return result;
    };
    std::vector<flatbuffers::Offset<flatbuffers::String>> argumentTypes =
        strings("strata.argument_types");
    std::vector<flatbuffers::Offset<flatbuffers::String>> resultTypes =
        strings("strata.result_types");
    uint64_t transientBytes = 0;
    if (auto bytes =
            function->getAttrOfType<IntegerAttr>("strata.transient_bytes"))
      transientBytes = bytes.getInt();
    functionDefs.push_back(schema::CreateFunctionDefDirect(
        fbb, function.getSymName().str().c_str(),
        signatureOf(function.getFunctionType()).c_str(), bytecode.size(),
        encoded->bytecode.size(),
        registers->getRegisterCount(Register::Bank::kScalar),
        registers->getRegisterCount(Register::Bank::kRef), &locations,
        argumentTypes.empty() ? nullptr : &argumentTypes,
        resultTypes.empty() ? nullptr : &resultTypes, transientBytes));
    bytecode.insert(bytecode.end(), encoded->bytecode.begin(),
                    encoded->bytecode.end());
  }

  std::vector<flatbuffers::Offset<schema::ImportDef>> importDefs;
  for (ImportOp import : imports)
    importDefs.push_back(schema::CreateImportDefDirect(
        fbb, import.getImportedModuleName().str().c_str(),
        import.getImportedFunctionName().str().c_str(),
        signatureOf(import.getFunctionType()).c_str()));

  std::vector<flatbuffers::Offset<schema::ExportDef>> exportDefs;
  for (ExportOp exportOp : exports)
    exportDefs.push_back(schema::CreateExportDefDirect(
        fbb, exportOp.getExportedName().str().c_str(),
        symbols.functionOrdinals.at(exportOp.getFunctionRef())));

  std::vector<uint8_t> externalData;
  // The external segments as integrity parts (offsets in external data).
  std::vector<integrity::Part> segments;
  std::vector<flatbuffers::Offset<schema::RodataDef>> rodataDefs;
  for (RodataOp segment : rodata) {
    std::vector<uint8_t> bytes = rodataBytes(segment);
    std::string name = segment.getSymName().str();
    if (bytes.size() < kInlineRodataLimit) {
      // Aligned for any device that binds it in place (GPU storage-buffer
      // offsets must be multiples of 16 or so).
      auto nameOffset = fbb.CreateString(name);
      fbb.ForceVectorAlignment(bytes.size(), sizeof(uint8_t),
                               kInlineRodataAlignment);
      auto data = fbb.CreateVector(bytes);
      rodataDefs.push_back(schema::CreateRodataDef(
          fbb, nameOffset, data, /*external=*/nullptr,
          kInlineRodataAlignment));
      continue;
    }
    externalData.resize(
        llvm::alignTo(externalData.size(), bytecode::kExternalAlignment), 0);
    schema::ExternalRange range(externalData.size(), bytes.size());
    segments.push_back({externalData.size(), bytes.size(),
                        integrity::PartKind::kRodata,
                        uint32_t(rodataDefs.size()), {}});
    externalData.insert(externalData.end(), bytes.begin(), bytes.end());
    rodataDefs.push_back(schema::CreateRodataDefDirect(
        fbb, name.c_str(), /*inline_data=*/nullptr, &range));
  }

  std::vector<flatbuffers::Offset<schema::ExecutableDef>> executableDefs;
  for (const EmbeddedExecutable &executable : executables) {
    externalData.resize(
        llvm::alignTo(externalData.size(), bytecode::kExternalAlignment), 0);
    schema::ExternalRange range(externalData.size(), executable.data.size());
    segments.push_back({externalData.size(), executable.data.size(),
                        integrity::PartKind::kExecutable,
                        uint32_t(executableDefs.size()), {}});
    externalData.insert(externalData.end(), executable.data.begin(),
                        executable.data.end());
    executableDefs.push_back(schema::CreateExecutableDefDirect(
        fbb, executable.name.c_str(), executable.format.c_str(), &range,
        &executable.metadata));
  }

  std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
  for (const std::string &string : symbols.strings)
    strings.push_back(fbb.CreateString(string));

  auto root = schema::CreateModuleDefDirect(
      fbb, module.getSymName().str().c_str(), bytecode::kVersionMajor,
      bytecode::kVersionMinor, &importDefs, &exportDefs, &functionDefs,
      &bytecode, &strings, scalarGlobals.size,
      scalarGlobals.init.empty() ? nullptr : &scalarGlobals.init,
      refGlobalCount, &rodataDefs,
      executableDefs.empty() ? nullptr : &executableDefs,
      externalData.size());
  schema::FinishSizePrefixedModuleDefBuffer(fbb, root);

  std::vector<uint8_t> file(fbb.GetBufferPointer(),
                            fbb.GetBufferPointer() + fbb.GetSize());
  file.resize(llvm::alignTo(file.size(), bytecode::kExternalAlignment), 0);
  uint64_t externalBase = file.size();
  file.insert(file.end(), externalData.begin(), externalData.end());

  // The integrity record: the description, then each segment, with the
  // alignment bytes between them as padding parts.
  std::vector<integrity::Part> parts = {
      {0, externalBase, integrity::PartKind::kDescription, 0, {}}};
  uint64_t end = 0;
  for (integrity::Part segment : segments) {
    if (segment.offset > end)
      parts.push_back({externalBase + end, segment.offset - end,
                       integrity::PartKind::kPadding, 0, {}});
    segment.offset += externalBase;
    parts.push_back(segment);
    end = segment.offset - externalBase + segment.length;
  }
  if (externalData.size() > end)
    parts.push_back({externalBase + end, externalData.size() - end,
                     integrity::PartKind::kPadding, 0, {}});
  if (signingKey.empty()) {
    integrity::Seal(file, std::move(parts));
    return file;
  }
  if (signingKey.size() != integrity::kSecretKeyBytes)
    return module.emitError("a signing key has ")
           << integrity::kSecretKeyBytes << " bytes, got "
           << signingKey.size();
  if (sodium_init() < 0)
    return module.emitError("libsodium failed to initialize");
  bool sealed = integrity::Seal(
      file, std::move(parts),
      [&](std::span<const uint8_t> bytes, uint8_t *signature) {
        uint8_t hash[integrity::kSignedHashBytes];
        crypto_generichash(hash, sizeof(hash), bytes.data(), bytes.size(),
                           nullptr, 0);
        return crypto_sign_detached(signature, nullptr, hash, sizeof(hash),
                                    signingKey.data()) == 0;
      });
  if (!sealed)
    return module.emitError("signing the module failed");
  return file;
}

} // namespace strata::vm
