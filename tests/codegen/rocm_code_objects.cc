// rocm-code-objects MODULE.smod...
// rocm-code-objects --test-kernels
//
// Reads back every code object of every "rocm-hsaco" executable in each
// module (or of the HAL test kernels, tests/hal/kernels/*.cl, which also take
// a 64-bit length per binding after their constants), independently of the compiler that wrote it, and checks it against
// the executable's metadata (schemas/rocm_executable.fbs):
// - with AMD's code-object library (libamd_comgr, Debian's ROCm 5.2): the
//   ISA name, and the kernels of the code object's metadata with their
//   names, argument counts and kernel-argument bytes;
// - with LLVM's object reader (the AMDGPU metadata note, MessagePack): the
//   same, for every code object, including those the installed comgr is too
//   old to read (5.2 reads gfx90a code objects of version 4 only; it reports
//   the others as invalid, which is printed, not failed);
// - the ELF header's ABI version against the code object version.
// Each kernel's explicit arguments (those whose kind is not hidden_*) must
// be the entry point's bindings, check word and constants, and take exactly
// its kernarg_bytes; every entry point must be a kernel and every kernel an
// entry point. Exit status 0 when everything matches, 1 naming the first
// mismatch of each code object otherwise.
#include <amd_comgr.h>

#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <string>
#include <vector>

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"
#include "strata/schemas/rocm_executable_generated.h"
#include "tests/hal/kernels/test_kernels.h"
#include "tests/hal/test_executables.h"
#include "vm/bytecode_module.h"

namespace {

struct Kernel {
  uint32_t explicit_args = 0;
  uint64_t explicit_bytes = 0;
  uint64_t kernarg_segment_size = 0;
};

struct CodeObjectView {
  std::string isa;
  std::map<std::string, Kernel> kernels;
};

// ---- LLVM's reader ----

std::optional<CodeObjectView> ReadWithLLVM(llvm::StringRef bytes, unsigned* abi_version, std::string* error) {
  auto object = llvm::object::ELF64LEObjectFile::create(llvm::MemoryBufferRef(bytes, "code object"));
  if (!object) {
    *error = llvm::toString(object.takeError());
    return std::nullopt;
  }
  const auto& elf = object->getELFFile();
  *abi_version = elf.getHeader().e_ident[llvm::ELF::EI_ABIVERSION];
  auto headers = elf.program_headers();
  if (!headers) {
    *error = llvm::toString(headers.takeError());
    return std::nullopt;
  }
  for (const auto& header : *headers) {
    if (header.p_type != llvm::ELF::PT_NOTE) continue;
    llvm::Error note_error = llvm::Error::success();
    for (const auto& note : elf.notes(header, note_error)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      llvm::msgpack::Document document;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(header.p_align);
      if (!document.readFromBlob(llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()), false)) {
        *error = "the AMDGPU metadata note is not MessagePack";
        return std::nullopt;
      }
      CodeObjectView view;
      auto& root = document.getRoot().getMap();
      view.isa = root["amdhsa.target"].getString().str();
      for (auto& node : root["amdhsa.kernels"].getArray()) {
        auto& kernel = node.getMap();
        Kernel info;
        info.kernarg_segment_size = kernel[".kernarg_segment_size"].getUInt();
        for (auto& arg : kernel[".args"].getArray()) {
          auto& fields = arg.getMap();
          if (fields[".value_kind"].getString().starts_with("hidden_")) continue;
          ++info.explicit_args;
          info.explicit_bytes =
              std::max<uint64_t>(info.explicit_bytes, fields[".offset"].getUInt() + fields[".size"].getUInt());
        }
        view.kernels[kernel[".name"].getString().str()] = info;
      }
      consumeError(std::move(note_error));
      return view;
    }
    if (note_error) {
      *error = llvm::toString(std::move(note_error));
      return std::nullopt;
    }
  }
  *error = "no AMDGPU metadata note";
  return std::nullopt;
}

// ---- comgr ----

struct Comgr {
  amd_comgr_data_t data{};
  bool created = false;
  std::vector<amd_comgr_metadata_node_t> nodes;
  ~Comgr() {
    for (amd_comgr_metadata_node_t node : nodes) amd_comgr_destroy_metadata(node);
    if (created) amd_comgr_release_data(data);
  }
  amd_comgr_metadata_node_t Keep(amd_comgr_metadata_node_t node) {
    nodes.push_back(node);
    return node;
  }
  // The values of `keys` in map `node`, in order; false when one is absent.
  bool Lookup(amd_comgr_metadata_node_t node, std::initializer_list<const char*> keys,
              std::vector<amd_comgr_metadata_node_t>* values) {
    values->clear();
    for (const char* key : keys) {
      amd_comgr_metadata_node_t value;
      if (amd_comgr_metadata_lookup(node, key, &value) != AMD_COMGR_STATUS_SUCCESS) return false;
      values->push_back(Keep(value));
    }
    return true;
  }
  // The elements of list `node`.
  std::vector<amd_comgr_metadata_node_t> Elements(amd_comgr_metadata_node_t node) {
    size_t count = 0;
    amd_comgr_get_metadata_list_size(node, &count);
    std::vector<amd_comgr_metadata_node_t> elements(count);
    for (size_t i = 0; i < count; ++i) {
      amd_comgr_index_list_metadata(node, i, &elements[i]);
      Keep(elements[i]);
    }
    return elements;
  }
};

std::string StatusText(amd_comgr_status_t status) {
  const char* text = nullptr;
  amd_comgr_status_string(status, &text);
  return text ? text : "unknown status";
}

std::string MetadataString(amd_comgr_metadata_node_t node) {
  size_t size = 0;
  if (amd_comgr_get_metadata_string(node, &size, nullptr) != AMD_COMGR_STATUS_SUCCESS) return {};
  std::string text(size, '\0');
  amd_comgr_get_metadata_string(node, &size, text.data());
  if (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

// nullopt with `error` set when comgr cannot read the code object.
std::optional<CodeObjectView> ReadWithComgr(const std::string& bytes, std::string* error) {
  Comgr comgr;
  amd_comgr_status_t status = amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &comgr.data);
  if (status != AMD_COMGR_STATUS_SUCCESS) {
    *error = "amd_comgr_create_data: " + StatusText(status);
    return std::nullopt;
  }
  comgr.created = true;
  amd_comgr_set_data(comgr.data, bytes.size(), bytes.data());
  CodeObjectView view;
  size_t size = 0;
  status = amd_comgr_get_data_isa_name(comgr.data, &size, nullptr);
  if (status != AMD_COMGR_STATUS_SUCCESS) {
    *error = "amd_comgr_get_data_isa_name: " + StatusText(status);
    return std::nullopt;
  }
  view.isa.assign(size, '\0');
  amd_comgr_get_data_isa_name(comgr.data, &size, view.isa.data());
  if (!view.isa.empty() && view.isa.back() == '\0') view.isa.pop_back();
  amd_comgr_metadata_node_t root;
  status = amd_comgr_get_data_metadata(comgr.data, &root);
  if (status != AMD_COMGR_STATUS_SUCCESS) {
    *error = "amd_comgr_get_data_metadata: " + StatusText(status);
    return std::nullopt;
  }
  comgr.Keep(root);
  amd_comgr_metadata_node_t kernels;
  if (amd_comgr_metadata_lookup(root, "amdhsa.kernels", &kernels) != AMD_COMGR_STATUS_SUCCESS) {
    *error = "comgr: no amdhsa.kernels in the metadata";
    return std::nullopt;
  }
  comgr.Keep(kernels);
  for (amd_comgr_metadata_node_t kernel : comgr.Elements(kernels)) {
    std::vector<amd_comgr_metadata_node_t> fields;
    if (!comgr.Lookup(kernel, {".name", ".kernarg_segment_size", ".args"}, &fields)) {
      *error = "comgr: a kernel without .name, .kernarg_segment_size or .args";
      return std::nullopt;
    }
    const std::string name = MetadataString(fields[0]);
    Kernel info;
    info.kernarg_segment_size = std::stoull(MetadataString(fields[1]));
    for (amd_comgr_metadata_node_t arg : comgr.Elements(fields[2])) {
      if (!comgr.Lookup(arg, {".value_kind", ".offset", ".size"}, &fields)) {
        *error = "comgr: an argument without .value_kind, .offset or .size";
        return std::nullopt;
      }
      if (MetadataString(fields[0]).rfind("hidden_", 0) == 0) continue;
      ++info.explicit_args;
      info.explicit_bytes = std::max<uint64_t>(
          info.explicit_bytes, std::stoull(MetadataString(fields[1])) + std::stoull(MetadataString(fields[2])));
    }
    view.kernels[name] = info;
  }
  return view;
}

// ---- the comparison ----

// Empty when `view` matches the executable's metadata.
// With `lengths`, each kernel also takes a 64-bit length per binding after
// its constants (the test kernels, tests/hal/kernels/*.cl).
std::string Compare(const CodeObjectView& view, const strata::schema::rocm::RocmExecutableDef& def,
                    const strata::schema::rocm::CodeObjectDef& object, bool lengths) {
  const std::string isa = "amdgcn-amd-amdhsa--" + object.arch()->str();
  if (view.isa != isa && view.isa.rfind(isa + ":", 0) != 0) {
    return "ISA " + view.isa + ", expected " + isa;
  }
  std::set<std::string> entries;
  for (const auto* entry : *def.entry_points()) {
    const std::string name = entry->name()->str();
    entries.insert(name);
    auto it = view.kernels.find(name);
    if (it == view.kernels.end()) return "entry point " + name + " is not a kernel of the code object";
    const uint32_t args = entry->binding_count() * (lengths ? 2 : 1) + (entry->check_messages() ? 1 : 0) +
                          entry->constant_count();
    if (it->second.explicit_args != args) {
      return name + ": " + std::to_string(it->second.explicit_args) + " explicit arguments, the metadata says " +
             std::to_string(args);
    }
    if (it->second.explicit_bytes != entry->kernarg_bytes() ||
        it->second.kernarg_segment_size < entry->kernarg_bytes()) {
      return name + ": " + std::to_string(it->second.explicit_bytes) + " bytes of explicit arguments (" +
             std::to_string(it->second.kernarg_segment_size) + " in all), the metadata says " +
             std::to_string(entry->kernarg_bytes());
    }
  }
  for (const auto& [name, kernel] : view.kernels) {
    if (!entries.count(name)) return "kernel " + name + " is no entry point of the metadata";
  }
  return {};
}

struct Counts {
  int failures = 0, objects = 0, comgr_read = 0;
};

// Checks every code object of one rocm-hsaco executable (`where` names it).
void CheckExecutable(const std::string& where, std::span<const uint8_t> metadata, std::span<const uint8_t> data,
                     bool lengths, Counts& counts) {
  flatbuffers::Verifier verifier(metadata.data(), metadata.size());
  if (!strata::schema::rocm::VerifyRocmExecutableDefBuffer(verifier)) {
    std::fprintf(stderr, "%s: the metadata is not a RocmExecutableDef\n", where.c_str());
    ++counts.failures;
    return;
  }
  const auto* def = strata::schema::rocm::GetRocmExecutableDef(metadata.data());
  for (const auto* object : *def->code_objects()) {
    ++counts.objects;
    const std::string what = where + ": " + object->arch()->str() + " (code object v" +
                             std::to_string(object->code_object_version()) + ")";
    if (object->offset() > data.size() || object->size() > data.size() - object->offset()) {
      std::fprintf(stderr, "%s: lies outside the executable's data\n", what.c_str());
      ++counts.failures;
      continue;
    }
    const std::string bytes(reinterpret_cast<const char*>(data.data()) + object->offset(), object->size());
    std::string error;
    unsigned abi_version = 0;
    std::optional<CodeObjectView> llvm_view = ReadWithLLVM(bytes, &abi_version, &error);
    if (!llvm_view) {
      std::fprintf(stderr, "%s: LLVM cannot read it: %s\n", what.c_str(), error.c_str());
      ++counts.failures;
      continue;
    }
    std::string mismatch = Compare(*llvm_view, *def, *object, lengths);
    if (mismatch.empty() && abi_version + 2 != object->code_object_version()) {
      mismatch = "ELF ABI version " + std::to_string(abi_version) + ", expected " +
                 std::to_string(object->code_object_version() - 2);
    }
    if (!mismatch.empty()) {
      std::fprintf(stderr, "%s: LLVM reads %s\n", what.c_str(), mismatch.c_str());
      ++counts.failures;
      continue;
    }
    std::optional<CodeObjectView> comgr_view = ReadWithComgr(bytes, &error);
    if (!comgr_view) {
      std::printf("%s: matches (LLVM; comgr cannot read it: %s)\n", what.c_str(), error.c_str());
      continue;
    }
    mismatch = Compare(*comgr_view, *def, *object, lengths);
    if (!mismatch.empty()) {
      std::fprintf(stderr, "%s: comgr reads %s\n", what.c_str(), mismatch.c_str());
      ++counts.failures;
      continue;
    }
    ++counts.comgr_read;
    std::printf("%s: matches (LLVM and comgr: %s, %zu kernels)\n", what.c_str(), comgr_view->isa.c_str(),
                comgr_view->kernels.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rocm-code-objects MODULE.smod... | rocm-code-objects --test-kernels\n");
    return 2;
  }
  Counts counts;
  if (std::string_view(argv[1]) == "--test-kernels") {
    // The HAL test kernels' code objects, with the metadata the conformance
    // suite prepares them with.
    int kernels = 0;
    for (const strata::testing::TestKernel& kernel : strata::testing::TestKernels()) {
      if (kernel.rocm.empty()) continue;
      ++kernels;
      CheckExecutable(std::string("test kernel ") + kernel.name,
                      strata::testing::RocmMetadata(strata::testing::RocmTestKernel(kernel.name)), kernel.rocm,
                      /*lengths=*/true, counts);
    }
    if (kernels == 0) {
      std::fprintf(stderr, "no test kernel has ROCm code objects (a build without the ROCm driver)\n");
      return 1;
    }
  } else {
    for (int a = 1; a < argc; ++a) {
      auto module = strata::vm::BytecodeModule::LoadFile(argv[a]);
      if (!module.ok()) {
        std::fprintf(stderr, "%s: %s\n", argv[a], module.status().ToString().c_str());
        ++counts.failures;
        continue;
      }
      for (const strata::vm::ExecutableInfo& exe : (*module)->executables()) {
        if (exe.format != "rocm-hsaco") continue;
        CheckExecutable(std::string(argv[a]) + ": executable '" + std::string(exe.name) + "'", exe.metadata,
                        exe.data, /*lengths=*/false, counts);
      }
    }
  }
  std::printf("%d code objects checked, %d also by comgr, %d failed\n", counts.objects, counts.comgr_read,
              counts.failures);
  return counts.failures ? 1 : 0;
}
