#include "drivers/cuda/cuda_device.h"

#include "drivers/cuda/cuda_executable.h"
#include "drivers/stream/stream_device.h"

namespace strata::cuda {

const hal::DriverFamily kCudaFamily = {"cuda"};

namespace {

// The status of a call: OK, or "call: CUDA_ERROR_X (N); advice".
Status Check(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return OkStatus();
  return CuError(result, call);
}

}  // namespace

StatusOr<std::shared_ptr<CudaContext>> CudaContext::Create(const CudaFunctions& cu, const std::string& device) {
  int count = 0;
  CUresult result = cu.cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS) return CuError(result, "cuda: cuDeviceGetCount");
  if (count == 0) {
    return UnavailableError("cuda: the NVIDIA driver lists no CUDA device; check nvidia-smi and CUDA_VISIBLE_DEVICES");
  }
  std::shared_ptr<CudaContext> context(new CudaContext(cu));
  for (int i = 0; i < count; ++i) {
    CUdevice handle;
    char name[256] = {};
    int major = 0, minor = 0;
    if (cu.cuDeviceGet(&handle, i) != CUDA_SUCCESS || cu.cuDeviceGetName(name, sizeof(name) - 1, handle) != CUDA_SUCCESS) {
      context->device_list_.push_back(StrCat(i, ": (unreadable)"));
      continue;
    }
    cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle);
    cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle);
    context->device_list_.push_back(StrCat(i, ": ", name, ", sm_", major, minor));
  }
  STRATA_ASSIGN_OR_RETURN(const int index, stream::DeviceIndex("cuda", device, context->device_list_));
  context->device_index_ = index;
  result = cu.cuDeviceGet(&context->device_, index);
  if (result != CUDA_SUCCESS) return CuError(result, StrCat("cuda: cuDeviceGet(", index, ")"));
  char name[256] = {};
  result = cu.cuDeviceGetName(name, sizeof(name) - 1, context->device_);
  if (result != CUDA_SUCCESS) return CuError(result, "cuda: cuDeviceGetName");
  stream::DeviceFacts& facts = context->facts_;
  facts.name = name;
  size_t total = 0;
  result = cu.cuDeviceTotalMem(&total, context->device_);
  if (result != CUDA_SUCCESS) return CuError(result, "cuda: cuDeviceTotalMem");
  facts.total_memory = total;

  struct Attribute {
    CUdevice_attribute attribute;
    int* value;
  };
  int major = 0, minor = 0, concurrent_managed = 0, read_only_register = 0, host_pointer = 0, unified = 0;
  int threads = 0, block[3] = {}, grid[3] = {}, shared = 0, multiprocessors = 0;
  const Attribute attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &threads},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &block[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &block[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &block[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &grid[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &grid[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &grid[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &shared},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &context->max_shared_memory_per_block_optin_},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &multiprocessors},
      {CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, &concurrent_managed},
      {CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, &read_only_register},
      {CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM, &host_pointer},
      {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, &unified},
  };
  for (const Attribute& attribute : attributes) {
    result = cu.cuDeviceGetAttribute(attribute.value, attribute.attribute, context->device_);
    if (result != CUDA_SUCCESS) {
      return CuError(result, StrCat("cuda: cuDeviceGetAttribute(", static_cast<int>(attribute.attribute), ")"));
    }
  }
  context->compute_capability_ = static_cast<uint32_t>(major * 10 + minor);
  facts.arch = StrCat("sm_", context->compute_capability_);
  facts.max_threads_per_block = static_cast<uint32_t>(threads);
  for (int d = 0; d < 3; ++d) {
    facts.max_block_dim[d] = static_cast<uint32_t>(block[d]);
    facts.max_grid_dim[d] = static_cast<uint32_t>(grid[d]);
  }
  facts.max_shared_memory_per_block = static_cast<uint32_t>(shared);
  facts.max_shared_memory_per_block_optin = static_cast<uint32_t>(context->max_shared_memory_per_block_optin_);
  facts.multiprocessors = static_cast<uint32_t>(multiprocessors);
  facts.concurrent_managed_access = concurrent_managed != 0;
  facts.host_pointer_for_registered_memory = host_pointer != 0;
  context->read_only_host_register_ = read_only_register != 0;
  // Copies between any two buffers (cuMemcpyAsync) infer their direction
  // from unified addresses, which every 64-bit Linux driver has.
  if (!unified) {
    return UnavailableError("cuda: device '", facts.name, "' lacks unified addressing, which this driver needs");
  }

  result = cu.cuDevicePrimaryCtxRetain(&context->context_, context->device_);
  if (result != CUDA_SUCCESS) {
    context->context_ = nullptr;
    return CuError(result, StrCat("cuda: cuDevicePrimaryCtxRetain for '", facts.name, "'"));
  }
  STRATA_RETURN_IF_ERROR(context->MakeCurrent());
  CUstream stream = nullptr;
  result = cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  if (result != CUDA_SUCCESS) return CuError(result, "cuda: cuStreamCreate");
  context->stream_ = stream;
  return context;
}

CudaContext::~CudaContext() {
  if (!context_) return;
  // Errors are dropped: at process exit the driver may be gone already.
  if (cu_.cuCtxSetCurrent(context_) == CUDA_SUCCESS && stream_) {
    cu_.cuStreamSynchronize(cu_stream());
    cu_.cuStreamDestroy(cu_stream());
  }
  cu_.cuDevicePrimaryCtxRelease(device_);
}

Status CudaContext::MakeCurrent() const {
  CUresult result = cu_.cuCtxSetCurrent(context_);
  if (result != CUDA_SUCCESS) return CuError(result, StrCat("cuda: cuCtxSetCurrent for '", name(), "'"));
  return OkStatus();
}

const char* CudaContext::executable_format() const { return kCudaPtxFormat; }

std::string CudaContext::Describe() const {
  return StrCat(name(), ", ", facts_.arch, ", ", facts_.multiprocessors, " multiprocessors, ",
                stream::Gibibytes(facts_.total_memory), ", CUDA ", CudaVersionString(cu_.driver_version));
}

std::vector<std::string> CudaContext::Details() const {
  auto yes = [](bool value) { return value ? "yes" : "no"; };
  std::string devices;
  for (size_t i = 0; i < device_list_.size(); ++i) {
    devices += StrCat(i ? "; " : "", device_list_[i], i == device_index_ ? " (this one)" : "");
  }
  const uint32_t cc = compute_capability_;
  return {
      StrCat("devices (cuda://INDEX): ", devices),
      StrCat("compute capability ", cc / 10, ".", cc % 10, " (", facts_.arch, "), executable format cuda-ptx; ",
             "CUDA driver API ", CudaVersionString(cu_.driver_version), " (", CudaLibraryName(), ")"),
      StrCat("memory ", stream::Gibibytes(facts_.total_memory), "; managed memory with concurrent host access ",
             yes(facts_.concurrent_managed_access), "; read-only host registration ", yes(read_only_host_register_)),
      StrCat("block max ", facts_.max_threads_per_block, " threads (", facts_.max_block_dim[0], "x",
             facts_.max_block_dim[1], "x", facts_.max_block_dim[2], "); grid max ", facts_.max_grid_dim[0], "x",
             facts_.max_grid_dim[1], "x", facts_.max_grid_dim[2], "; static shared memory ",
             facts_.max_shared_memory_per_block, " B per block (", max_shared_memory_per_block_optin_, " B opt-in)"),
  };
}

StatusOr<stream::DevicePtr> CudaContext::AllocateDevice(uint64_t size) const {
  CUdeviceptr address = 0;
  STRATA_RETURN_IF_ERROR(Check(cu_.cuMemAlloc(&address, size), "cuMemAlloc_v2"));
  return address;
}

StatusOr<stream::DevicePtr> CudaContext::AllocateManaged(uint64_t size) const {
  CUdeviceptr address = 0;
  STRATA_RETURN_IF_ERROR(Check(cu_.cuMemAllocManaged(&address, size, CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged"));
  return address;
}

StatusOr<stream::PinnedMemory> CudaContext::AllocatePinned(uint64_t size) const {
  void* host = nullptr;
  STRATA_RETURN_IF_ERROR(
      Check(cu_.cuMemHostAlloc(&host, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc"));
  CUdeviceptr device = 0;
  CUresult result = cu_.cuMemHostGetDevicePointer(&device, host, 0);
  if (result != CUDA_SUCCESS) {
    cu_.cuMemFreeHost(host);
    return CuError(result, "cuMemHostGetDevicePointer_v2");
  }
  return stream::PinnedMemory{static_cast<uint8_t*>(host), device};
}

void CudaContext::FreeDevice(stream::DevicePtr address) const { cu_.cuMemFree(address); }
void CudaContext::FreePinned(void* host) const { cu_.cuMemFreeHost(host); }

StatusOr<bool> CudaContext::RegisterHost(void* host, uint64_t size, bool read_only) const {
  unsigned flags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP;
  if (read_only && read_only_host_register_) flags |= CU_MEMHOSTREGISTER_READ_ONLY;
  CUresult result = cu_.cuMemHostRegister(host, size, flags);
  if (result == static_cast<CUresult>(712)) return false;  // CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
  Status status = Check(result, "cuMemHostRegister_v2");
  if (!status.ok() && read_only && !read_only_host_register_) {
    status.Annotate("device '", name(), "' cannot register read-only host memory ",
                    "(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED is 0): ");
  }
  STRATA_RETURN_IF_ERROR(status);
  return true;
}

void CudaContext::UnregisterHost(void* host) const { cu_.cuMemHostUnregister(host); }

Status CudaContext::MemsetD8(stream::DevicePtr target, uint8_t value, uint64_t count) const {
  return Check(cu_.cuMemsetD8Async(target, value, count, cu_stream()), "cuMemsetD8Async");
}

Status CudaContext::MemsetD32(stream::DevicePtr target, uint32_t value, uint64_t count) const {
  return Check(cu_.cuMemsetD32Async(target, value, count, cu_stream()), "cuMemsetD32Async");
}

Status CudaContext::Copy(stream::DevicePtr target, stream::DevicePtr source, uint64_t length) const {
  return Check(cu_.cuMemcpyAsync(target, source, length, cu_stream()), "cuMemcpyAsync");
}

Status CudaContext::Launch(stream::FunctionHandle function, const uint32_t grid[3], const uint32_t block[3],
                           uint32_t shared_bytes, void** parameters) const {
  return Check(cu_.cuLaunchKernel(static_cast<CUfunction>(function), grid[0], grid[1], grid[2], block[0], block[1],
                                  block[2], shared_bytes, cu_stream(), parameters, nullptr),
               "cuLaunchKernel");
}

Status CudaContext::Synchronize(bool* sticky) const {
  CUresult result = cu_.cuStreamSynchronize(cu_stream());
  *sticky = IsStickyError(result);
  return Check(result, "cuStreamSynchronize");
}

bool CudaContext::BeginCapture() const {
  return cu_.cuStreamBeginCapture(cu_stream(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS;
}

stream::GraphHandle CudaContext::EndCapture(bool keep) const {
  CUgraph graph = nullptr;
  CUgraphExec instance = nullptr;
  if (cu_.cuStreamEndCapture(cu_stream(), &graph) == CUDA_SUCCESS && graph && keep &&
      cu_.cuGraphInstantiate(&instance, graph, 0) != CUDA_SUCCESS) {
    instance = nullptr;
  }
  if (graph) cu_.cuGraphDestroy(graph);
  return instance;
}

Status CudaContext::LaunchGraph(stream::GraphHandle graph) const {
  return Check(cu_.cuGraphLaunch(static_cast<CUgraphExec>(graph), cu_stream()), "cuGraphLaunch");
}

void CudaContext::DestroyGraph(stream::GraphHandle graph) const {
  cu_.cuGraphExecDestroy(static_cast<CUgraphExec>(graph));
}

StatusOr<stream::EventHandle> CudaContext::CreateEvent() const {
  CUevent event = nullptr;
  STRATA_RETURN_IF_ERROR(Check(cu_.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate"));
  return static_cast<stream::EventHandle>(event);
}

Status CudaContext::RecordEvent(stream::EventHandle event) const {
  return Check(cu_.cuEventRecord(static_cast<CUevent>(event), cu_stream()), "cuEventRecord");
}

Status CudaContext::WaitEvent(stream::EventHandle event, bool* sticky) const {
  CUresult result = cu_.cuEventSynchronize(static_cast<CUevent>(event));
  *sticky = IsStickyError(result);
  return Check(result, "cuEventSynchronize");
}

void CudaContext::DestroyEvent(stream::EventHandle event) const { cu_.cuEventDestroy(static_cast<CUevent>(event)); }

StatusOr<Ref<stream::StreamExecutable>> CudaContext::LoadExecutable(const hal::ExecutableParams& params) {
  return LoadCudaExecutable(std::static_pointer_cast<CudaContext>(shared_from_this()), params);
}

void CudaContext::UnloadModule(stream::ModuleHandle module) const { cu_.cuModuleUnload(static_cast<CUmodule>(module)); }

namespace {

StatusOr<Ref<hal::Device>> CreateCudaDevice(const hal::DeviceSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(stream::StreamDeviceOptions options, stream::ReadStreamDeviceOptions(spec));
  STRATA_ASSIGN_OR_RETURN(const CudaFunctions* cu, LoadCudaLibrary());
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<CudaContext> context, CudaContext::Create(*cu, options.device));
  return stream::CreateStreamDevice(spec, std::move(context), options);
}

}  // namespace

Status RegisterCudaDriver(hal::DriverRegistry& registry) {
  return registry.Register({"cuda",
                            "NVIDIA GPU through the CUDA driver (libcuda.so.1) found at run time "
                            "(options: device=INDEX, graphs=0, pipelined=0)",
                            CreateCudaDevice});
}

}  // namespace strata::cuda
