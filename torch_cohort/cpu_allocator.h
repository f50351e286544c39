// CPU tensors in Cohort's device memory: torch's CPU allocator replaced, on
// request, by one that takes large blocks from this process's emulated device.
#pragma once

#include <cstdint>

namespace cohort::torch_cohort {

/// From now on, CPU tensors of at least `minBytes` live in the device memory of
/// the calling thread's device (which peers of the node map, so collectives on
/// them copy nothing); smaller ones, and any that the device cannot hold, come
/// from the allocator torch had. Tensors made before keep their memory. The first
/// call installs the allocator (process-wide, for the process's life); later calls
/// change the threshold; minBytes < 0 turns it off (torch's allocator serves all).
/// Returns the threshold before the call (-1: off), so that a caller can restore
/// it. Thread-safe. Errors (no device yet) raise.
int64_t useDeviceMemory(int64_t minBytes);

/// Whether `address` is memory of an emulated device (for tests and examples).
bool isDeviceMemory(std::uintptr_t address);

}  // namespace cohort::torch_cohort
