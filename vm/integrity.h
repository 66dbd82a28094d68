// Checking a module file's integrity record (schemas/integrity.h) before the
// loader reads anything else, and its signature when the caller trusts a key.
//
// Thread safety: the functions are reentrant.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vm/base/status.h"

namespace strata::vm {

struct IntegrityOptions {
  // Check the digests (the default). A module without an integrity record
  // then fails to load. Off: the record, if any, is skipped unread.
  bool verify = true;
  // A 32-byte Ed25519 public key. When set, the module must carry a
  // signature that this key verifies (checked with libsodium, opened at run
  // time: a runtime that never sets a key does not need it).
  std::vector<uint8_t> trusted_public_key;
};

// Checks `file` against `options` and returns the bytes of the module
// proper (without the integrity record). Errors: DATA_LOSS naming the part
// whose digest differs ("executable 'kernels' (cpu-elf-x86_64)"), or a
// missing or malformed record; PERMISSION_DENIED for a missing or invalid
// signature; UNAVAILABLE when a key is set and libsodium cannot be opened.
StatusOr<std::span<const uint8_t>> CheckIntegrity(std::span<const uint8_t> file, const IntegrityOptions& options);

// Whether the file ends in an integrity record, and whether it is signed.
struct IntegrityInfo {
  bool present = false;
  bool is_signed = false;
  uint32_t part_count = 0;
};
IntegrityInfo DescribeIntegrity(std::span<const uint8_t> file);

}  // namespace strata::vm
