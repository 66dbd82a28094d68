// The integrity record at the end of a module file: a digest of every part of
// the module (its description -- header, bytecode, metadata -- each rodata
// segment and each executable), a digest of the whole file, and optionally an
// Ed25519 signature. compile-module writes it; the runtime checks it before
// it reads anything else. Header-only, shared by the compiler and the
// runtime; the digest is XXH3-128 (xxHash, compiled in from the header).
//
//   [module: size-prefixed FlatBuffer, padding, external data]   M bytes
//   [part table: P entries of 40 bytes]
//       u64 offset, u64 length   a range of [0, M); the parts cover it
//       u32 kind, u32 index      what it is (PartKind) and its ordinal
//       u8 digest[16]            XXH3-128 of the range
//   [signature: 64 bytes]        when flags & kSigned
//   [footer: 32 bytes]
//       u32 part_count, u32 flags
//       u8 digest[16]            XXH3-128 of every byte of the file before it
//       u8 magic[8]              "SMODSUM1"
//
// All integers are little-endian. The file digest makes the check one pass
// over the file; the part digests are read only when it fails, to name the
// part that differs. The signature is Ed25519 over the BLAKE2b-512 hash of the
// module and the part table (libsodium's crypto_generichash and
// crypto_sign_detached): the digests guard against damage, the signature
// against a module someone else built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "schemas/bytecode.h"

namespace strata::integrity {

inline constexpr char kMagic[8] = {'S', 'M', 'O', 'D', 'S', 'U', 'M', '1'};
inline constexpr size_t kFooterBytes = 32;
inline constexpr size_t kPartBytes = 40;
inline constexpr size_t kSignatureBytes = 64;
inline constexpr size_t kPublicKeyBytes = 32;
inline constexpr size_t kSecretKeyBytes = 64;
inline constexpr size_t kSignedHashBytes = 64;  // BLAKE2b-512
inline constexpr uint32_t kSigned = 1;

enum class PartKind : uint32_t {
  kDescription = 0,  // the FlatBuffer (header, bytecode, metadata) and its padding
  kRodata = 1,       // an external rodata segment (weights), by rodata ordinal
  kExecutable = 2,   // an embedded executable, by executable ordinal
  kPadding = 3,      // alignment bytes between external segments
};

struct Digest {
  uint8_t bytes[16] = {};
  bool operator==(const Digest& other) const { return std::memcmp(bytes, other.bytes, 16) == 0; }
  bool operator!=(const Digest& other) const { return !(*this == other); }
  std::string Hex() const;
};

inline Digest Hash(std::span<const uint8_t> bytes) {
  XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, h);
  Digest digest;
  std::memcpy(digest.bytes, canonical.digest, 16);
  return digest;
}

struct Part {
  uint64_t offset = 0;
  uint64_t length = 0;
  PartKind kind = PartKind::kDescription;
  uint32_t index = 0;
  Digest digest;
};

// What the end of a sealed file says. Spans point into the file.
struct Record {
  uint64_t module_length = 0;
  std::vector<Part> parts;
  uint32_t flags = 0;
  std::span<const uint8_t> signature;  // empty unless flags & kSigned
  Digest file_digest;
  // The bytes the signature covers: the module and the part table.
  std::span<const uint8_t> signed_bytes;
  // The bytes the file digest covers: everything before it.
  std::span<const uint8_t> digested_bytes;
};

enum class ParseResult { kOk, kNoRecord, kMalformed };

// Reads the record at the end of `file`. kNoRecord: the file does not end in
// the magic. kMalformed: it does, but the counts do not fit the file or the
// parts do not tile [0, module_length) in order; `why` says how.
inline ParseResult ParseRecord(std::span<const uint8_t> file, Record* out, std::string* why) {
  if (file.size() < kFooterBytes || std::memcmp(file.data() + file.size() - 8, kMagic, 8) != 0) {
    return ParseResult::kNoRecord;
  }
  const uint8_t* footer = file.data() + file.size() - kFooterBytes;
  uint32_t count = bytecode::ReadLE<uint32_t>(footer);
  uint32_t flags = bytecode::ReadLE<uint32_t>(footer + 4);
  if (flags & ~kSigned) {
    *why = "unknown flags 0x" + std::to_string(flags);
    return ParseResult::kMalformed;
  }
  uint64_t trailer = kFooterBytes + uint64_t{count} * kPartBytes + ((flags & kSigned) ? kSignatureBytes : 0);
  if (count == 0 || trailer > file.size()) {
    *why = std::to_string(count) + " parts do not fit in a file of " + std::to_string(file.size()) + " bytes";
    return ParseResult::kMalformed;
  }
  Record record;
  record.module_length = file.size() - trailer;
  record.flags = flags;
  std::memcpy(record.file_digest.bytes, footer + 8, 16);
  const uint8_t* table = file.data() + record.module_length;
  uint64_t expected_offset = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* p = table + uint64_t{i} * kPartBytes;
    Part part;
    part.offset = bytecode::ReadLE<uint64_t>(p);
    part.length = bytecode::ReadLE<uint64_t>(p + 8);
    uint32_t kind = bytecode::ReadLE<uint32_t>(p + 16);
    part.index = bytecode::ReadLE<uint32_t>(p + 20);
    std::memcpy(part.digest.bytes, p + 24, 16);
    if (kind > static_cast<uint32_t>(PartKind::kPadding) || part.offset != expected_offset ||
        part.length > record.module_length - part.offset) {
      *why = "part " + std::to_string(i) + " is malformed";
      return ParseResult::kMalformed;
    }
    part.kind = static_cast<PartKind>(kind);
    expected_offset = part.offset + part.length;
    record.parts.push_back(part);
  }
  if (expected_offset != record.module_length) {
    *why = "the parts cover " + std::to_string(expected_offset) + " of the module's " +
           std::to_string(record.module_length) + " bytes";
    return ParseResult::kMalformed;
  }
  uint64_t signed_length = record.module_length + uint64_t{count} * kPartBytes;
  record.signed_bytes = file.first(signed_length);
  if (flags & kSigned) record.signature = file.subspan(signed_length, kSignatureBytes);
  record.digested_bytes = file.first(file.size() - 24);
  *out = std::move(record);
  return ParseResult::kOk;
}

// Seals `file` (a module of file.size() bytes whose parts are `parts`,
// offsets and lengths set, tiling the module in order): computes the part
// digests, then calls `sign` (when given) with the bytes the signature covers
// and a 64-byte buffer for it, then appends the footer. `sign` returns false
// to fail the seal, leaving `file` as it was.
template <typename SignFn = std::nullptr_t>
bool Seal(std::vector<uint8_t>& file, std::vector<Part> parts, SignFn sign = nullptr) {
  const size_t module_length = file.size();
  auto put = [&](const void* data, size_t n) {
    const uint8_t* p = static_cast<const uint8_t*>(data);
    file.insert(file.end(), p, p + n);
  };
  auto put_le = [&](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) file.push_back(static_cast<uint8_t>(value >> (8 * i)));
  };
  for (Part& part : parts) {
    part.digest = Hash(std::span<const uint8_t>(file).subspan(part.offset, part.length));
    put_le(part.offset, 8);
    put_le(part.length, 8);
    put_le(static_cast<uint32_t>(part.kind), 4);
    put_le(part.index, 4);
    put(part.digest.bytes, 16);
  }
  uint32_t flags = 0;
  if constexpr (!std::is_same_v<SignFn, std::nullptr_t>) {
    uint8_t signature[kSignatureBytes];
    if (!sign(std::span<const uint8_t>(file), signature)) {
      file.resize(module_length);
      return false;
    }
    put(signature, kSignatureBytes);
    flags |= kSigned;
  }
  put_le(parts.size(), 4);
  put_le(flags, 4);
  Digest digest = Hash(file);
  put(digest.bytes, 16);
  put(kMagic, 8);
  return true;
}

// Reads a key written as hex digits (whitespace around them ignored): false
// unless there are exactly `bytes` bytes of them.
inline bool ParseHexKey(std::string_view text, size_t bytes, std::vector<uint8_t>* out) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
  if (text.size() != 2 * bytes) return false;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<uint8_t> key(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    int high = digit(text[2 * i]), low = digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    key[i] = static_cast<uint8_t>(high * 16 + low);
  }
  *out = std::move(key);
  return true;
}

inline std::string HexKey(std::span<const uint8_t> key) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : key) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

inline std::string Digest::Hex() const { return HexKey(bytes); }

// "the module description", "rodata 3", ... for messages when the
// description itself cannot be trusted to name the part.
inline std::string DescribePart(const Part& part) {
  switch (part.kind) {
    case PartKind::kDescription:
      return "the module description (header, bytecode, metadata)";
    case PartKind::kRodata:
      return "rodata segment " + std::to_string(part.index);
    case PartKind::kExecutable:
      return "executable " + std::to_string(part.index);
    case PartKind::kPadding:
      return "padding between segments";
  }
  return "part";
}

}  // namespace strata::integrity
