// Spinning on a word another thread writes, shared by the CPU drivers'
// threads (cpu-task's teams and lingering helpers, a streamed command buffer's
// recording thread).
#pragma once

#include <thread>

namespace strata::cpu {

// Tells the core that this thread spins on a memory word (x86 `pause`, Arm
// `yield`), so that its loads do not flood the line another core is about
// to write.
inline void SpinPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until `done()`, yielding the core after 1024 pauses.
template <typename Done>
void SpinUntil(const Done& done) {
  for (int spins = 0; !done(); ++spins) {
    if (spins >= 1024) std::this_thread::yield();
    else SpinPause();
  }
}

}  // namespace strata::cpu
