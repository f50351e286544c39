// Copies that bypass the cache.
#pragma once

#include <cstddef>

#include "kernels/simd.h"

namespace cohort::kernels {

/// memcpy with non-temporal stores: the destination (another rank's output, not read
/// again soon by this core) does not pull its lines into the cache first, which halves
/// the memory traffic of large copies. Any alignment and size. The stores are weakly
/// ordered: call streamFence() before telling another thread or process that the data
/// is there.
void streamCopy(void* dst, const void* src, std::size_t bytes, SimdPath path = activePath());

/// Orders the streaming stores this thread made before the stores that follow (sfence).
void streamFence();

}  // namespace cohort::kernels
