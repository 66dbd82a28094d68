#include "drivers/stream/stream_executable.h"

namespace strata::stream {

KernelLimits DeviceKernelLimits(const StreamContext& context) {
  const DeviceFacts& facts = context.facts();
  KernelLimits limits;
  limits.max_threads_per_block = facts.max_threads_per_block;
  for (int d = 0; d < 3; ++d) limits.max_block_dim[d] = facts.max_block_dim[d];
  limits.max_shared_memory_per_block = facts.max_shared_memory_per_block;
  limits.max_shared_memory_per_block_optin =
      std::max(facts.max_shared_memory_per_block_optin, facts.max_shared_memory_per_block);
  return limits;
}

std::vector<size_t> AbiParameterSizes(const hal::EntryPointInfo& info) {
  std::vector<size_t> sizes(info.binding_count, sizeof(DevicePtr));
  if (!info.check_messages.empty()) sizes.push_back(sizeof(DevicePtr));
  sizes.insert(sizes.end(), info.constant_count, sizeof(uint32_t));
  return sizes;
}

StreamExecutable::StreamExecutable(std::shared_ptr<StreamContext> context, const hal::ExecutableParams& params,
                                   std::vector<hal::EntryPointInfo> entry_points, ModuleHandle module)
    : Executable(context->family(), std::string(params.name), context->executable_format(), std::move(entry_points)),
      context_(std::move(context)),
      module_(module) {}

StreamExecutable::~StreamExecutable() {
  if (module_ && context_->MakeCurrent().ok()) context_->UnloadModule(module_);
}

StatusOr<Ref<StreamExecutable>> StreamExecutable::Create(std::shared_ptr<StreamContext> context,
                                                         const hal::ExecutableParams& params,
                                                         std::vector<hal::EntryPointInfo> entry_points,
                                                         ModuleHandle module, const KernelLookup& lookup,
                                                         const std::string& on_device) {
  const std::string prefix = StrCat("executable '", params.name, "' (", context->executable_format(), "): ");
  Ref<StreamExecutable> executable =
      Ref<StreamExecutable>::Adopt(new StreamExecutable(context, params, std::move(entry_points), module));
  for (const hal::EntryPointInfo& entry : executable->entry_points()) {
    StatusOr<KernelFunction> function = lookup(entry);
    if (!function.ok()) return std::move(function).status().Annotate(prefix, "entry point '", entry.name, "': ");
    const uint64_t threads = uint64_t{entry.workgroup_size[0]} * entry.workgroup_size[1] * entry.workgroup_size[2];
    if (threads > function->max_threads_per_block) {
      return FailedPreconditionError(prefix, "entry point '", entry.name, "' has ", threads,
                                     " threads per workgroup, but its kernel runs at most ",
                                     function->max_threads_per_block, " per block", on_device, " (it uses ",
                                     function->registers, " registers per thread); compile it for a smaller workgroup");
    }
    executable->functions_.push_back(function->function);
    executable->dynamic_shared_bytes_.push_back(function->dynamic_shared_bytes);
  }
  return executable;
}

}  // namespace strata::stream
