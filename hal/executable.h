// Executable: device code prepared for dispatch.
//
// A module embeds each executable in one or more formats ("cpu-elf-x86_64",
// "vulkan-spirv", ...), each with its bytes and the format's own metadata
// (a small FlatBuffer: for CPU executables schemas/cpu_executable.fbs). A
// device prepares an executable from one of the formats it supports
// (Device::PrepareExecutable). Formats that can run from the module's bytes in
// place keep `owner` (normally the module) alive instead of copying them.
//
// Every executable exposes its entry points in a driver-independent form, which
// is what command buffers validate dispatches against: binding count, push
// constant count, which bindings are read-only, and the workgroup size when
// the format records one.
//
// Ownership: a RefObject; command buffers retain the executables they record.
// Immutable after preparation, so every method is thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/resource.h"
#include "vm/base/ref.h"
#include "vm/base/status.h"

namespace strata::hal {

struct EntryPointInfo {
  std::string name;
  uint32_t binding_count = 0;
  uint32_t constant_count = 0;  // 32-bit push constants
  // Bit i set: the kernel never writes binding i (so a read-only buffer, such
  // as module rodata, may be bound there).
  uint32_t read_only_bindings = 0;
  // Invocations per workgroup, {0, 0, 0} when the format does not say.
  uint32_t workgroup_size[3] = {0, 0, 0};
  // What each of the kernel's checks tests and where in the model it comes
  // from, for the error when check i fails; empty when the kernel has none.
  std::vector<std::string> check_messages;
  // Bytes of scratch the kernel takes as its last binding, for temporaries
  // too large for its stack (0: none).
  uint64_t scratch_bytes = 0;
  // Bytes of memory each workgroup uses for itself while it runs, given by
  // the runtime per thread (0: none; CPU executables only).
  uint64_t local_memory_bytes = 0;
  // The kernel wants its workgroups run in ascending order on a thread (it
  // prefetches what the next one reads), never in the descending order the
  // CPU drivers use on every second run (CPU executables only).
  bool ascending_workgroups = false;
};

struct ExecutableParams {
  std::string_view name;  // for messages: the module's name for it
  std::string_view format;
  std::span<const uint8_t> data;
  std::span<const uint8_t> metadata;
  // Keeps `data` and `metadata` alive for formats used in place (may be null
  // when the caller guarantees they outlive the executable).
  Ref<RefObject> owner;
};

class Executable : public Resource {
 public:
  static const RefTypeInfo kType;  // "hal.executable"
  // Limits that every driver supports, so a compiled module runs on all.
  static constexpr uint32_t kMaxBindings = 32;
  static constexpr uint32_t kMaxConstants = 64;

  const std::string& name() const { return name_; }
  const std::string& format() const { return format_; }
  std::span<const EntryPointInfo> entry_points() const { return entry_points_; }
  // The ordinal of the entry point called `name`; a miss lists those that exist.
  StatusOr<uint32_t> LookupEntryPoint(std::string_view name) const;

 protected:
  Executable(const DriverFamily* family, std::string name, std::string format,
             std::vector<EntryPointInfo> entry_points);

 private:
  std::string name_;
  std::string format_;
  std::vector<EntryPointInfo> entry_points_;
};

// The fields of an entry point that every format's metadata holds (the
// EntryPointDef of its FlatBuffers schema: name, binding_count,
// constant_count, binding_read_only, check_messages), checked alike for all:
// a name, not among `earlier`'s; counts within kMaxBindings and
// kMaxConstants; one read-only flag per binding where there are flags.
// `prefix` starts every error ("executable 'x' (format): "); `index`, the
// entry point's position, names one without a name.
template <typename EntryPointDef>
StatusOr<EntryPointInfo> ReadEntryPoint(const EntryPointDef& entry, uint32_t index,
                                        std::span<const EntryPointInfo> earlier, std::string_view prefix) {
  if (!entry.name() || entry.name()->size() == 0) {
    return InvalidArgumentError(prefix, "entry point ", index, " has no name");
  }
  EntryPointInfo info;
  info.name = entry.name()->str();
  const std::string where = STRATA_FOR_MESSAGE(StrCat(prefix, "entry point '", info.name, "' "));
  for (const EntryPointInfo& other : earlier) {
    if (other.name == info.name) return InvalidArgumentError(where, "is listed twice");
  }
  info.binding_count = entry.binding_count();
  info.constant_count = entry.constant_count();
  if (info.binding_count > Executable::kMaxBindings) {
    return InvalidArgumentError(where, "has ", info.binding_count, " bindings; the limit is ", Executable::kMaxBindings);
  }
  if (info.constant_count > Executable::kMaxConstants) {
    return InvalidArgumentError(where, "has ", info.constant_count, " push constants; the limit is ",
                                Executable::kMaxConstants);
  }
  if (const auto* read_only = entry.binding_read_only()) {
    if (read_only->size() != info.binding_count) {
      return InvalidArgumentError(where, "has ", info.binding_count, " bindings but ", read_only->size(),
                                  " read-only flags");
    }
    for (uint32_t b = 0; b < read_only->size(); ++b) {
      if (read_only->Get(b)) info.read_only_bindings |= 1u << b;
    }
  }
  if (const auto* messages = entry.check_messages()) {
    for (const auto* message : *messages) info.check_messages.push_back(message ? message->str() : std::string());
  }
  return info;
}

}  // namespace strata::hal
