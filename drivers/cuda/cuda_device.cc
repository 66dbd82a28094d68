#include "drivers/cuda/cuda_device.h"

#include "drivers/cuda/cuda_command_buffer.h"
#include "drivers/cuda/cuda_executable.h"
#include "hal/host_semaphore.h"

namespace strata::cuda {

Status CudaQueue::Execute(hal::CommandBuffer& command_buffer, Tracer* tracer,
                          std::chrono::steady_clock::time_point deadline) {
  // QueueExecute admitted only command buffers of this device's context.
  return static_cast<const CudaCommandBuffer&>(command_buffer).Execute(tracer, deadline);
}

CudaDevice::CudaDevice(hal::DeviceInfo info, std::shared_ptr<CudaContext> context, Ref<CudaAllocator> allocator,
                       std::shared_ptr<CudaQueue> queue, bool graphs)
    : Device(std::move(info), allocator),
      context_(std::move(context)),
      allocator_(std::move(allocator)),
      queue_(std::move(queue)),
      graphs_(graphs) {}

CudaDevice::~CudaDevice() { queue_->Shutdown(); }

StatusOr<Ref<hal::CommandBuffer>> CudaDevice::CreateCommandBuffer() {
  return Ref<hal::CommandBuffer>(MakeRef<CudaCommandBuffer>(context_, allocator_, info().limits, graphs_));
}

StatusOr<Ref<hal::Semaphore>> CudaDevice::CreateSemaphore(uint64_t initial_value) {
  return Ref<hal::Semaphore>(MakeRef<hal::HostSemaphore>(&kCudaFamily, initial_value));
}

StatusOr<Ref<hal::Executable>> CudaDevice::PrepareExecutableImpl(const hal::ExecutableParams& params) {
  STRATA_ASSIGN_OR_RETURN(Ref<CudaExecutable> executable, CudaExecutable::Create(context_, params));
  return Ref<hal::Executable>(std::move(executable));
}

Status CudaDevice::QueueExecuteImpl(std::span<const hal::SemaphoreValue> waits,
                                    std::span<const hal::SemaphoreValue> signals,
                                    std::span<hal::CommandBuffer* const> command_buffers,
                                    std::chrono::steady_clock::time_point deadline) {
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    if (static_cast<const CudaCommandBuffer*>(command_buffers[i])->context() != context_.get()) {
      return InvalidArgumentError("submit: command buffer ", i, " was created by another CUDA device than '",
                                  info().name, "'");
    }
  }
  return queue_->Submit(waits, signals, command_buffers, tracer(), deadline);
}

namespace {

StatusOr<Ref<hal::Device>> CreateCudaDevice(const hal::DeviceSpec& spec) {
  STRATA_RETURN_IF_ERROR(spec.CheckKnownOptions({"device", "graphs"}));
  std::string device;
  for (const auto& [key, value] : spec.options()) {
    if (key == "device") device = value;
  }
  STRATA_ASSIGN_OR_RETURN(int64_t graphs, spec.GetInt("graphs", 1, 0, 1));
  STRATA_ASSIGN_OR_RETURN(const CudaFunctions* cu, LoadCudaLibrary());
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<CudaContext> context, CudaContext::Create(*cu, device));
  STRATA_ASSIGN_OR_RETURN(Ref<CudaAllocator> allocator, CudaAllocator::Create(context));
  hal::DeviceInfo info;
  info.name = spec.spec();
  info.driver = spec.driver();
  info.description = context->Describe();
  info.executable_formats = {kCudaPtxFormat};
  info.limits.min_binding_alignment = kBindingAlignment;
  for (int d = 0; d < 3; ++d) info.limits.max_workgroup_count[d] = static_cast<uint32_t>(context->max_grid_dim()[d]);
  info.concurrency = static_cast<uint32_t>(context->multiprocessors());
  info.details = context->Details();
  auto queue = std::make_shared<CudaQueue>(info.name);
  return Ref<hal::Device>(MakeRef<CudaDevice>(std::move(info), std::move(context), std::move(allocator),
                                              std::move(queue), graphs != 0));
}

}  // namespace

Status RegisterCudaDriver(hal::DriverRegistry& registry) {
  return registry.Register({"cuda",
                            "NVIDIA GPU through the CUDA driver (libcuda.so.1) found at run time "
                            "(options: device=INDEX, graphs=0)",
                            CreateCudaDevice});
}

}  // namespace strata::cuda
