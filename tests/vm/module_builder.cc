#include "tests/vm/module_builder.h"

#include "schemas/integrity.h"
#include "strata/schemas/module_generated.h"

namespace strata::testing {

void Seal(std::vector<uint8_t>& file) {
  integrity::Seal(file, {{0, file.size(), integrity::PartKind::kDescription, 0}});
}

std::vector<uint8_t> BuildModule(const TestModule& m) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<uint8_t> bytecode;
  std::vector<flatbuffers::Offset<schema::FunctionDef>> functions;
  for (const TestFunction& fn : m.functions) {
    uint32_t offset = static_cast<uint32_t>(bytecode.size());
    bytecode.insert(bytecode.end(), fn.code.begin(), fn.code.end());
    std::vector<flatbuffers::Offset<schema::SourceLocationDef>> locations;
    for (const auto& [pc, location] : fn.locations) {
      locations.push_back(schema::CreateSourceLocationDefDirect(fbb, pc, location.c_str()));
    }
    functions.push_back(schema::CreateFunctionDefDirect(
        fbb, fn.name.c_str(), fn.signature.c_str(), offset, static_cast<uint32_t>(fn.code.size()),
        fn.scalar_registers, fn.ref_registers, fn.locations.empty() ? nullptr : &locations));
  }
  std::vector<flatbuffers::Offset<schema::ExportDef>> exports;
  for (const auto& [name, ordinal] : m.exports) {
    exports.push_back(schema::CreateExportDefDirect(fbb, name.c_str(), ordinal));
  }
  std::vector<flatbuffers::Offset<schema::ImportDef>> imports;
  for (const TestImport& imp : m.imports) {
    imports.push_back(schema::CreateImportDefDirect(fbb, imp.module_name.c_str(), imp.function_name.c_str(),
                                                    imp.signature.c_str()));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> strings;
  for (const std::string& s : m.strings) strings.push_back(fbb.CreateString(s));

  std::vector<uint8_t> external;
  std::vector<flatbuffers::Offset<schema::RodataDef>> rodata;
  for (const TestRodata& seg : m.rodata) {
    auto name = fbb.CreateString(seg.name);
    if (seg.external) {
      while (external.size() % bytecode::kExternalAlignment) external.push_back(0);
      schema::ExternalRange range(external.size(), seg.forced_length ? seg.forced_length : seg.bytes.size());
      external.insert(external.end(), seg.bytes.begin(), seg.bytes.end());
      rodata.push_back(schema::CreateRodataDef(fbb, name, 0, &range));
    } else {
      rodata.push_back(schema::CreateRodataDef(fbb, name, fbb.CreateVector(seg.bytes)));
    }
  }
  auto root = schema::CreateModuleDefDirect(fbb, m.name.c_str(), m.version_major, m.version_minor, &imports,
                                            &exports, &functions, m.omit_bytecode ? nullptr : &bytecode, &strings, m.global_scalar_bytes,
                                            nullptr, m.global_ref_count, &rodata, nullptr, external.size());
  fbb.FinishSizePrefixed(root, schema::ModuleDefIdentifier());
  std::vector<uint8_t> out(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  while (out.size() % bytecode::kExternalAlignment) out.push_back(0);
  out.insert(out.end(), external.begin(), external.end());
  if (m.seal) Seal(out);
  return out;
}

}  // namespace strata::testing
