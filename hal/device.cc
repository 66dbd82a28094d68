#include "hal/device.h"

namespace strata::hal {

const vm::RefTypeInfo Device::kType = {"hal.device"};

bool Device::SupportsExecutableFormat(std::string_view format) const {
  for (const std::string& supported : info_.executable_formats) {
    if (supported == format) return true;
  }
  return false;
}

StatusOr<vm::Ref<Executable>> Device::PrepareExecutable(const ExecutableParams& params) {
  if (!SupportsExecutableFormat(params.format)) {
    std::string formats;
    for (const std::string& f : info_.executable_formats) formats += (formats.empty() ? "" : ", ") + f;
    return IncompatibleError("executable '", params.name, "': device '", info_.name,
                             "' cannot run format '", params.format, "' (it runs: ", formats, ")");
  }
  return PrepareExecutableImpl(params);
}

Status Device::QueueExecute(std::span<const SemaphoreValue> waits, std::span<const SemaphoreValue> signals,
                            std::span<CommandBuffer* const> command_buffers) {
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    CommandBuffer* command_buffer = command_buffers[i];
    if (!command_buffer) return InvalidArgumentError("submit: command buffer ", i, " is null");
    if (command_buffer->family() != family()) {
      return InvalidArgumentError("submit: command buffer ", i, " was created by a '",
                                  command_buffer->family()->name, "' device; device '", info_.name,
                                  "' runs '", family()->name, "' command buffers");
    }
    STRATA_RETURN_IF_ERROR(command_buffer->CheckSubmittable());
  }
  for (size_t i = 0; i < waits.size(); ++i) {
    if (!waits[i].semaphore) return InvalidArgumentError("submit: wait semaphore ", i, " is null");
  }
  for (size_t i = 0; i < signals.size(); ++i) {
    if (!signals[i].semaphore) return InvalidArgumentError("submit: signal semaphore ", i, " is null");
    // A failed semaphore passes: the failure reaches its waiters either way.
    StatusOr<uint64_t> current = signals[i].semaphore->Query();
    if (current.ok() && signals[i].value <= *current) {
      return InvalidArgumentError("submit: signal semaphore ", i, " would go from ", *current, " to ",
                                  signals[i].value, "; timeline values must increase");
    }
  }
  return QueueExecuteImpl(waits, signals, command_buffers);
}

}  // namespace strata::hal
