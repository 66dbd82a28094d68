// Spinning helpers for short waits (host semaphores, the CPU drivers' pools), where parking a thread
// in the kernel and waking it again would cost more than the wait itself.
#pragma once

#include <atomic>
#include <thread>

namespace strata::hal {

// Tells the core that this thread is spinning (frees pipeline resources for
// the sibling hyperthread, saves power).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// A lock for critical sections of a few instructions (pushing or popping a
// pointer). A std::mutex that finds its owner inside such a section puts the
// caller to sleep in the kernel, which costs microseconds; this spins instead,
// and yields the core if the owner was preempted mid-section.
class SpinLock {
 public:
  void lock() {
    for (uint32_t spins = 0; locked_.exchange(true, std::memory_order_acquire);) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < 64) {
          CpuRelax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace strata::hal
