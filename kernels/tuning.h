// The kernels' size decisions, in one place.
#pragma once

#include <cstddef>

namespace cohort::kernels::tuning {

/// Pairs of vectors each loop iteration of the float kernels handles: enough
/// independent loads in flight to keep a core's memory pipeline busy, few enough to
/// stay in AVX2's 16 registers.
constexpr std::size_t kFloatUnroll = 2;
/// Bytes each iteration of the streaming copy moves (a multiple of 64: whole lines).
constexpr std::size_t kStreamCopyStep = 256;

}  // namespace cohort::kernels::tuning
