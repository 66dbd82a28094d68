// BytecodeModule: a loaded, verified .smod file.
//
// Loading checks, in order: the integrity record (integrity.h: digests of
// every part, and a signature when a key is trusted), the file identifier,
// the size prefix against the
// file length, the FlatBuffer structure (flatbuffers::Verifier), the format
// version, every range into external data, and then each function's bytecode
// (verifier.h). A module that loads is safe to run: the interpreter does not
// re-check what the verifier proved.
//
// The module never copies its file: it reads the FlatBuffer, the bytecode and
// rodata in place from the bytes it was given, which it keeps alive (a mapped
// file, a vector it owns, or a caller's span with the caller's promise).
//
// Thread safety: immutable after load; share freely.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vm/integrity.h"
#include "vm/module.h"
#include "vm/base/status.h"

namespace strata::schema {
struct ModuleDef;
}

namespace strata::vm {

struct FunctionInfo {
  // Fields the interpreter reads on every call come first.
  const uint8_t* code;
  uint32_t code_length;
  uint16_t scalar_register_count;
  uint16_t ref_register_count;
  // No ref among the arguments / results: calls and returns copy them
  // without looking at register tags.
  bool scalar_args;
  bool scalar_results;
  std::string_view name;
  std::string_view signature;
  std::string_view arg_types;     // signature chars before '_'
  std::string_view result_types;  // after '_'
  // (pc, "file:line:col"), sorted by pc; may be empty.
  std::vector<std::pair<uint32_t, std::string_view>> locations;
  // Source-level types of the arguments and results ("tensor<1x784xf32>",
  // "i32"), when the compiler recorded them; empty otherwise.
  std::vector<std::string_view> source_arg_types;
  std::vector<std::string_view> source_result_types;
  // Transient device memory the compiler planned for one call.
  uint64_t transient_bytes = 0;
};

struct ImportInfo {
  std::string_view module_name;
  std::string_view function_name;
  std::string_view signature;
  std::string_view arg_types;
  std::string_view result_types;
};

struct RodataInfo {
  std::string_view name;
  std::span<const uint8_t> bytes;
};

struct ExecutableInfo {
  std::string_view name;
  std::string_view format;
  std::span<const uint8_t> data;
  std::span<const uint8_t> metadata;
};

// The embedded executables of one name: the variants of one executable, one
// per format (and per CPU feature level) it was compiled for.
struct ExecutableGroup {
  std::string_view name;
  std::vector<uint32_t> variants;  // indices into executables()
};

class BytecodeModule final : public Module {
 public:
  // Maps the file read-only; the mapping lives as long as the module.
  static StatusOr<Ref<BytecodeModule>> LoadFile(const std::string& path, const IntegrityOptions& integrity = {});
  // Uses `bytes` in place; `owner` (may be null) is kept alive for as long
  // as the module is. With a null owner the caller keeps the bytes alive.
  static StatusOr<Ref<BytecodeModule>> LoadBytes(std::span<const uint8_t> bytes, Ref<RefObject> owner = nullptr,
                                                 const IntegrityOptions& integrity = {});
  // Takes the bytes over.
  static StatusOr<Ref<BytecodeModule>> LoadOwned(std::vector<uint8_t> bytes, const IntegrityOptions& integrity = {});

  std::string_view name() const override { return name_; }
  std::vector<ExportedFunction> exports() const override { return exports_; }

  uint16_t version_major() const { return version_major_; }
  uint16_t version_minor() const { return version_minor_; }
  const std::vector<FunctionInfo>& functions() const { return functions_; }
  const std::vector<ImportInfo>& imports() const { return imports_; }
  const std::vector<RodataInfo>& rodata() const { return rodata_; }
  const std::vector<ExecutableInfo>& executables() const { return executables_; }
  // The executables grouped by name, in the order each name first appears:
  // what the operand of const.ref.executable numbers.
  const std::vector<ExecutableGroup>& executable_groups() const { return executable_groups_; }
  const std::vector<std::string_view>& strings() const { return strings_; }
  uint32_t global_scalar_bytes() const { return global_scalar_bytes_; }
  std::span<const uint8_t> global_scalar_init() const { return global_scalar_init_; }
  uint32_t global_ref_count() const { return global_ref_count_; }
  uint64_t file_size() const { return file_.size(); }
  // The whole file, integrity record included.
  std::span<const uint8_t> file_bytes() const { return file_; }

  // "module.function@pc (file:line:col)" for backtraces.
  std::string DescribeLocation(uint32_t function_ordinal, uint32_t pc) const;

 private:
  BytecodeModule(std::span<const uint8_t> file, std::span<const uint8_t> bytes, Ref<RefObject> owner)
      : Module(Kind::kBytecode), file_(file), bytes_(bytes), owner_(std::move(owner)) {}
  Status Parse();

  std::span<const uint8_t> file_;
  std::span<const uint8_t> bytes_;  // the module, without its integrity record
  Ref<RefObject> owner_;
  std::string_view name_;
  uint16_t version_major_ = 0;
  uint16_t version_minor_ = 0;
  std::vector<FunctionInfo> functions_;
  std::vector<ImportInfo> imports_;
  std::vector<ExportedFunction> exports_;
  std::vector<RodataInfo> rodata_;
  std::vector<ExecutableInfo> executables_;
  std::vector<ExecutableGroup> executable_groups_;
  std::vector<std::string_view> strings_;
  uint32_t global_scalar_bytes_ = 0;
  std::span<const uint8_t> global_scalar_init_;
  uint32_t global_ref_count_ = 0;
};

// An embedded executable as a VM value (const.ref.executable): its module,
// kept alive by the ref, and its group there. The VM knows nothing of what
// the bytes are; the hal module prepares them (hal.executable.create).
class EmbeddedExecutable final : public RefObject {
 public:
  static const RefTypeInfo kType;
  EmbeddedExecutable(Ref<BytecodeModule> module, uint32_t group)
      : RefObject(&kType), module_(std::move(module)), group_(group) {}

  const BytecodeModule& module() const { return *module_; }
  std::string_view name() const { return module_->executable_groups()[group_].name; }
  // The variants, each an index into module().executables().
  std::span<const uint32_t> variants() const { return module_->executable_groups()[group_].variants; }

 private:
  Ref<BytecodeModule> module_;
  uint32_t group_;
};

}  // namespace strata::vm
