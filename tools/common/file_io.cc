#include "tools/common/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <sys/stat.h>
#include <unistd.h>

namespace strata::tools {

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                                    : ~uint64_t{0};
}

StatusOr<std::vector<uint8_t>> ReadFile(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) {
    const int error = errno;
    if (error == ENOENT) return NotFoundError("cannot open '", path, "': ", std::strerror(error));
    return InvalidArgumentError("cannot open '", path, "': ", std::strerror(error));
  }
  // The size is checked before anything is read: a file larger than this
  // machine's memory (a sparse one, or a device) is refused at once rather
  // than read until the allocator gives up.
  struct stat info;
  const bool regular = fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode);
  if (const uint64_t memory = PhysicalMemoryBytes(); regular && static_cast<uint64_t>(info.st_size) > memory) {
    std::fclose(file);
    return ResourceExhaustedError("'", path, "' holds ", static_cast<uint64_t>(info.st_size),
                                  " bytes, more than this machine's ", memory, " bytes of memory");
  }
  std::vector<uint8_t> bytes;
  try {
    if (regular) bytes.reserve(static_cast<size_t>(info.st_size));
    uint8_t chunk[1 << 16];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  } catch (const std::exception&) {  // bad_alloc or length_error: nothing else throws here
    std::fclose(file);
    return ResourceExhaustedError("cannot hold '", path, "' in memory (", bytes.size(), " bytes read)");
  }
  const bool failed = std::ferror(file);
  const int error = errno;
  std::fclose(file);
  if (failed) return InvalidArgumentError("cannot read '", path, "': ", std::strerror(error));
  return bytes;
}

Status WriteFile(const std::string& path, std::span<const uint8_t> bytes) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return InvalidArgumentError("cannot write '", path, "': ", std::strerror(errno));
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  const int error = errno;
  if (std::fclose(file) != 0 || !written) {
    return InvalidArgumentError("cannot write '", path, "': ", std::strerror(written ? errno : error));
  }
  return OkStatus();
}

}  // namespace strata::tools
