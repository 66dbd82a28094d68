#include "drivers/rocm/rocm_device.h"

#include "drivers/rocm/rocm_executable.h"
#include "drivers/stream/stream_device.h"

namespace strata::rocm {

const hal::DriverFamily kRocmFamily = {"rocm"};

namespace {

// Calls whose errors are dropped (frees at process exit) are cast to void:
// hipError_t is [[nodiscard]].

// The status of a call: OK, or "call: hipErrorX (N); advice".
Status Check(hipError_t result, const char* call) {
  if (result == hipSuccess) return OkStatus();
  return HipError(result, call);
}

// gcnArchName of device `index` ("gfx90a:sramecc+:xnack-"), or "" when HIP
// cannot say. The unversioned hipGetDeviceProperties fills the HIP 5 layout
// in HIP 5 and 6 alike; the padding keeps a library that writes more within
// bounds.
std::string ArchName(const HipFunctions& hip, int index) {
  union {
    hipDeviceProp_t properties;
    uint8_t padding[16384];
  } storage = {};
  if (hip.hipGetDeviceProperties(&storage.properties, index) != hipSuccess) return "";
  storage.properties.gcnArchName[sizeof(storage.properties.gcnArchName) - 1] = 0;
  return storage.properties.gcnArchName;
}

}  // namespace

StatusOr<std::shared_ptr<RocmContext>> RocmContext::Create(const HipFunctions& hip, const std::string& device) {
  int count = 0;
  hipError_t result = hip.hipGetDeviceCount(&count);
  if (result != hipSuccess && result != hipErrorNoDevice) return HipError(result, "rocm: hipGetDeviceCount");
  if (count == 0) {
    return UnavailableError("rocm: HIP lists no AMD GPU; check rocminfo and HIP_VISIBLE_DEVICES");
  }
  std::shared_ptr<RocmContext> context(new RocmContext(hip));
  for (int i = 0; i < count; ++i) {
    char name[256] = {};
    if (hip.hipDeviceGetName(name, sizeof(name) - 1, i) != hipSuccess) {
      context->device_list_.push_back(StrCat(i, ": (unreadable)"));
      continue;
    }
    context->device_list_.push_back(StrCat(i, ": ", name, ", ", ArchName(hip, i)));
  }
  STRATA_ASSIGN_OR_RETURN(const int index, stream::DeviceIndex("rocm", device, context->device_list_));
  context->device_index_ = index;
  context->device_ = index;
  stream::DeviceFacts& facts = context->facts_;
  char name[256] = {};
  result = hip.hipDeviceGetName(name, sizeof(name) - 1, index);
  if (result != hipSuccess) return HipError(result, "rocm: hipDeviceGetName");
  facts.name = name;
  facts.arch = ArchName(hip, index);
  if (facts.arch.empty()) {
    return UnavailableError("rocm: HIP does not report the architecture (gcnArchName) of device ", index, " ('",
                            facts.name, "'), which picks the code object to load");
  }
  size_t total = 0;
  result = hip.hipDeviceTotalMem(&total, index);
  if (result != hipSuccess) return HipError(result, "rocm: hipDeviceTotalMem");
  facts.total_memory = total;

  struct Attribute {
    hipDeviceAttribute_t attribute;
    int* value;
  };
  int threads = 0, block[3] = {}, grid[3] = {}, shared = 0, multiprocessors = 0, concurrent_managed = 0;
  const Attribute attributes[] = {
      {hipDeviceAttributeMaxThreadsPerBlock, &threads},
      {hipDeviceAttributeMaxBlockDimX, &block[0]},
      {hipDeviceAttributeMaxBlockDimY, &block[1]},
      {hipDeviceAttributeMaxBlockDimZ, &block[2]},
      {hipDeviceAttributeMaxGridDimX, &grid[0]},
      {hipDeviceAttributeMaxGridDimY, &grid[1]},
      {hipDeviceAttributeMaxGridDimZ, &grid[2]},
      {hipDeviceAttributeMaxSharedMemoryPerBlock, &shared},
      {hipDeviceAttributeMultiprocessorCount, &multiprocessors},
      {hipDeviceAttributeConcurrentManagedAccess, &concurrent_managed},
  };
  for (const Attribute& attribute : attributes) {
    result = hip.hipDeviceGetAttribute(attribute.value, attribute.attribute, index);
    if (result != hipSuccess) {
      return HipError(result, StrCat("rocm: hipDeviceGetAttribute(", static_cast<int>(attribute.attribute), ")"));
    }
  }
  // HIP documents this one for CUDA only: where AMD's HIP does not answer,
  // imports are refused and callers copy instead.
  int host_pointer = 0;
  if (hip.hipDeviceGetAttribute(&host_pointer, hipDeviceAttributeCanUseHostPointerForRegisteredMem, index) !=
      hipSuccess) {
    host_pointer = 0;
  }
  facts.max_threads_per_block = static_cast<uint32_t>(threads);
  for (int d = 0; d < 3; ++d) {
    facts.max_block_dim[d] = static_cast<uint32_t>(block[d]);
    facts.max_grid_dim[d] = static_cast<uint32_t>(grid[d]);
  }
  facts.max_shared_memory_per_block = static_cast<uint32_t>(shared);
  facts.multiprocessors = static_cast<uint32_t>(multiprocessors);
  facts.concurrent_managed_access = concurrent_managed != 0;
  facts.host_pointer_for_registered_memory = host_pointer != 0;

  STRATA_RETURN_IF_ERROR(context->MakeCurrent());
  hipStream_t stream = nullptr;
  result = hip.hipStreamCreateWithFlags(&stream, hipStreamNonBlocking);
  if (result != hipSuccess) return HipError(result, "rocm: hipStreamCreateWithFlags");
  context->stream_ = stream;
  return context;
}

RocmContext::~RocmContext() {
  // Errors are dropped: at process exit the runtime may be gone already.
  if (stream_ && hip_.hipSetDevice(device_) == hipSuccess) {
    (void)hip_.hipStreamSynchronize(hip_stream());
    (void)hip_.hipStreamDestroy(hip_stream());
  }
}

Status RocmContext::MakeCurrent() const {
  hipError_t result = hip_.hipSetDevice(device_);
  if (result != hipSuccess) return HipError(result, StrCat("rocm: hipSetDevice(", device_, ") for '", name(), "'"));
  return OkStatus();
}

const char* RocmContext::executable_format() const { return kRocmHsacoFormat; }

std::string RocmContext::Describe() const {
  return StrCat(name(), ", ", facts_.arch, ", ", facts_.multiprocessors, " compute units, ",
                stream::Gibibytes(facts_.total_memory), ", HIP ", HipVersionString(hip_.driver_version));
}

std::vector<std::string> RocmContext::Details() const {
  auto yes = [](bool value) { return value ? "yes" : "no"; };
  std::string devices;
  for (size_t i = 0; i < device_list_.size(); ++i) {
    devices += StrCat(i ? "; " : "", device_list_[i], i == device_index_ ? " (this one)" : "");
  }
  return {
      StrCat("devices (rocm://INDEX): ", devices),
      StrCat("architecture ", facts_.arch, ", executable format rocm-hsaco (code objects up to v",
             MaxCodeObjectVersion(hip_.driver_version), "); HIP ", HipVersionString(hip_.driver_version), " (",
             hip_.library, ")"),
      StrCat("memory ", stream::Gibibytes(facts_.total_memory), "; managed memory with concurrent host access ",
             yes(facts_.concurrent_managed_access), "; imports of host memory ",
             yes(facts_.host_pointer_for_registered_memory)),
      StrCat("block max ", facts_.max_threads_per_block, " threads (", facts_.max_block_dim[0], "x",
             facts_.max_block_dim[1], "x", facts_.max_block_dim[2], "); grid max ", facts_.max_grid_dim[0], "x",
             facts_.max_grid_dim[1], "x", facts_.max_grid_dim[2], "; LDS ", facts_.max_shared_memory_per_block,
             " B per block"),
  };
}

StatusOr<stream::DevicePtr> RocmContext::AllocateDevice(uint64_t size) const {
  void* address = nullptr;
  STRATA_RETURN_IF_ERROR(Check(hip_.hipMalloc(&address, size), "hipMalloc"));
  return reinterpret_cast<stream::DevicePtr>(address);
}

StatusOr<stream::DevicePtr> RocmContext::AllocateManaged(uint64_t size) const {
  void* address = nullptr;
  STRATA_RETURN_IF_ERROR(Check(hip_.hipMallocManaged(&address, size, hipMemAttachGlobal), "hipMallocManaged"));
  return reinterpret_cast<stream::DevicePtr>(address);
}

StatusOr<stream::PinnedMemory> RocmContext::AllocatePinned(uint64_t size) const {
  void* host = nullptr;
  STRATA_RETURN_IF_ERROR(
      Check(hip_.hipHostMalloc(&host, size, hipHostMallocPortable | hipHostMallocMapped), "hipHostMalloc"));
  void* device = nullptr;
  hipError_t result = hip_.hipHostGetDevicePointer(&device, host, 0);
  if (result != hipSuccess) {
    (void)hip_.hipHostFree(host);
    return HipError(result, "hipHostGetDevicePointer");
  }
  return stream::PinnedMemory{static_cast<uint8_t*>(host), reinterpret_cast<stream::DevicePtr>(device)};
}

void RocmContext::FreeDevice(stream::DevicePtr address) const { (void)hip_.hipFree(reinterpret_cast<void*>(address)); }
void RocmContext::FreePinned(void* host) const { (void)hip_.hipHostFree(host); }

StatusOr<bool> RocmContext::RegisterHost(void* host, uint64_t size, bool read_only) const {
  // HIP 5 has no read-only registration: read-only memory is registered as
  // any other, which fails for pages the process cannot write.
  hipError_t result = hip_.hipHostRegister(host, size, hipHostRegisterPortable | hipHostRegisterMapped);
  if (result == hipErrorHostMemoryAlreadyRegistered) return false;
  STRATA_RETURN_IF_ERROR(Check(result, "hipHostRegister"));
  return true;
}

void RocmContext::UnregisterHost(void* host) const { (void)hip_.hipHostUnregister(host); }

Status RocmContext::MemsetD8(stream::DevicePtr target, uint8_t value, uint64_t count) const {
  return Check(hip_.hipMemsetD8Async(reinterpret_cast<hipDeviceptr_t>(target), value, count, hip_stream()),
               "hipMemsetD8Async");
}

Status RocmContext::MemsetD32(stream::DevicePtr target, uint32_t value, uint64_t count) const {
  return Check(hip_.hipMemsetD32Async(reinterpret_cast<hipDeviceptr_t>(target), static_cast<int>(value), count,
                                      hip_stream()),
               "hipMemsetD32Async");
}

Status RocmContext::Copy(stream::DevicePtr target, stream::DevicePtr source, uint64_t length) const {
  return Check(hip_.hipMemcpyAsync(reinterpret_cast<void*>(target), reinterpret_cast<const void*>(source), length,
                                   hipMemcpyDefault, hip_stream()),
               "hipMemcpyAsync");
}

Status RocmContext::Launch(stream::FunctionHandle function, const uint32_t grid[3], const uint32_t block[3],
                           uint32_t shared_bytes, void** parameters) const {
  return Check(hip_.hipModuleLaunchKernel(static_cast<hipFunction_t>(function), grid[0], grid[1], grid[2], block[0],
                                          block[1], block[2], shared_bytes, hip_stream(), parameters, nullptr),
               "hipModuleLaunchKernel");
}

Status RocmContext::Synchronize(bool* sticky) const {
  hipError_t result = hip_.hipStreamSynchronize(hip_stream());
  *sticky = IsStickyError(result);
  return Check(result, "hipStreamSynchronize");
}

bool RocmContext::BeginCapture() const {
  return hip_.hipStreamBeginCapture(hip_stream(), hipStreamCaptureModeThreadLocal) == hipSuccess;
}

stream::GraphHandle RocmContext::EndCapture(bool keep) const {
  hipGraph_t graph = nullptr;
  hipGraphExec_t instance = nullptr;
  if (hip_.hipStreamEndCapture(hip_stream(), &graph) == hipSuccess && graph && keep &&
      hip_.hipGraphInstantiate(&instance, graph, nullptr, nullptr, 0) != hipSuccess) {
    instance = nullptr;
  }
  if (graph) (void)hip_.hipGraphDestroy(graph);
  return instance;
}

Status RocmContext::LaunchGraph(stream::GraphHandle graph) const {
  return Check(hip_.hipGraphLaunch(static_cast<hipGraphExec_t>(graph), hip_stream()), "hipGraphLaunch");
}

void RocmContext::DestroyGraph(stream::GraphHandle graph) const {
  (void)hip_.hipGraphExecDestroy(static_cast<hipGraphExec_t>(graph));
}

StatusOr<stream::EventHandle> RocmContext::CreateEvent() const {
  hipEvent_t event = nullptr;
  STRATA_RETURN_IF_ERROR(Check(hip_.hipEventCreateWithFlags(&event, hipEventDisableTiming), "hipEventCreateWithFlags"));
  return static_cast<stream::EventHandle>(event);
}

Status RocmContext::RecordEvent(stream::EventHandle event) const {
  return Check(hip_.hipEventRecord(static_cast<hipEvent_t>(event), hip_stream()), "hipEventRecord");
}

Status RocmContext::WaitEvent(stream::EventHandle event, bool* sticky) const {
  hipError_t result = hip_.hipEventSynchronize(static_cast<hipEvent_t>(event));
  *sticky = IsStickyError(result);
  return Check(result, "hipEventSynchronize");
}

void RocmContext::DestroyEvent(stream::EventHandle event) const {
  (void)hip_.hipEventDestroy(static_cast<hipEvent_t>(event));
}

StatusOr<Ref<stream::StreamExecutable>> RocmContext::LoadExecutable(const hal::ExecutableParams& params) {
  return LoadRocmExecutable(std::static_pointer_cast<RocmContext>(shared_from_this()), params);
}

void RocmContext::UnloadModule(stream::ModuleHandle module) const {
  (void)hip_.hipModuleUnload(static_cast<hipModule_t>(module));
}

namespace {

StatusOr<Ref<hal::Device>> CreateRocmDevice(const hal::DeviceSpec& spec) {
  STRATA_ASSIGN_OR_RETURN(stream::StreamDeviceOptions options, stream::ReadStreamDeviceOptions(spec));
  STRATA_ASSIGN_OR_RETURN(const HipFunctions* hip, LoadHipLibrary());
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<RocmContext> context, RocmContext::Create(*hip, options.device));
  return stream::CreateStreamDevice(spec, std::move(context), options);
}

}  // namespace

Status RegisterRocmDriver(hal::DriverRegistry& registry) {
  return registry.Register({"rocm",
                            "AMD GPU through HIP (libamdhip64.so.6 or .so.5) found at run time "
                            "(options: device=INDEX, graphs=0, pipelined=0)",
                            CreateRocmDevice});
}

}  // namespace strata::rocm
