#include "drivers/stream/stream_buffer.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace strata::stream {

namespace {

constexpr hal::MemoryTypes kDeviceLocal = hal::kMemoryDeviceLocal;
constexpr hal::MemoryTypes kHostPinned = hal::kMemoryHostVisible | hal::kMemoryHostCoherent;
constexpr hal::MemoryTypes kManaged = hal::kMemoryDeviceLocal | hal::kMemoryHostVisible | hal::kMemoryHostCoherent;
// Every CUDA and HIP allocation is aligned at least this much.
constexpr uint64_t kAllocationAlignment = 256;

// Host memory registered for the device, by page range (see
// stream_buffer.h): ranges never overlap; each counts the imports using it.
class HostRegistry {
 public:
  static HostRegistry& Get() {
    // Never destroyed: imported buffers may be released during static
    // destruction.
    static HostRegistry* registry = new HostRegistry();
    return *registry;
  }

  // Registers the pages of [begin, end) that are not registered yet and
  // counts one more user of every range that covers them; returns the
  // ranges' keys for Release.
  StatusOr<std::vector<uintptr_t>> Acquire(const std::shared_ptr<StreamContext>& context, uintptr_t begin,
                                           uintptr_t end, bool read_only) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<uintptr_t> used;
    auto fail = [&](Status status) {
      ReleaseLocked(used);
      return status;
    };
    auto it = chunks_.upper_bound(begin);
    if (it != chunks_.begin() && std::prev(it)->second.end > begin) --it;
    for (uintptr_t cursor = begin; cursor < end;) {
      if (it != chunks_.end() && it->first <= cursor) {
        Chunk& chunk = it->second;
        if (chunk.read_only && !read_only) {
          return fail(FailedPreconditionError("import: host memory at 0x", Hex(cursor),
                                              " is registered read-only for another import; a writable import ",
                                              "cannot share its pages"));
        }
        ++chunk.users;
        used.push_back(it->first);
        cursor = chunk.end;
        ++it;
        continue;
      }
      const uintptr_t gap_end = it == chunks_.end() ? end : std::min<uintptr_t>(end, it->first);
      StatusOr<bool> registered = context->RegisterHost(reinterpret_cast<void*>(cursor), gap_end - cursor, read_only);
      if (!registered.ok()) {
        return fail(std::move(registered).status().Annotate("import: registering ", gap_end - cursor,
                                                            " bytes of host memory at 0x", Hex(cursor), ": "));
      }
      // Registered by someone else (a library of the program): usable as it
      // is, and theirs to unregister.
      Chunk chunk{gap_end, 1, read_only, !*registered, context};
      it = std::next(chunks_.emplace(cursor, std::move(chunk)).first);
      used.push_back(cursor);
      cursor = gap_end;
    }
    return used;
  }

  void Release(const std::vector<uintptr_t>& used) {
    std::lock_guard<std::mutex> lock(mutex_);
    ReleaseLocked(used);
  }

 private:
  struct Chunk {
    uintptr_t end;
    uint32_t users;
    bool read_only;
    bool external;
    // The context that registered it, kept until it is unregistered there.
    std::shared_ptr<StreamContext> context;
  };

  void ReleaseLocked(const std::vector<uintptr_t>& used) {
    for (uintptr_t key : used) {
      auto it = chunks_.find(key);
      if (--it->second.users > 0) continue;
      if (!it->second.external && it->second.context->MakeCurrent().ok()) {
        it->second.context->UnregisterHost(reinterpret_cast<void*>(key));
      }
      chunks_.erase(it);
    }
  }

  std::mutex mutex_;
  std::map<uintptr_t, Chunk> chunks_;
};

}  // namespace

// ---------------------------------------------------------------------------
// BlockCache

BlockCache::BlockCache(std::shared_ptr<StreamContext> context, uint64_t limit)
    : context_(std::move(context)), limit_(limit) {}

BlockCache::~BlockCache() { Clear(); }

bool BlockCache::Take(MemoryKind kind, uint64_t size, Block* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->kind != kind || it->size != size) continue;
    *block = it->block;
    bytes_ -= size;
    entries_.erase(std::next(it).base());
    return true;
  }
  return false;
}

void BlockCache::Give(MemoryKind kind, uint64_t size, Block block) {
  std::vector<Entry> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back({kind, size, block});
    bytes_ += size;
    while (bytes_ > limit_ && !entries_.empty()) {
      evicted.push_back(entries_.front());
      bytes_ -= entries_.front().size;
      entries_.pop_front();
    }
  }
  for (const Entry& entry : evicted) Free(entry);
}

bool BlockCache::Clear() {
  std::deque<Entry> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries.swap(entries_);
    bytes_ = 0;
  }
  for (const Entry& entry : entries) Free(entry);
  return !entries.empty();
}

void BlockCache::Free(const Entry& entry) const {
  // Errors are dropped: a buffer released at process exit may outlive the
  // driver.
  if (!context_->MakeCurrent().ok()) return;
  switch (entry.kind) {
    case MemoryKind::kDevice:
    case MemoryKind::kManaged: context_->FreeDevice(entry.block.device); break;
    case MemoryKind::kPinnedHost: context_->FreePinned(entry.block.host); break;
    case MemoryKind::kImported: break;
  }
}

// ---------------------------------------------------------------------------
// StreamBuffer

StreamBuffer::StreamBuffer(std::shared_ptr<StreamContext> context, MemoryKind kind, hal::MemoryTypes memory_types,
                       const hal::BufferParams& params, uint64_t length, DevicePtr device_address, uint8_t* host,
                       std::vector<uintptr_t> registrations, hal::Allocator::ReleaseCallback release,
                       std::shared_ptr<BlockCache> cache, uint64_t allocated_size)
    : Buffer(context->family(), memory_types, params.usage, params.access, length),
      context_(std::move(context)),
      kind_(kind),
      device_address_(device_address),
      host_(host),
      registrations_(std::move(registrations)),
      release_(std::move(release)),
      cache_(std::move(cache)),
      allocated_size_(allocated_size) {}

StreamBuffer::~StreamBuffer() {
  if (cache_ && kind_ != MemoryKind::kImported) cache_->Give(kind_, allocated_size_, {device_address_, host_});
  if (!registrations_.empty()) HostRegistry::Get().Release(registrations_);
  if (release_) release_();
}

StatusOr<uint8_t*> StreamBuffer::MapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access) {
  if (!host_) return FailedPreconditionError("buffer map: the buffer's memory is not mapped for the host");
  return host_ + offset;
}

Status StreamBuffer::UnmapRange(uint64_t offset, uint64_t length, hal::MemoryAccesses access, uint8_t* data) {
  // Pinned, managed and registered host memory are all coherent.
  return OkStatus();
}

// ---------------------------------------------------------------------------
// StreamAllocator

StatusOr<Ref<StreamAllocator>> StreamAllocator::Create(std::shared_ptr<StreamContext> context) {
  const uint64_t host_memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  std::vector<hal::MemoryHeap> heaps;
  heaps.push_back({kDeviceLocal, hal::kUsageAll & ~hal::kUsageMapping, context->facts().total_memory, kAllocationAlignment});
  // Managed memory before pinned: a host-visible buffer (an input the host
  // fills once, a result it reads) then migrates to the GPU when a kernel
  // first touches it, instead of every kernel reading it over PCIe.
  if (context->facts().concurrent_managed_access) {
    heaps.push_back({kManaged, hal::kUsageAll, context->facts().total_memory, kAllocationAlignment});
  }
  heaps.push_back({kHostPinned, hal::kUsageAll, host_memory, kAllocationAlignment});
  return Ref<StreamAllocator>::Adopt(new StreamAllocator(std::move(context), std::move(heaps)));
}

StreamAllocator::StreamAllocator(std::shared_ptr<StreamContext> context, std::vector<hal::MemoryHeap> heaps)
    : Allocator(std::move(heaps)),
      context_(context),
      cache_(std::make_shared<BlockCache>(
          context, std::min<uint64_t>(context->facts().total_memory / 4, uint64_t(4) << 30))) {}

StatusOr<Ref<StreamBuffer>> StreamAllocator::AllocateOfTypes(hal::MemoryTypes types, const hal::BufferParams& params,
                                                         uint64_t length, ReleaseCallback release) {
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  // Empty buffers get bytes of their own, so that they have addresses.
  const uint64_t size = AlignUp(std::max<uint64_t>(length, 1), kAllocationAlignment);
  const MemoryKind kind = types == kDeviceLocal ? MemoryKind::kDevice
                          : types == kManaged   ? MemoryKind::kManaged
                                                : MemoryKind::kPinnedHost;
  BlockCache::Block block;
  if (cache_->Take(kind, size, &block)) {
    return MakeRef<StreamBuffer>(context_, kind, types, params, length, block.device, block.host,
                                 std::vector<uintptr_t>{}, std::move(release), cache_, size);
  }
  StatusOr<Ref<StreamBuffer>> buffer = AllocateNew(kind, types, params, length, size, release);
  // Out of memory with blocks kept: free them and try once more.
  if (!buffer.ok() && buffer.status().code() == StatusCode::kResourceExhausted && cache_->Clear()) {
    buffer = AllocateNew(kind, types, params, length, size, release);
  }
  return buffer;
}

StatusOr<Ref<StreamBuffer>> StreamAllocator::AllocateNew(MemoryKind kind, hal::MemoryTypes types,
                                                         const hal::BufferParams& params, uint64_t length,
                                                         uint64_t size, ReleaseCallback& release) {
  DevicePtr device_address = 0;
  uint8_t* host = nullptr;
  Status status;
  if (kind == MemoryKind::kDevice) {
    StatusOr<DevicePtr> allocated = context_->AllocateDevice(size);
    status = allocated.status();
    if (allocated.ok()) device_address = *allocated;
  } else if (kind == MemoryKind::kManaged) {
    StatusOr<DevicePtr> allocated = context_->AllocateManaged(size);
    status = allocated.status();
    if (allocated.ok()) {
      device_address = *allocated;
      host = reinterpret_cast<uint8_t*>(device_address);
    }
  } else {
    StatusOr<PinnedMemory> allocated = context_->AllocatePinned(size);
    status = allocated.status();
    if (allocated.ok()) {
      device_address = allocated->device;
      host = allocated->host;
    }
  }
  if (!status.ok()) {
    return status.Annotate("allocate: ", length, " bytes of ", hal::DescribeMemoryTypes(types), " memory on '",
                           context_->name(), "': ");
  }
  return MakeRef<StreamBuffer>(context_, kind, types, params, length, device_address, host, std::vector<uintptr_t>{},
                             std::move(release), cache_, size);
}

StatusOr<Ref<hal::Buffer>> StreamAllocator::AllocateBuffer(const hal::MemoryHeap& heap, const hal::BufferParams& params,
                                                         uint64_t length) {
  STRATA_ASSIGN_OR_RETURN(Ref<StreamBuffer> buffer, AllocateOfTypes(heap.memory_types, params, length, nullptr));
  return Ref<hal::Buffer>(std::move(buffer));
}

StatusOr<Ref<StreamBuffer>> StreamAllocator::AllocateInternal(uint64_t length) {
  return AllocateOfTypes(kHostPinned, {}, length, nullptr);
}

StatusOr<Ref<hal::Buffer>> StreamAllocator::ImportHostBuffer(const hal::BufferParams& params, std::span<uint8_t> memory,
                                                           ReleaseCallback release) {
  if ((kHostPinned & params.memory_types) != params.memory_types) {
    return InvalidArgumentError("import: imported host memory is ", hal::DescribeMemoryTypes(kHostPinned), ", not ",
                                hal::DescribeMemoryTypes(params.memory_types));
  }
  if (memory.empty()) {
    // Nothing to share: an empty buffer of the driver's own that still runs
    // the caller's release callback.
    STRATA_ASSIGN_OR_RETURN(Ref<StreamBuffer> buffer, AllocateOfTypes(kHostPinned, params, 0, std::move(release)));
    return Ref<hal::Buffer>(std::move(buffer));
  }
  if (!context_->facts().host_pointer_for_registered_memory) {
    return UnimplementedError("import: device '", context_->name(), "' cannot use registered host memory at its host ",
                              "address; allocate a buffer and copy into it");
  }
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t address = reinterpret_cast<uintptr_t>(memory.data());
  const uintptr_t begin = address / page * page;
  const uintptr_t end = (address + memory.size() + page - 1) / page * page;
  const bool read_only = !(params.access & hal::kAccessWrite);
  STRATA_ASSIGN_OR_RETURN(std::vector<uintptr_t> registrations,
                          HostRegistry::Get().Acquire(context_, begin, end, read_only));
  return Ref<hal::Buffer>(MakeRef<StreamBuffer>(context_, MemoryKind::kImported, kHostPinned, params, memory.size(),
                                              static_cast<DevicePtr>(address), memory.data(),
                                              std::move(registrations), std::move(release)));
}

}  // namespace strata::stream
