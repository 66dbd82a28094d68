#include "hal/gpu_commands.h"

#include <algorithm>

namespace strata::hal {

Status DispatchCheckStatus(uint32_t word, const Executable& executable, uint32_t entry_point) {
  if (word == 0) return OkStatus();
  const EntryPointInfo& info = executable.entry_points()[entry_point];
  const std::string where = StrCat("dispatch of '", info.name, "' (executable '", executable.name(), "')");
  if (word - 1 < info.check_messages.size()) {
    // A check of the model itself (a bounds check on an index it computed
    // from an input, say): the input is what is wrong.
    return OutOfRangeError(where, " failed a check of the model: ", info.check_messages[word - 1]);
  }
  return AbortedError(where, " failed: the kernel returned ", word, " in its check-status word, which is not one of its ",
                      info.check_messages.size(), " checks");
}

FillSplit SplitFill(uint64_t address, uint64_t length, uint32_t pattern, uint32_t pattern_length) {
  auto byte_at = [&](uint64_t i) { return static_cast<uint8_t>(pattern >> (8 * (i % pattern_length))); };
  FillSplit split;
  split.head = std::min<uint64_t>(length, (4 - address % 4) % 4);
  split.middle = (length - split.head) / 4 * 4;
  split.tail = length - split.head - split.middle;
  // Both edges hold at most 3 bytes (the bounds say so to the compiler too).
  for (uint64_t i = 0; i < split.head && i < 3; ++i) split.head_bytes[i] = byte_at(i);
  for (uint32_t k = 0; k < 4; ++k) split.word |= uint32_t{byte_at(split.head + k)} << (8 * k);
  for (uint64_t i = 0; i < split.tail && i < 3; ++i) split.tail_bytes[i] = byte_at(split.head + split.middle + i);
  return split;
}

}  // namespace strata::hal
