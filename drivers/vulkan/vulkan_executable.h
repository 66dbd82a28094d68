// VulkanExecutable: a SPIR-V module with one compute pipeline per entry point.
//
// The format is "vulkan-spirv": `data` is one SPIR-V module and `metadata` a
// VulkanExecutableDef (schemas/vulkan_executable.fbs, which also states the
// kernel ABI). Preparation trusts neither: the metadata is verified as an
// untrusted FlatBuffer, and the module is walked far enough to check its
// header (magic, version, word count), its OpCapability and OpExtension
// lists and its OpEntryPoint and LocalSize/LocalSizeId execution modes against
// the metadata; then every count is checked against the HAL's limits
// (hal::Executable::kMaxBindings, kMaxConstants) and the device's
// (maxPushConstantsSize, maxPerStageDescriptorStorageBuffers,
// maxComputeWorkGroupSize/Invocations, maxComputeSharedMemorySize), and every
// capability against the device's features. Each refusal names the entry
// point or capability with the expected and actual values.
//
// Pipelines: one VkShaderModule; per entry point one VkDescriptorSetLayout
// (set 0: storage buffers at bindings 0 .. n-1, plus the check-status word at
// binding n when the entry point has checks; push-descriptor layouts when the
// device has VK_KHR_push_descriptor), one VkPipelineLayout (one push-constant
// range of 4 * constant_count bytes at offset 0) and one compute pipeline,
// all created here, through the device's VkPipelineCache.
//
// Ownership: keeps the VulkanContext alive; immutable after creation, so
// thread-safe (see hal/executable.h).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivers/vulkan/vulkan_context.h"
#include "hal/executable.h"

namespace strata::vulkan {

inline constexpr const char* kVulkanSpirvFormat = "vulkan-spirv";

// What a SPIR-V module declares, as far as the driver checks it.
struct SpirvModuleInfo {
  uint32_t version = 0;
  std::vector<uint32_t> capabilities;
  std::vector<std::string> extensions;
  struct EntryPoint {
    std::string name;
    uint32_t execution_model = 0;
    uint32_t id = 0;
    bool has_local_size = false;
    bool local_size_id = false;  // given by LocalSizeId (needs maintenance4)
    uint32_t local_size[3] = {0, 0, 0};
  };
  std::vector<EntryPoint> entry_points;
};

// Walks a SPIR-V module's instructions (checking that they tile the words
// exactly); fails for anything that is not a well-formed module header and
// instruction stream.
StatusOr<SpirvModuleInfo> ParseSpirv(std::span<const uint8_t> data);

// The float controls (SPV_KHR_float_controls) a device honours, per width:
// [0] f16, [1] f32, [2] f64.
struct FloatControlsSupport {
  bool denorm_preserve[3] = {false, false, false};
  bool signed_zero_inf_nan_preserve[3] = {false, false, false};
  static FloatControlsSupport Of(const VkPhysicalDeviceFloatControlsProperties& properties);
};

// The compiler asks for IEEE denormals, NaN, infinities and signed zeros
// (execution modes DenormPreserve and SignedZeroInfNanPreserve, per float
// width); Vulkan forbids a mode the device does not support. Removes from a
// parsed module's words each such mode `support` lacks, and the capability
// of a mode no entry point keeps; returns how many modes it removed. The
// kernel then computes as the device does by default (flushed denormals,
// say), which the op suite shows.
size_t StripFloatControls(std::vector<uint32_t>& words, const FloatControlsSupport& support);

// Whether `context`'s device has what SPIR-V capability `name` needs;
// INVALID_ARGUMENT for a name the driver does not know, FAILED_PRECONDITION
// naming the device feature it lacks.
Status CheckCapability(const VulkanContext& context, std::string_view name);

class VulkanExecutable final : public hal::Executable {
 public:
  static StatusOr<Ref<VulkanExecutable>> Create(std::shared_ptr<VulkanContext> context,
                                                    const hal::ExecutableParams& params);

  struct Pipeline {
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
  };
  const Pipeline& pipeline(uint32_t entry_point) const { return pipelines_[entry_point]; }
  const VulkanContext* context() const { return context_.get(); }

 protected:
  ~VulkanExecutable() override;

 private:
  VulkanExecutable(std::shared_ptr<VulkanContext> context, std::string name,
                   std::vector<hal::EntryPointInfo> entry_points);

  std::shared_ptr<VulkanContext> context_;
  VkShaderModule module_ = VK_NULL_HANDLE;
  std::vector<Pipeline> pipelines_;
};

}  // namespace strata::vulkan
