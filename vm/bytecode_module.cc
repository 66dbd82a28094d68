#include "vm/bytecode_module.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "schemas/bytecode.h"
#include "strata/schemas/module_generated.h"
#include "vm/verifier.h"

namespace strata::vm {

const RefTypeInfo EmbeddedExecutable::kType = {"vm.executable"};
namespace {

// Keeps a read-only file mapping alive.
class MappedFile final : public RefObject {
 public:
  static const RefTypeInfo kType;
  MappedFile(void* data, size_t size) : RefObject(&kType), data_(data), size_(size) {}
  ~MappedFile() override {
    if (data_) munmap(data_, size_);
  }
  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(data_), size_}; }

 private:
  void* data_;
  size_t size_;
};
const RefTypeInfo MappedFile::kType = {"vm.mapped_file"};

// Keeps a vector of bytes alive.
class OwnedBytes final : public RefObject {
 public:
  static const RefTypeInfo kType;
  explicit OwnedBytes(std::vector<uint8_t> bytes) : RefObject(&kType), bytes_(std::move(bytes)) {}
  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};
const RefTypeInfo OwnedBytes::kType = {"vm.owned_bytes"};

std::string_view View(const flatbuffers::String* s) {
  return s ? std::string_view(s->c_str(), s->size()) : std::string_view();
}

}  // namespace

StatusOr<Ref<BytecodeModule>> BytecodeModule::LoadFile(const std::string& path, const IntegrityOptions& integrity) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return NotFoundError("cannot open module file '", path, "': ", std::strerror(errno));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return InvalidArgumentError("module path '", path, "' is not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      int err = errno;
      close(fd);
      return InternalError("cannot map module file '", path, "': ", std::strerror(err));
    }
  }
  close(fd);
  auto mapped = MakeRef<MappedFile>(data, size);
  std::span<const uint8_t> bytes = mapped->bytes();
  auto module = LoadBytes(bytes, std::move(mapped), integrity);
  if (!module.ok()) {
    Status status = std::move(module).status();
    status.Annotate("module '", path, "': ");
    return status;
  }
  return module;
}

StatusOr<Ref<BytecodeModule>> BytecodeModule::LoadOwned(std::vector<uint8_t> bytes,
                                                         const IntegrityOptions& integrity) {
  auto owned = MakeRef<OwnedBytes>(std::move(bytes));
  std::span<const uint8_t> span = owned->bytes();
  return LoadBytes(span, std::move(owned), integrity);
}

StatusOr<Ref<BytecodeModule>> BytecodeModule::LoadBytes(std::span<const uint8_t> bytes, Ref<RefObject> owner,
                                                         const IntegrityOptions& integrity) {
  STRATA_ASSIGN_OR_RETURN(std::span<const uint8_t> checked, CheckIntegrity(bytes, integrity));
  auto module = Ref<BytecodeModule>::Adopt(new BytecodeModule(bytes, checked, std::move(owner)));
  STRATA_RETURN_IF_ERROR(module->Parse());
  return module;
}

Status BytecodeModule::Parse() {
  const size_t file_size = bytes_.size();
  // Size prefix (4) + root offset (4) + identifier (4).
  if (file_size < 12) {
    return DataLossError("file is ", file_size,
                         " bytes, too short to be a Strata module (at least 12 bytes)");
  }
  if (!flatbuffers::BufferHasIdentifier(bytes_.data(), schema::ModuleDefIdentifier(),
                                        /*size_prefixed=*/true)) {
    std::string found;
    for (int i = 8; i < 12; ++i) {
      char c = static_cast<char>(bytes_[i]);
      found += (c >= 32 && c < 127) ? std::string(1, c) : StrCat("\\x", Hex(bytes_[i]));
    }
    return InvalidArgumentError("not a Strata module: file identifier is '", found, "', expected '",
                                schema::ModuleDefIdentifier(), "'");
  }
  uint32_t fb_size = bytecode::ReadLE<uint32_t>(bytes_.data());
  if (fb_size > file_size - 4) {
    return DataLossError("truncated module: header declares ", uint64_t{fb_size} + 4,
                         " bytes of module description, file has ", file_size);
  }
  flatbuffers::Verifier verifier(bytes_.data(), uint64_t{fb_size} + 4);
  if (!schema::VerifySizePrefixedModuleDefBuffer(verifier)) {
    return DataLossError("corrupt module: the module description failed FlatBuffer verification");
  }
  const schema::ModuleDef* def = schema::GetSizePrefixedModuleDef(bytes_.data());

  version_major_ = def->version_major();
  version_minor_ = def->version_minor();
  if (version_major_ > bytecode::kVersionMajor) {
    return IncompatibleError("module format version ", version_major_, ".", version_minor_,
                             " is newer than this runtime supports (", bytecode::kVersionMajor, ".",
                             bytecode::kVersionMinor,
                             "); recompile the module with a matching compiler or update the runtime");
  }
  name_ = View(def->name());

  // External data: right after the FlatBuffer, at the next 64-byte boundary.
  uint64_t external_base = (uint64_t{fb_size} + 4 + bytecode::kExternalAlignment - 1) &
                           ~(bytecode::kExternalAlignment - 1);
  uint64_t external_length = def->external_data_length();
  if (external_length > 0 &&
      (external_base > file_size || external_length > file_size - external_base)) {
    return DataLossError("truncated module: external data needs ", external_length,
                         " bytes at offset ", external_base, ", file has ", file_size, " bytes");
  }
  auto external = [&](const schema::ExternalRange* range, const char* what, std::string_view name,
                      std::span<const uint8_t>* out) -> Status {
    if (range->offset() > external_length || range->length() > external_length - range->offset()) {
      return DataLossError(what, " '", name, "' spans external bytes [", range->offset(), ", ",
                           range->offset() + range->length(), ") but the module has only ",
                           external_length, " bytes of external data");
    }
    *out = bytes_.subspan(external_base + range->offset(), range->length());
    return OkStatus();
  };

  if (const auto* strings = def->strings()) {
    for (const auto* s : *strings) strings_.push_back(View(s));
  }

  const auto* bytecode = def->bytecode();
  const uint32_t bytecode_size = bytecode ? bytecode->size() : 0;
  if (const auto* functions = def->functions()) {
    if (functions->size() > 0xFFFF) {
      return InvalidArgumentError("module has ", functions->size(), " functions, at most 65535 allowed");
    }
    for (uint32_t i = 0; i < functions->size(); ++i) {
      const schema::FunctionDef* fn = functions->Get(i);
      FunctionInfo info;
      info.name = View(fn->name());
      info.signature = View(fn->signature());
      if (!SplitSignature(info.signature, &info.arg_types, &info.result_types)) {
        return InvalidArgumentError("function ", i, " ('", info.name, "') has a malformed signature '",
                                    info.signature, "'");
      }
      uint64_t end = uint64_t{fn->bytecode_offset()} + fn->bytecode_length();
      if (end > bytecode_size) {
        return DataLossError("function '", info.name, "' bytecode [", fn->bytecode_offset(), ", ", end,
                             ") is past the end of the module's ", bytecode_size, " bytes of bytecode");
      }
      info.scalar_args = info.arg_types.find('r') == std::string_view::npos;
      info.scalar_results = info.result_types.find('r') == std::string_view::npos;
      // A module without bytecode can still declare (empty) functions; the
      // verifier rejects those.
      info.code = bytecode ? bytecode->data() + fn->bytecode_offset() : nullptr;
      info.code_length = fn->bytecode_length();
      info.scalar_register_count = fn->scalar_register_count();
      info.ref_register_count = fn->ref_register_count();
      if (info.scalar_register_count > bytecode::kMaxRegistersPerBank ||
          info.ref_register_count > bytecode::kMaxRegistersPerBank) {
        return InvalidArgumentError("function '", info.name, "' declares ", info.scalar_register_count,
                                    " scalar and ", info.ref_register_count,
                                    " ref registers; each bank holds at most ",
                                    bytecode::kMaxRegistersPerBank);
      }
      if (const auto* locs = fn->source_locations()) {
        for (const auto* loc : *locs) {
          if (!info.locations.empty() && loc->pc() < info.locations.back().first) {
            return InvalidArgumentError("function '", info.name, "' lists source location ", info.locations.size(),
                                        " at pc ", loc->pc(), " after one at pc ", info.locations.back().first,
                                        "; locations must be in pc order");
          }
          info.locations.emplace_back(loc->pc(), View(loc->location()));
        }
      }
      if (const auto* types = fn->argument_types()) {
        for (const auto* t : *types) info.source_arg_types.push_back(View(t));
      }
      if (const auto* types = fn->result_types()) {
        for (const auto* t : *types) info.source_result_types.push_back(View(t));
      }
      info.transient_bytes = fn->transient_bytes();
      functions_.push_back(std::move(info));
    }
  }

  if (const auto* imports = def->imports()) {
    if (imports->size() > 0xFFFF) {
      return InvalidArgumentError("module has ", imports->size(), " imports, at most 65535 allowed");
    }
    for (const auto* imp : *imports) {
      ImportInfo info{View(imp->module_name()), View(imp->function_name()), View(imp->signature()), {}, {}};
      if (!SplitSignature(info.signature, &info.arg_types, &info.result_types)) {
        return InvalidArgumentError("import '", info.module_name, ".", info.function_name,
                                    "' has a malformed signature '", info.signature, "'");
      }
      imports_.push_back(info);
    }
  }

  if (const auto* exports = def->exports()) {
    for (const auto* exp : *exports) {
      if (exp->function_ordinal() >= functions_.size()) {
        return InvalidArgumentError("export '", View(exp->name()), "' names function ",
                                    exp->function_ordinal(), " but the module has ", functions_.size());
      }
      exports_.push_back({View(exp->name()), functions_[exp->function_ordinal()].signature,
                          exp->function_ordinal()});
    }
  }

  if (const auto* rodata = def->rodata()) {
    for (const auto* seg : *rodata) {
      RodataInfo info{View(seg->name()), {}};
      if (seg->inline_data() && seg->external()) {
        return InvalidArgumentError("rodata '", info.name, "' has both inline and external data");
      }
      if (seg->inline_data()) {
        info.bytes = {seg->inline_data()->data(), seg->inline_data()->size()};
      } else if (seg->external()) {
        STRATA_RETURN_IF_ERROR(external(seg->external(), "rodata", info.name, &info.bytes));
      }
      rodata_.push_back(info);
    }
  }

  if (const auto* executables = def->executables()) {
    for (const auto* exe : *executables) {
      ExecutableInfo info{View(exe->name()), View(exe->format()), {}, {}};
      if (!exe->data()) {
        return InvalidArgumentError("executable '", info.name, "' (", info.format, ") has no data");
      }
      STRATA_RETURN_IF_ERROR(external(exe->data(), "executable", info.name, &info.data));
      if (exe->metadata()) info.metadata = {exe->metadata()->data(), exe->metadata()->size()};
      auto group = std::find_if(executable_groups_.begin(), executable_groups_.end(),
                                [&](const ExecutableGroup& g) { return g.name == info.name; });
      if (group == executable_groups_.end()) group = executable_groups_.insert(group, {info.name, {}});
      group->variants.push_back(static_cast<uint32_t>(executables_.size()));
      executables_.push_back(info);
    }
  }

  global_scalar_bytes_ = def->global_scalar_bytes();
  global_ref_count_ = def->global_ref_count();
  if (const auto* init = def->global_scalar_init()) {
    if (init->size() > global_scalar_bytes_) {
      return InvalidArgumentError("global initializer has ", init->size(), " bytes but globals take ",
                                  global_scalar_bytes_);
    }
    global_scalar_init_ = {init->data(), init->size()};
  }
  constexpr uint32_t kMaxGlobalBytes = 1u << 24;
  if (global_scalar_bytes_ > kMaxGlobalBytes || global_ref_count_ > kMaxGlobalBytes) {
    return InvalidArgumentError("module declares ", global_scalar_bytes_, " bytes of globals and ",
                                global_ref_count_, " ref globals; the limit is ", kMaxGlobalBytes);
  }

  for (uint32_t i = 0; i < functions_.size(); ++i) {
    STRATA_RETURN_IF_ERROR(VerifyFunctionBytecode(*this, i));
  }
  return OkStatus();
}

std::string BytecodeModule::DescribeLocation(uint32_t function_ordinal, uint32_t pc) const {
  const FunctionInfo& fn = functions_[function_ordinal];
  std::string out = StrCat(name_, ".", fn.name, "@", pc);
  // The location of the last recorded instruction at or before pc.
  auto it = std::upper_bound(fn.locations.begin(), fn.locations.end(), pc,
                             [](uint32_t value, const auto& entry) { return value < entry.first; });
  if (it != fn.locations.begin()) out += StrCat(" (", std::prev(it)->second, ")");
  return out;
}

}  // namespace strata::vm
