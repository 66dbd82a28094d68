#include "vm/integrity.h"

#include <dlfcn.h>

#include <string>

#include "schemas/integrity.h"
#include "strata/schemas/module_generated.h"

namespace strata::vm {
namespace {

// The libsodium functions a signature check needs, opened at run time so
// that a runtime which never verifies signatures does not depend on it.
struct Sodium {
  int (*init)() = nullptr;
  int (*generichash)(unsigned char*, size_t, const unsigned char*, unsigned long long, const unsigned char*,
                     size_t) = nullptr;
  int (*verify_detached)(const unsigned char*, const unsigned char*, unsigned long long,
                         const unsigned char*) = nullptr;
  const char* error = nullptr;  // why it cannot be used, or null
};

Sodium LoadSodium() {
  Sodium sodium;
  void* library = nullptr;
  for (const char* name : {"libsodium.so.23", "libsodium.so.26", "libsodium.so"}) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library) break;
  }
  if (!library) {
    sodium.error = "libsodium.so.23 cannot be opened (install libsodium23); it checks module signatures";
    return sodium;
  }
  sodium.init = reinterpret_cast<decltype(sodium.init)>(dlsym(library, "sodium_init"));
  sodium.generichash = reinterpret_cast<decltype(sodium.generichash)>(dlsym(library, "crypto_generichash"));
  sodium.verify_detached =
      reinterpret_cast<decltype(sodium.verify_detached)>(dlsym(library, "crypto_sign_verify_detached"));
  if (!sodium.init || !sodium.generichash || !sodium.verify_detached) {
    sodium.error = "libsodium lacks sodium_init, crypto_generichash or crypto_sign_verify_detached";
  } else if (sodium.init() < 0) {
    sodium.error = "libsodium failed to initialize";
  }
  return sodium;
}

// Opened once, on the first signature check (a thread-safe static).
const Sodium& OpenSodium() {
  static const Sodium sodium = LoadSodium();
  return sodium;
}

// Names a part for a message, from the module description when its own
// digest holds (so its names can be trusted).
std::string NamePart(std::span<const uint8_t> module, const integrity::Record& record, const integrity::Part& part) {
  std::string generic = integrity::DescribePart(part);
  if (part.kind != integrity::PartKind::kRodata && part.kind != integrity::PartKind::kExecutable) return generic;
  const integrity::Part& description = record.parts.front();
  if (description.kind != integrity::PartKind::kDescription ||
      integrity::Hash(module.subspan(description.offset, description.length)) != description.digest) {
    return generic;
  }
  uint32_t fb_size = bytecode::ReadLE<uint32_t>(module.data());
  if (module.size() < 12 || fb_size > module.size() - 4) return generic;
  flatbuffers::Verifier verifier(module.data(), uint64_t{fb_size} + 4);
  if (!schema::VerifySizePrefixedModuleDefBuffer(verifier)) return generic;
  const schema::ModuleDef* def = schema::GetSizePrefixedModuleDef(module.data());
  if (part.kind == integrity::PartKind::kRodata) {
    if (def->rodata() && part.index < def->rodata()->size() && def->rodata()->Get(part.index)->name()) {
      return StrCat("rodata '", def->rodata()->Get(part.index)->name()->str(), "'");
    }
    return generic;
  }
  if (def->executables() && part.index < def->executables()->size()) {
    const schema::ExecutableDef* exe = def->executables()->Get(part.index);
    return StrCat("executable '", exe->name() ? exe->name()->str() : "", "' (",
                  exe->format() ? exe->format()->str() : "", ")");
  }
  return generic;
}

}  // namespace

IntegrityInfo DescribeIntegrity(std::span<const uint8_t> file) {
  integrity::Record record;
  std::string why;
  IntegrityInfo info;
  if (integrity::ParseRecord(file, &record, &why) != integrity::ParseResult::kOk) return info;
  info.present = true;
  info.is_signed = (record.flags & integrity::kSigned) != 0;
  info.part_count = static_cast<uint32_t>(record.parts.size());
  return info;
}

StatusOr<std::span<const uint8_t>> CheckIntegrity(std::span<const uint8_t> file, const IntegrityOptions& options) {
  integrity::Record record;
  std::string why;
  const bool required = options.verify || !options.trusted_public_key.empty();
  switch (integrity::ParseRecord(file, &record, &why)) {
    case integrity::ParseResult::kOk:
      break;
    case integrity::ParseResult::kNoRecord:
      if (!required) return file;
      // Not a module at all: the loader's identifier check says so better.
      if (file.size() < 12 || !flatbuffers::BufferHasIdentifier(file.data(), schema::ModuleDefIdentifier(),
                                                                /*size_prefixed=*/true)) {
        return file;
      }
      return DataLossError("the module has no integrity record (its last 8 bytes are not 'SMODSUM1'): it is "
                           "truncated, damaged at its end, or was not written by compile-module");
    case integrity::ParseResult::kMalformed:
      if (!required) return file;
      return DataLossError("the module's integrity record is damaged: ", why);
  }
  std::span<const uint8_t> module = file.first(record.module_length);
  if (options.verify && integrity::Hash(record.digested_bytes) != record.file_digest) {
    for (const integrity::Part& part : record.parts) {
      integrity::Digest actual = integrity::Hash(module.subspan(part.offset, part.length));
      if (actual != part.digest) {
        return DataLossError("the module is damaged: ", NamePart(module, record, part), " (bytes ", part.offset,
                             " to ", part.offset + part.length, ") has digest ", actual.Hex(),
                             ", the module records ", part.digest.Hex());
      }
    }
    return DataLossError("the module's integrity record is damaged: its parts match their digests but the file "
                         "digest differs");
  }
  if (!options.trusted_public_key.empty()) {
    if (options.trusted_public_key.size() != integrity::kPublicKeyBytes) {
      return InvalidArgumentError("a trusted public key has ", integrity::kPublicKeyBytes, " bytes, got ",
                                  options.trusted_public_key.size());
    }
    if (!(record.flags & integrity::kSigned)) {
      return PermissionDeniedError("the module is not signed, and a trusted key requires a signature");
    }
    const Sodium& sodium = OpenSodium();
    if (sodium.error) return UnavailableError("cannot check the module's signature: ", sodium.error);
    uint8_t hash[integrity::kSignedHashBytes];
    sodium.generichash(hash, sizeof(hash), record.signed_bytes.data(), record.signed_bytes.size(), nullptr, 0);
    if (sodium.verify_detached(record.signature.data(), hash, sizeof(hash), options.trusted_public_key.data()) !=
        0) {
      return PermissionDeniedError("the module's signature does not verify with the trusted key: it was signed by "
                                   "another key or changed after signing");
    }
  }
  return module;
}

}  // namespace strata::vm
