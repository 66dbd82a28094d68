#include "drivers/vulkan/vulkan_buffer.h"

#include <cstring>

#include <algorithm>
#include <bit>

namespace strata::vulkan {

const hal::DriverFamily kVulkanFamily = {"vulkan"};

namespace {

constexpr uint64_t kBlockSize = uint64_t{64} << 20;
constexpr VkBufferUsageFlags kBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

uint64_t AlignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) & ~(alignment - 1); }

hal::MemoryTypes HalMemoryTypes(VkMemoryPropertyFlags flags) {
  hal::MemoryTypes types = 0;
  if (flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) types |= hal::kMemoryDeviceLocal;
  if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) types |= hal::kMemoryHostVisible;
  if (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) types |= hal::kMemoryHostCoherent;
  return types;
}

}  // namespace

// ---------------------------------------------------------------------------
// RangeAllocator

std::optional<uint64_t> RangeAllocator::Allocate(uint64_t length, uint64_t alignment) {
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t begin = it->first, end = it->first + it->second;
    const uint64_t aligned = AlignUp(begin, alignment);
    if (aligned > end || end - aligned < length) continue;
    // Split the free range into what precedes the allocation and what follows.
    free_.erase(it);
    if (aligned > begin) free_[begin] = aligned - begin;
    if (end > aligned + length) free_[aligned + length] = end - (aligned + length);
    return aligned;
  }
  return std::nullopt;
}

void RangeAllocator::Free(uint64_t offset, uint64_t length) {
  auto next = free_.lower_bound(offset);
  uint64_t begin = offset, end = offset + length;
  if (next != free_.end() && next->first == end) {
    end += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == begin) {
      begin = previous->first;
      free_.erase(previous);
    }
  }
  free_[begin] = end - begin;
}

uint64_t RangeAllocator::free_bytes() const {
  uint64_t total = 0;
  for (const auto& [offset, length] : free_) total += length;
  return total;
}

// ---------------------------------------------------------------------------
// MemoryPool

MemoryPool::MemoryPool(std::shared_ptr<VulkanContext> context, uint32_t memory_type_index, uint64_t block_size,
                       uint64_t alignment, uint64_t idle_limit)
    : context_(std::move(context)),
      memory_type_index_(memory_type_index),
      block_size_(block_size),
      alignment_(alignment),
      idle_limit_(idle_limit) {
  const VkMemoryPropertyFlags flags = context_->memory().memoryTypes[memory_type_index].propertyFlags;
  host_visible_ = flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  coherent_ = flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
}

MemoryPool::~MemoryPool() {
  for (auto& block : blocks_) DestroyBlock(block.get());
  for (auto& block : idle_) DestroyBlock(block.get());
}

StatusOr<MemoryBlock*> MemoryPool::CreateBlock(uint64_t size, bool dedicated) {
  const DeviceFunctions& vk = context_->vk();
  VkDevice device = context_->device();
  auto block = std::make_unique<MemoryBlock>(size);
  block->dedicated = dedicated;
  auto allocate_info = VkMake<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  allocate_info.allocationSize = size;
  allocate_info.memoryTypeIndex = memory_type_index_;
  VkResult result = vk.vkAllocateMemory(device, &allocate_info, nullptr, &block->memory);
  if ((result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY) && !idle_.empty()) {
    TrimIdle(0);
    result = vk.vkAllocateMemory(device, &allocate_info, nullptr, &block->memory);
  }
  if (result != VK_SUCCESS) {
    return VkError(result, StrCat("allocate: vkAllocateMemory of ", size, " bytes (memory type ", memory_type_index_,
                                  ")"));
  }
  auto buffer_info = VkMake<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  buffer_info.size = size;
  buffer_info.usage = kBufferUsage;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  result = vk.vkCreateBuffer(device, &buffer_info, nullptr, &block->buffer);
  if (result == VK_SUCCESS) result = vk.vkBindBufferMemory(device, block->buffer, block->memory, 0);
  if (result == VK_SUCCESS && host_visible_) {
    void* mapped = nullptr;
    result = vk.vkMapMemory(device, block->memory, 0, VK_WHOLE_SIZE, 0, &mapped);
    block->mapped = static_cast<uint8_t*>(mapped);
  }
  if (result != VK_SUCCESS) {
    DestroyBlock(block.get());
    return VkError(result, StrCat("allocate: creating a buffer over a ", size, "-byte block"));
  }
  blocks_.push_back(std::move(block));
  return blocks_.back().get();
}

void MemoryPool::DestroyBlock(MemoryBlock* block) {
  const DeviceFunctions& vk = context_->vk();
  if (block->buffer) vk.vkDestroyBuffer(context_->device(), block->buffer, nullptr);
  // Freeing memory unmaps it.
  if (block->memory) vk.vkFreeMemory(context_->device(), block->memory, nullptr);
}

StatusOr<MemoryPool::Range> MemoryPool::Allocate(uint64_t length) {
  // Every buffer gets bytes of its own, empty ones included.
  const uint64_t reserved = AlignUp(std::max<uint64_t>(length, 1), alignment_);
  std::lock_guard<std::mutex> lock(mutex_);
  if (reserved > block_size_ / 2) {
    MemoryBlock* block = ReuseIdle(reserved);
    if (!block) {
      STRATA_ASSIGN_OR_RETURN(block, CreateBlock(reserved, /*dedicated=*/true));
    }
    block->ranges.Allocate(reserved, alignment_);
    return Range{block, 0, reserved};
  }
  for (auto& block : blocks_) {
    if (block->dedicated) continue;
    if (std::optional<uint64_t> offset = block->ranges.Allocate(reserved, alignment_)) {
      return Range{block.get(), *offset, reserved};
    }
  }
  STRATA_ASSIGN_OR_RETURN(MemoryBlock * block, CreateBlock(block_size_, /*dedicated=*/false));
  return Range{block, *block->ranges.Allocate(reserved, alignment_), reserved};
}

void MemoryPool::Free(const Range& range) {
  std::lock_guard<std::mutex> lock(mutex_);
  range.block->ranges.Free(range.offset, range.length);
  if (!range.block->ranges.empty()) return;
  // Keep one shared block for the next allocation; free the rest.
  size_t shared = 0;
  for (auto& block : blocks_) shared += !block->dedicated;
  if (!range.block->dedicated && shared == 1) return;
  auto it = std::find_if(blocks_.begin(), blocks_.end(), [&](auto& block) { return block.get() == range.block; });
  if (range.block->dedicated && range.block->ranges.size() <= idle_limit_) {
    idle_bytes_ += range.block->ranges.size();
    idle_.push_back(std::move(*it));
    blocks_.erase(it);
    TrimIdle(idle_limit_);
    return;
  }
  DestroyBlock(it->get());
  blocks_.erase(it);
}

MemoryBlock* MemoryPool::ReuseIdle(uint64_t size) {
  auto best = idle_.end();
  for (auto it = idle_.begin(); it != idle_.end(); ++it) {
    const uint64_t held = (*it)->ranges.size();
    if (held >= size && held - size <= size / 4 && (best == idle_.end() || held < (*best)->ranges.size())) best = it;
  }
  if (best == idle_.end()) return nullptr;
  idle_bytes_ -= (*best)->ranges.size();
  blocks_.push_back(std::move(*best));
  idle_.erase(best);
  return blocks_.back().get();
}

void MemoryPool::TrimIdle(uint64_t limit) {
  while (idle_bytes_ > limit) {
    idle_bytes_ -= idle_.front()->ranges.size();
    DestroyBlock(idle_.front().get());
    idle_.erase(idle_.begin());
  }
}

size_t MemoryPool::block_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_.size();
}

size_t MemoryPool::idle_block_count() {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_.size();
}

uint64_t MemoryPool::idle_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_bytes_;
}

// ---------------------------------------------------------------------------
// VulkanBuffer

VulkanBuffer::VulkanBuffer(hal::MemoryTypes memory_types, const hal::BufferParams& params, uint64_t length,
                           std::shared_ptr<MemoryPool> pool, MemoryPool::Range range,
                           hal::Allocator::ReleaseCallback release)
    : Buffer(&kVulkanFamily, memory_types, params.usage, params.access, length),
      pool_(std::move(pool)),
      range_(range),
      vk_buffer_(range.block->buffer),
      vk_offset_(range.offset),
      host_(range.block->mapped ? range.block->mapped + range.offset : nullptr),
      coherent_(pool_->coherent()),
      release_(std::move(release)) {}

VulkanBuffer::VulkanBuffer(hal::MemoryTypes memory_types, const hal::BufferParams& params, uint64_t length,
                           std::shared_ptr<VulkanContext> context, VkDeviceMemory memory, VkBuffer buffer,
                           uint64_t offset, uint8_t* host, hal::Allocator::ReleaseCallback release)
    : Buffer(&kVulkanFamily, memory_types, params.usage, params.access, length),
      context_(std::move(context)),
      imported_memory_(memory),
      vk_buffer_(buffer),
      vk_offset_(offset),
      host_(host),
      coherent_(true),
      release_(std::move(release)) {}

VulkanBuffer::~VulkanBuffer() {
  if (pool_) {
    pool_->Free(range_);
  } else {
    context_->vk().vkDestroyBuffer(context_->device(), vk_buffer_, nullptr);
    context_->vk().vkFreeMemory(context_->device(), imported_memory_, nullptr);
  }
  if (release_) release_();
}

Status VulkanBuffer::SyncRange(bool flush, uint64_t offset, uint64_t length) {
  if (coherent_ || length == 0) return OkStatus();
  VulkanContext& context = pool_->context();
  const uint64_t atom = context.limits().nonCoherentAtomSize;
  const uint64_t begin = (vk_offset_ + offset) / atom * atom;
  const uint64_t end = AlignUp(vk_offset_ + offset + length, atom);
  auto range = VkMake<VkMappedMemoryRange>(VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE);
  range.memory = range_.block->memory;
  range.offset = begin;
  range.size = end >= range_.block->ranges.size() ? VK_WHOLE_SIZE : end - begin;
  VkResult result = flush ? context.vk().vkFlushMappedMemoryRanges(context.device(), 1, &range)
                          : context.vk().vkInvalidateMappedMemoryRanges(context.device(), 1, &range);
  if (result != VK_SUCCESS) return VkError(result, flush ? "buffer unmap: flush" : "buffer map: invalidate");
  return OkStatus();
}

Status VulkanBuffer::Invalidate(uint64_t offset, uint64_t length) { return SyncRange(false, offset, length); }

StatusOr<uint8_t*> VulkanBuffer::MapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access) {
  if (!host_) return FailedPreconditionError("buffer map: the buffer's memory is not mapped for the host");
  if (access & hal::kAccessRead) STRATA_RETURN_IF_ERROR(SyncRange(false, offset, length));
  return host_ + offset;
}

Status VulkanBuffer::UnmapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access, uint8_t* data) {
  if (access & hal::kAccessWrite) return SyncRange(true, offset, length);
  return OkStatus();
}

// ---------------------------------------------------------------------------
// VulkanAllocator

StatusOr<Ref<VulkanAllocator>> VulkanAllocator::Create(std::shared_ptr<VulkanContext> context,
                                                           uint64_t max_allocation, bool unified_memory) {
  const DeviceFunctions& vk = context->vk();
  // Which memory types a storage/transfer buffer may live in, and its
  // alignment there: ask a small probe buffer.
  auto probe_info = VkMake<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  probe_info.size = 4096;
  probe_info.usage = kBufferUsage;
  VkBuffer probe;
  VkResult result = vk.vkCreateBuffer(context->device(), &probe_info, nullptr, &probe);
  if (result != VK_SUCCESS) return VkError(result, "vulkan: creating a probe buffer");
  VkMemoryRequirements requirements;
  vk.vkGetBufferMemoryRequirements(context->device(), probe, &requirements);
  vk.vkDestroyBuffer(context->device(), probe, nullptr);

  const VkPhysicalDeviceLimits& limits = context->limits();
  const uint64_t alignment =
      std::max({uint64_t{64}, requirements.alignment, uint64_t{limits.minStorageBufferOffsetAlignment},
                uint64_t{limits.nonCoherentAtomSize}});
  const VkPhysicalDeviceMemoryProperties& memory = context->memory();
  std::vector<std::pair<hal::MemoryTypes, uint32_t>> chosen;  // HAL types -> Vulkan type index
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
    if (!(requirements.memoryTypeBits & (1u << i))) continue;
    if (flags & (VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT | VK_MEMORY_PROPERTY_PROTECTED_BIT)) continue;
    const hal::MemoryTypes types = HalMemoryTypes(flags);
    if (types == 0) continue;
    const auto choose = [&](hal::MemoryTypes heap_types) {
      if (std::none_of(chosen.begin(), chosen.end(), [&](const auto& c) { return c.first == heap_types; })) {
        chosen.emplace_back(heap_types, i);
      }
    };
    if (!unified_memory && (types & hal::kMemoryDeviceLocal) && (types & hal::kMemoryHostVisible)) {
      choose(hal::kMemoryDeviceLocal);
      choose(types & ~hal::kMemoryDeviceLocal);
    } else {
      choose(types);
    }
  }
  if (chosen.empty()) return UnavailableError("vulkan: device '", context->name(), "' offers no memory for buffers");
  // Fewest bits first; among equals, Vulkan's order.
  std::sort(chosen.begin(), chosen.end(), [](const auto& a, const auto& b) {
    return std::make_pair(std::popcount(a.first), a.second) < std::make_pair(std::popcount(b.first), b.second);
  });
  std::vector<hal::MemoryHeap> heaps;
  std::vector<std::shared_ptr<MemoryPool>> pools;
  for (const auto& [types, index] : chosen) {
    const uint64_t heap_size = memory.memoryHeaps[memory.memoryTypes[index].heapIndex].size;
    const uint64_t largest = std::min({max_allocation, heap_size, context->max_memory_allocation_size()});
    hal::MemoryHeap heap;
    heap.memory_types = types;
    heap.allowed_usage = (types & hal::kMemoryHostVisible) ? hal::kUsageAll : hal::kUsageAll & ~hal::kUsageMapping;
    heap.max_allocation_size = largest;
    heap.min_alignment = alignment;
    heaps.push_back(heap);
    // Blocks of 64 MiB, or an eighth of a small heap.
    const uint64_t block_size = std::max(alignment * 2, std::min(kBlockSize, AlignUp(heap_size / 8, alignment)));
    // Idle dedicated blocks: 4 blocks' worth, at most an eighth of the heap.
    const uint64_t idle_limit = std::min(4 * kBlockSize, heap_size / 8);
    pools.push_back(
        std::make_shared<MemoryPool>(context, index, std::min(block_size, largest), alignment, idle_limit));
  }
  return Ref<VulkanAllocator>::Adopt(new VulkanAllocator(std::move(context), std::move(heaps), std::move(pools)));
}

VulkanAllocator::VulkanAllocator(std::shared_ptr<VulkanContext> context, std::vector<hal::MemoryHeap> heaps,
                                 std::vector<std::shared_ptr<MemoryPool>> pools)
    : Allocator(std::move(heaps)), context_(std::move(context)), pools_(std::move(pools)) {}

StatusOr<Ref<hal::Buffer>> VulkanAllocator::AllocateFromPool(size_t heap_index, const hal::BufferParams& params,
                                                                 uint64_t length, ReleaseCallback release) {
  STRATA_ASSIGN_OR_RETURN(MemoryPool::Range range, pools_[heap_index]->Allocate(length));
  return Ref<hal::Buffer>(MakeRef<VulkanBuffer>(heaps()[heap_index].memory_types, params, length,
                                                        pools_[heap_index], range, std::move(release)));
}

StatusOr<Ref<hal::Buffer>> VulkanAllocator::AllocateBuffer(const hal::MemoryHeap& heap,
                                                               const hal::BufferParams& params, uint64_t length) {
  return AllocateFromPool(&heap - heaps().data(), params, length, nullptr);
}

StatusOr<Ref<VulkanBuffer>> VulkanAllocator::AllocateInternal(uint64_t length) {
  for (size_t i = 0; i < heaps().size(); ++i) {
    if (!(heaps()[i].memory_types & hal::kMemoryHostVisible)) continue;
    STRATA_ASSIGN_OR_RETURN(Ref<hal::Buffer> buffer, AllocateFromPool(i, {}, length, nullptr));
    return Ref<VulkanBuffer>::Borrow(static_cast<VulkanBuffer*>(buffer.get()));
  }
  return UnavailableError("vulkan: device '", context_->name(), "' has no host-visible memory");
}

StatusOr<Ref<hal::Buffer>> VulkanAllocator::ImportHostBuffer(const hal::BufferParams& params,
                                                                 std::span<uint8_t> memory, ReleaseCallback release) {
  if (memory.empty()) {
    // Nothing to share: an empty buffer of the driver's own that still runs
    // the caller's release callback.
    for (size_t i = 0; i < heaps().size(); ++i) {
      if ((heaps()[i].memory_types & params.memory_types) == params.memory_types) {
        return AllocateFromPool(i, params, 0, std::move(release));
      }
    }
  }
  // VK_EXT_external_memory_host has no read-only import: drivers pin the
  // pages for writing (NVIDIA's faulted on read-only pages, taking the
  // process down, on an H100 with driver 580). Read-only memory is copied
  // into a host-coherent buffer of the device's own, and the caller's
  // memory released at once.
  if (!(params.access & hal::kAccessWrite)) {
    for (size_t i = 0; i < heaps().size(); ++i) {
      const hal::MemoryTypes types = heaps()[i].memory_types;
      if ((types & params.memory_types) != params.memory_types || !(types & hal::kMemoryHostVisible) ||
          !(types & hal::kMemoryHostCoherent)) {
        continue;
      }
      STRATA_ASSIGN_OR_RETURN(Ref<hal::Buffer> buffer, AllocateFromPool(i, params, memory.size(), nullptr));
      std::memcpy(static_cast<VulkanBuffer*>(buffer.get())->host_address(), memory.data(), memory.size());
      if (release) release();
      return buffer;
    }
  }
  if (!context_->external_memory_host()) {
    return UnimplementedError("import: device '", context_->name(), "' lacks ",
                              VK_EXT_EXTERNAL_MEMORY_HOST_EXTENSION_NAME,
                              ", so host memory cannot be used in place; allocate a buffer and copy into it");
  }
  const DeviceFunctions& vk = context_->vk();
  VkDevice device = context_->device();
  // The pages around the range, as the extension wants them aligned.
  const uint64_t alignment = context_->host_pointer_alignment();
  const uintptr_t address = reinterpret_cast<uintptr_t>(memory.data());
  const uintptr_t base = address / alignment * alignment;
  const uint64_t size = AlignUp(address + std::max<size_t>(memory.size(), 1), alignment) - base;
  void* host_base = reinterpret_cast<void*>(base);
  auto pointer_properties = VkMake<VkMemoryHostPointerPropertiesEXT>(VK_STRUCTURE_TYPE_MEMORY_HOST_POINTER_PROPERTIES_EXT);
  VkResult result = vk.vkGetMemoryHostPointerPropertiesEXT(
      device, VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT, host_base, &pointer_properties);
  if (result != VK_SUCCESS) return VkError(result, "import: vkGetMemoryHostPointerPropertiesEXT");
  // A host-visible, host-coherent type: the caller reads its own memory
  // without flushes.
  const VkMemoryPropertyFlags wanted = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type_index = UINT32_MAX;
  for (uint32_t i = 0; i < context_->memory().memoryTypeCount && type_index == UINT32_MAX; ++i) {
    if ((pointer_properties.memoryTypeBits & (1u << i)) &&
        (context_->memory().memoryTypes[i].propertyFlags & wanted) == wanted) {
      type_index = i;
    }
  }
  if (type_index == UINT32_MAX) {
    return UnimplementedError("import: device '", context_->name(),
                              "' offers no host-coherent memory type for imported host memory (type bits 0x",
                              Hex(pointer_properties.memoryTypeBits), ")");
  }
  const hal::MemoryTypes types = HalMemoryTypes(context_->memory().memoryTypes[type_index].propertyFlags);
  if ((types & params.memory_types) != params.memory_types) {
    return InvalidArgumentError("import: imported host memory is ", hal::DescribeMemoryTypes(types), ", not ",
                                hal::DescribeMemoryTypes(params.memory_types));
  }
  auto import_info = VkMake<VkImportMemoryHostPointerInfoEXT>(VK_STRUCTURE_TYPE_IMPORT_MEMORY_HOST_POINTER_INFO_EXT);
  import_info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  import_info.pHostPointer = host_base;
  auto allocate_info = VkMake<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  allocate_info.pNext = &import_info;
  allocate_info.allocationSize = size;
  allocate_info.memoryTypeIndex = type_index;
  VkDeviceMemory device_memory;
  result = vk.vkAllocateMemory(device, &allocate_info, nullptr, &device_memory);
  if (result != VK_SUCCESS) {
    return VkError(result, StrCat("import: importing ", size, " bytes of host memory at 0x", Hex(base)));
  }
  auto external_info = VkMake<VkExternalMemoryBufferCreateInfo>(VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO);
  external_info.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_HOST_ALLOCATION_BIT_EXT;
  auto buffer_info = VkMake<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  buffer_info.pNext = &external_info;
  buffer_info.size = size;
  buffer_info.usage = kBufferUsage;
  VkBuffer buffer = VK_NULL_HANDLE;
  result = vk.vkCreateBuffer(device, &buffer_info, nullptr, &buffer);
  if (result == VK_SUCCESS) result = vk.vkBindBufferMemory(device, buffer, device_memory, 0);
  if (result != VK_SUCCESS) {
    if (buffer) vk.vkDestroyBuffer(device, buffer, nullptr);
    vk.vkFreeMemory(device, device_memory, nullptr);
    return VkError(result, "import: creating a buffer over imported host memory");
  }
  return Ref<hal::Buffer>(MakeRef<VulkanBuffer>(types, params, memory.size(), context_, device_memory, buffer,
                                                        address - base, memory.data(), std::move(release)));
}

}  // namespace strata::vulkan
