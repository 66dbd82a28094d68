//===- BytecodeListing.cpp - a module file as text ------------------------===//

#include "compiler/vm/Target/BytecodeListing.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <string>

#include "schemas/bytecode_decoder.h"
#include "strata/schemas/module_generated.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace strata::vm {
namespace {

using bytecode::ReadLE;

llvm::StringRef view(const flatbuffers::String *string) {
  return string ? llvm::StringRef(string->data(), string->size()) : "";
}

std::string registerName(char bank, uint16_t index) {
  return (llvm::Twine(bank) + llvm::Twine(index)).str();
}

/// The shortest text that reads back as `value`.
template <typename T> std::string floatText(T value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, error == std::errc() ? end : buffer);
}

std::string taggedRegisterName(uint16_t tagged) {
  return tagged & bytecode::kRefTag
             ? registerName('r', tagged & ~bytecode::kRefTag)
             : registerName('s', tagged);
}

/// Decodes the instructions of one function.
class FunctionListing {
public:
  FunctionListing(const schema::ModuleDef &module, llvm::ArrayRef<uint8_t> code,
                  llvm::raw_ostream &os)
      : module(module), code(code), os(os) {}

  llvm::Error print(const schema::FunctionDef &function);

private:
  /// Decodes the instruction at `pc` (schemas/bytecode_decoder.h) into its
  /// text, advancing `pc`.
  llvm::Expected<std::string> decode(uint32_t &pc);
  /// The text of operand `i` of `inst`.
  std::string operandText(const bytecode::DecodedInstruction &inst, int i);

  template <typename T, typename Vector>
  std::string nameIn(const Vector *vector, T index, llvm::StringRef what) {
    if (!vector || index >= vector->size())
      return ("<bad " + what + " " + llvm::Twine(index) + ">").str();
    return view(vector->Get(index)->name()).str();
  }

  const schema::ModuleDef &module;
  llvm::ArrayRef<uint8_t> code;
  llvm::raw_ostream &os;
};

std::string FunctionListing::operandText(const bytecode::DecodedInstruction &inst,
                                         int i) {
  const bytecode::DecodedOperand &operand = inst.operands[i];
  const char c = operand.kind;
  // Float immediates print as floats: the rows that take them define an
  // f32 or f64 register first.
  const char firstLetter = inst.info().operands[0];
  switch (c) {
  case 'i':
  case 'l':
  case 'f':
  case 'd':
  case 'r':
  case 'I':
  case 'L':
  case 'F':
  case 'D':
  case 'R':
    return registerName(c == 'r' || c == 'R' ? 'r' : 's',
                        static_cast<uint16_t>(operand.value));
  case '4': {
    uint32_t bits = static_cast<uint32_t>(operand.value);
    if (firstLetter == 'F') {
      float value;
      std::memcpy(&value, &bits, sizeof(value));
      return floatText(value);
    }
    return std::to_string(static_cast<int32_t>(bits));
  }
  case '8': {
    if (firstLetter == 'D') {
      double value;
      std::memcpy(&value, &operand.value, sizeof(value));
      return floatText(value);
    }
    return std::to_string(static_cast<int64_t>(operand.value));
  }
  case 'b':
    return llvm::formatv("^{0:x-4}", operand.value).str();
  case 'x':
  case 'v':
  case 'V': {
    llvm::SmallVector<std::string> items;
    for (uint32_t k = 0; k < operand.value; ++k) {
      if (c != 'x') {
        items.push_back(taggedRegisterName(inst.ListEntry(i, k)));
        continue;
      }
      items.push_back(taggedRegisterName(inst.ListEntry(i, 2 * k)) + " -> " +
                      taggedRegisterName(inst.ListEntry(i, 2 * k + 1)));
    }
    return c == 'x' ? "[" + llvm::join(items, ", ") + "]"
                    : "(" + llvm::join(items, ", ") + ")";
  }
  case 'k':
    return "@" + nameIn(module.functions(), operand.value, "function");
  case 'm':
    if (module.imports() && operand.value < module.imports()->size()) {
      const schema::ImportDef *import = module.imports()->Get(operand.value);
      return ("@" + view(import->module_name()) + "." +
              view(import->function_name()))
          .str();
    }
    return "<bad import " + std::to_string(operand.value) + ">";
  case 'o':
    return "@" + nameIn(module.rodata(), operand.value, "rodata");
  case 'e': {
    // Groups by name, in the order each name first appears.
    llvm::SmallVector<llvm::StringRef> names;
    if (module.executables())
      for (const schema::ExecutableDef *executable : *module.executables())
        if (!llvm::is_contained(names, view(executable->name())))
          names.push_back(view(executable->name()));
    if (operand.value < names.size())
      return ("@" + names[operand.value]).str();
    return "<bad executable " + std::to_string(operand.value) + ">";
  }
  case 'g':
    return "global[" + std::to_string(operand.value) + "]";
  case 'h':
    return "ref_global[" + std::to_string(operand.value) + "]";
  case 's':
    if (module.strings() && operand.value < module.strings()->size()) {
      std::string text;
      llvm::raw_string_ostream quoted(text);
      quoted << '"';
      llvm::printEscapedString(view(module.strings()->Get(operand.value)),
                               quoted);
      quoted << '"';
      return text;
    }
    return "<bad string " + std::to_string(operand.value) + ">";
  }
  return (llvm::Twine("<operand letter '") + llvm::Twine(c) + "'>").str();
}

llvm::Expected<std::string> FunctionListing::decode(uint32_t &pc) {
  bytecode::DecodedInstruction inst;
  switch (bytecode::Decode(code.data(), code.size(), pc, &inst)) {
  case bytecode::DecodeResult::kOk:
    break;
  case bytecode::DecodeResult::kUnknownOpcode:
    return llvm::createStringError("unknown opcode %u at %u", code[pc], pc);
  case bytecode::DecodeResult::kPastEnd:
  case bytecode::DecodeResult::kTruncated:
    return llvm::createStringError(
        "instruction at %u runs past the end of the function", pc);
  }
  pc += inst.size;
  llvm::SmallVector<std::string> results, operands;
  for (int i = 0; i < inst.operand_count; ++i) {
    const char c = inst.operands[i].kind;
    // A call without results has an empty result list; leave it out.
    if (c == 'V' && inst.operands[i].value == 0)
      continue;
    bool isResult = std::isupper(static_cast<unsigned char>(c));
    (isResult ? results : operands).push_back(operandText(inst, i));
  }
  std::string line;
  if (!results.empty())
    line = llvm::join(results, ", ") + " = ";
  line += inst.info().mnemonic;
  if (!operands.empty())
    line += " " + llvm::join(operands, ", ");
  return line;
}

llvm::Error FunctionListing::print(const schema::FunctionDef &function) {
  std::map<uint32_t, llvm::StringRef> locations;
  if (const auto *entries = function.source_locations())
    for (const schema::SourceLocationDef *entry : *entries)
      locations[entry->pc()] = view(entry->location());
  for (uint32_t pc = 0; pc < code.size();) {
    uint32_t start = pc;
    llvm::Expected<std::string> line = decode(pc);
    if (!line)
      return line.takeError();
    os << llvm::formatv("  {0:x-4}  {1}", start, *line);
    if (auto it = locations.find(start); it != locations.end())
      os << "  // " << it->second;
    os << '\n';
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error printBytecodeListing(llvm::ArrayRef<uint8_t> file,
                                 llvm::raw_ostream &os) {
  // The FlatBuffer is the size prefix and the bytes it counts; padding and
  // external data follow.
  if (file.size() < sizeof(uint32_t))
    return llvm::createStringError("not a module file: too short");
  uint64_t flatbufferSize = sizeof(uint32_t) + ReadLE<uint32_t>(file.data());
  flatbuffers::Verifier verifier(
      file.data(), std::min<uint64_t>(flatbufferSize, file.size()));
  if (flatbufferSize > file.size() ||
      !schema::VerifySizePrefixedModuleDefBuffer(verifier))
    return llvm::createStringError("not a valid module file");
  const schema::ModuleDef &module =
      *schema::GetSizePrefixedModuleDef(file.data());

  os << "module @" << view(module.name()) << " version "
     << module.version_major() << "." << module.version_minor() << "\n";
  if (const auto *imports = module.imports())
    for (auto [i, import] : llvm::enumerate(*imports))
      os << "import #" << i << " @" << view(import->module_name()) << "."
         << view(import->function_name()) << " " << view(import->signature())
         << "\n";
  if (const auto *exports = module.exports())
    for (const schema::ExportDef *exportDef : *exports)
      os << "export \"" << view(exportDef->name()) << "\" = function #"
         << exportDef->function_ordinal() << "\n";
  if (const auto *strings = module.strings())
    for (auto [i, string] : llvm::enumerate(*strings)) {
      os << "string #" << i << " \"";
      llvm::printEscapedString(view(string), os);
      os << "\"\n";
    }
  if (const auto *rodata = module.rodata())
    for (auto [i, segment] : llvm::enumerate(*rodata)) {
      os << "rodata #" << i << " @" << view(segment->name()) << ": ";
      if (const auto *bytes = segment->inline_data())
        os << bytes->size() << " bytes inline\n";
      else if (const schema::ExternalRange *range = segment->external())
        os << range->length() << " bytes external at " << range->offset()
           << "\n";
      else
        os << "empty\n";
    }
  os << "globals: " << module.global_scalar_bytes() << " scalar bytes ("
     << (module.global_scalar_init() ? module.global_scalar_init()->size() : 0)
     << " initialized), " << module.global_ref_count() << " refs\n";
  os << "external data: " << module.external_data_length() << " bytes\n";

  const auto *bytecode = module.bytecode();
  if (const auto *functions = module.functions())
    for (auto [i, function] : llvm::enumerate(*functions)) {
      os << "function #" << i << " @" << view(function->name()) << " "
         << view(function->signature()) << ": "
         << function->scalar_register_count() << " scalar, "
         << function->ref_register_count() << " ref registers\n";
      uint64_t end =
          uint64_t{function->bytecode_offset()} + function->bytecode_length();
      if (!bytecode || end > bytecode->size())
        return llvm::createStringError("function #%zu has bytecode outside "
                                       "the module's",
                                       i);
      llvm::ArrayRef<uint8_t> code(bytecode->data() +
                                       function->bytecode_offset(),
                                   function->bytecode_length());
      if (llvm::Error error =
              FunctionListing(module, code, os).print(*function))
        return error;
    }
  return llvm::Error::success();
}

} // namespace strata::vm
