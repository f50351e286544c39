#include "torch_cohort/cpu_allocator.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <atomic>
#include <mutex>

#include "cohort/runtime.h"

namespace cohort::torch_cohort {
namespace {

void freeDeviceBlock(void* p) { (void)runtime::deviceFree(p); }

// torch's raw_deallocate (kernels' scratch, e.g. gelu's) takes one deleter for
// every block: ours or the fallback's, told apart by address.
std::atomic<c10::DeleterFnPtr> gFallbackRawDeleter{nullptr};
void freeAnyBlock(void* p) {
  if (isDeviceMemory(reinterpret_cast<std::uintptr_t>(p))) {
    freeDeviceBlock(p);
  } else {
    gFallbackRawDeleter.load(std::memory_order_acquire)(p);
  }
}

// Owned by the process (installed once, never destroyed: tensors it made may be
// freed at exit). Thread-safe: the threshold and device are atomics, the rest is
// immutable.
class DeviceMemoryAllocator final : public c10::Allocator {
 public:
  DeviceMemoryAllocator(c10::Allocator* fallback, int device)
      : fallback_(fallback), device_(device) {}

  c10::DataPtr allocate(size_t n) const override {
    const int64_t min = minBytes_.load(std::memory_order_relaxed);
    if (min >= 0 && n >= static_cast<size_t>(min) && n > 0) {
      // deviceMalloc takes the calling thread's device; torch allocates on threads
      // Cohort never saw (autograd, DDP's reducer).
      int current = -1;
      if (runtime::getDevice(&current).ok() || runtime::setDevice(device_).ok()) {
        void* p = nullptr;
        if (runtime::deviceMalloc(&p, n).ok()) {
          return {p, p, &freeDeviceBlock, c10::Device(c10::DeviceType::CPU)};
        }
      }
      // The device is full (or unusable here): ordinary memory, which works too.
    }
    return fallback_->allocate(n);
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return fallback_->raw_deleter() != nullptr ? &freeAnyBlock : nullptr;
  }

  int64_t setMinBytes(int64_t minBytes) { return minBytes_.exchange(minBytes); }

 private:
  c10::Allocator* const fallback_;
  const int device_;
  std::atomic<int64_t> minBytes_{-1};
};

}  // namespace

int64_t useDeviceMemory(int64_t minBytes) {
  static std::mutex mu;
  static DeviceMemoryAllocator* installed = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (installed == nullptr) {
    if (minBytes < 0) return -1;
    int device = -1;
    TORCH_CHECK(runtime::getDevice(&device).ok(),
                "cohort: this thread has no device yet; create a cohort process group first "
                "(init_process_group or new_group)");
    gFallbackRawDeleter.store(c10::GetCPUAllocator()->raw_deleter(), std::memory_order_release);
    installed = new DeviceMemoryAllocator(c10::GetCPUAllocator(), device);
    c10::SetCPUAllocator(installed);
  }
  return installed->setMinBytes(minBytes);
}

bool isDeviceMemory(std::uintptr_t address) {
  runtime::PointerAttributes a;
  return runtime::pointerGetAttributes(reinterpret_cast<const void*>(address), &a).ok() &&
         a.isDevice;
}

}  // namespace cohort::torch_cohort
