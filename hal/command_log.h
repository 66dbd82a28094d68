// CommandLog: the indirect command buffer of a device whose driver binds no
// binding tables itself (Device::CreateIndirectCommandBufferImpl's default;
// Vulkan). It keeps its commands as they were recorded, and each
// submission records them into a new command buffer of the device with the
// table's buffers in place of the slots (Replay), which is what runs. That
// costs the device's recording per submission but not the program's, and
// every driver runs indirect command buffers alike.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "hal/command_buffer.h"

namespace strata::hal {

class CommandLog final : public CommandBuffer {
 public:
  CommandLog(const DriverFamily* family, const DeviceLimits& limits) : CommandBuffer(family, limits) {
    MarkIndirect();
  }

  // Records the commands into `target` (begun and ended here) with the
  // slots' ranges of `table` (which CheckBindingTable accepted).
  Status Replay(CommandBuffer& target, std::span<const BufferBinding> table) const;

  const CommandLog* AsLog() const override { return this; }

 protected:
  void ResetImpl() override;
  Status DispatchImpl(Executable* executable, uint32_t entry_point, WorkgroupCount workgroups,
                      std::span<const uint32_t> constants, std::span<const BufferBinding> bindings) override;
  Status FillImpl(Buffer* target, uint64_t offset, uint64_t length, uint32_t pattern,
                  uint32_t pattern_length) override;
  Status CopyImpl(Buffer* source, uint64_t source_offset, Buffer* target, uint64_t target_offset,
                  uint64_t length) override;
  Status UpdateImpl(std::span<const uint8_t> source, Buffer* target, uint64_t target_offset) override;
  Status BarrierImpl() override;

 private:
  enum class Kind : uint8_t { kDispatch, kFill, kCopy, kUpdate, kBarrier };
  // One command; the fields its kind uses. Retained by the command buffer.
  struct Entry {
    Kind kind;
    Executable* executable = nullptr;
    uint32_t entry_point = 0;
    WorkgroupCount workgroups;
    uint32_t first = 0, count = 0;  // constants and bindings, or update bytes
    uint32_t first_binding = 0, binding_count = 0;
    Buffer* source = nullptr;
    Buffer* target = nullptr;
    uint64_t source_offset = 0, target_offset = 0, length = 0;
    uint32_t pattern = 0, pattern_length = 0;
  };
  std::vector<Entry> entries_;
  std::vector<uint32_t> constants_;
  std::vector<BufferBinding> bindings_;
  std::vector<uint8_t> update_data_;
};

}  // namespace strata::hal
