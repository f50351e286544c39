// Communicator-owned device memory that only grows: reused by every operation,
// since first touch of fresh memory is slow.
#pragma once

#include <cstddef>

#include "cohort/status.h"

namespace cohort::collective {

/// Not thread-safe: used from one thread at a time (the communicator's stream
/// worker). release() frees it; so does destruction.
class DeviceArea {
 public:
  /// `what` names the memory in errors ("communicator scratch memory").
  explicit DeviceArea(const char* what) : what_(what) {}
  ~DeviceArea() { release(); }
  DeviceArea(const DeviceArea&) = delete;
  DeviceArea& operator=(const DeviceArea&) = delete;

  /// At least `bytes` of device memory of the current device (the same area
  /// when it is big enough, else a bigger one; the contents are not kept).
  Status get(std::size_t bytes, void** out);
  void release();

 private:
  const char* what_;
  void* area_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace cohort::collective
