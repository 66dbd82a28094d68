#include "drivers/cuda/cuda_context.h"

namespace strata::cuda {
namespace {

// Whether `text` is a decimal index.
bool IsIndex(const std::string& text) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// "79.1 GiB".
std::string Gibibytes(uint64_t bytes) {
  const uint64_t tenths = bytes * 10 / (uint64_t{1} << 30);
  return StrCat(tenths / 10, ".", tenths % 10, " GiB");
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
  std::string names;
  for (int i = 0; i < count; ++i) {
    CUdevice handle;
    char name[256] = {};
    int major = 0, minor = 0;
    if (cu.cuDeviceGet(&handle, i) != CUDA_SUCCESS || cu.cuDeviceGetName(name, sizeof(name) - 1, handle) != CUDA_SUCCESS) {
      continue;
    }
    cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle);
    cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle);
    context->device_list_.push_back(StrCat(i, ": ", name, ", sm_", major, minor));
    names += StrCat(names.empty() ? "" : ", ", i, ": ", name);
  }
  if (!device.empty() && (!IsIndex(device) || std::stoi(device) >= count)) {
    return NotFoundError("cuda: no device with index '", device, "' (devices: ", names, ")");
  }
  const int index = device.empty() ? 0 : std::stoi(device);
  context->device_index_ = index;
  result = cu.cuDeviceGet(&context->device_, index);
  if (result != CUDA_SUCCESS) return CuError(result, StrCat("cuda: cuDeviceGet(", index, ")"));
  char name[256] = {};
  result = cu.cuDeviceGetName(name, sizeof(name) - 1, context->device_);
  if (result != CUDA_SUCCESS) return CuError(result, "cuda: cuDeviceGetName");
  context->name_ = name;
  size_t total = 0;
  result = cu.cuDeviceTotalMem(&total, context->device_);
  if (result != CUDA_SUCCESS) return CuError(result, "cuda: cuDeviceTotalMem");
  context->total_memory_ = total;

  struct Attribute {
    CUdevice_attribute attribute;
    int* value;
  };
  int major = 0, minor = 0, concurrent_managed = 0, read_only_register = 0, host_pointer = 0, unified = 0;
  const Attribute attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &context->max_threads_per_block_},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &context->max_block_dim_[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &context->max_block_dim_[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &context->max_block_dim_[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &context->max_grid_dim_[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &context->max_grid_dim_[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &context->max_grid_dim_[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &context->max_shared_memory_per_block_},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &context->max_shared_memory_per_block_optin_},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &context->multiprocessors_},
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
  context->arch_ = static_cast<uint32_t>(major * 10 + minor);
  context->concurrent_managed_access_ = concurrent_managed != 0;
  context->read_only_host_register_ = read_only_register != 0;
  context->host_pointer_for_registered_memory_ = host_pointer != 0;
  // Copies between any two buffers (cuMemcpyAsync) infer their direction
  // from unified addresses, which every 64-bit Linux driver has.
  if (!unified) {
    return UnavailableError("cuda: device '", context->name_, "' lacks unified addressing, which this driver needs");
  }

  result = cu.cuDevicePrimaryCtxRetain(&context->context_, context->device_);
  if (result != CUDA_SUCCESS) {
    context->context_ = nullptr;
    return CuError(result, StrCat("cuda: cuDevicePrimaryCtxRetain for '", context->name_, "'"));
  }
  STRATA_RETURN_IF_ERROR(context->MakeCurrent());
  result = cu.cuStreamCreate(&context->stream_, CU_STREAM_NON_BLOCKING);
  if (result != CUDA_SUCCESS) {
    context->stream_ = nullptr;
    return CuError(result, "cuda: cuStreamCreate");
  }
  return context;
}

CudaContext::~CudaContext() {
  if (!context_) return;
  // Errors are dropped: at process exit the driver may be gone already.
  if (cu_.cuCtxSetCurrent(context_) == CUDA_SUCCESS && stream_) {
    cu_.cuStreamSynchronize(stream_);
    cu_.cuStreamDestroy(stream_);
  }
  cu_.cuDevicePrimaryCtxRelease(device_);
}

Status CudaContext::MakeCurrent() const {
  CUresult result = cu_.cuCtxSetCurrent(context_);
  if (result != CUDA_SUCCESS) return CuError(result, StrCat("cuda: cuCtxSetCurrent for '", name_, "'"));
  return OkStatus();
}

std::string CudaContext::Describe() const {
  return StrCat(name_, ", sm_", arch_, ", ", multiprocessors_, " multiprocessors, ", Gibibytes(total_memory_),
                ", CUDA ", CudaVersionString(cu_.driver_version));
}

std::vector<std::string> CudaContext::Details() const {
  auto yes = [](bool value) { return value ? "yes" : "no"; };
  std::string devices;
  for (size_t i = 0; i < device_list_.size(); ++i) {
    devices += StrCat(i ? "; " : "", device_list_[i], i == device_index_ ? " (this one)" : "");
  }
  return {
      StrCat("devices (cuda://INDEX): ", devices),
      StrCat("compute capability ", arch_ / 10, ".", arch_ % 10, " (sm_", arch_, "), executable format cuda-ptx; ",
             "CUDA driver API ", CudaVersionString(cu_.driver_version), " (", CudaLibraryName(), ")"),
      StrCat("memory ", Gibibytes(total_memory_), "; managed memory with concurrent host access ",
             yes(concurrent_managed_access_), "; read-only host registration ", yes(read_only_host_register_)),
      StrCat("block max ", max_threads_per_block_, " threads (", max_block_dim_[0], "x", max_block_dim_[1], "x",
             max_block_dim_[2], "); grid max ", max_grid_dim_[0], "x", max_grid_dim_[1], "x", max_grid_dim_[2],
             "; static shared memory ", max_shared_memory_per_block_, " B per block (", max_shared_memory_per_block_optin_,
             " B opt-in)"),
  };
}

Status CudaContext::failure() const {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  return failure_;
}

void CudaContext::Fail(const Status& status) {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  if (failure_.ok()) failure_ = status;
}

}  // namespace strata::cuda
