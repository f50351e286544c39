// The AscendC kernel language on the CPU, part 1 (kernel_operator.h includes it):
// the device language's qualifiers and element types, the running block's identity
// and unified buffer (UB), traps, positions, pipes and events. Per thread: a block's
// state lives on the thread that runs it.
#ifndef COHORT_ASCENDC_KERNEL_CORE_H_
#define COHORT_ASCENDC_KERNEL_CORE_H_

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort_kernel_abi.h"

// ---- Qualifiers of the device language: nothing on the CPU ------------------------
#define __global__
#define __aicore__
#define __gm__
#define __ubuf__
#define __inline__ inline
#ifndef GM_ADDR
#define GM_ADDR uint8_t*
#endif
#define KERNEL_TASK_TYPE_DEFAULT(...)
#define KERNEL_TASK_TYPE(...)
// The architecture ascendc.cmake derived from SOC_VERSION (Ascend910B: 2201).
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif
#ifndef ASCENDC_CPU_EMULATION
#define ASCENDC_CPU_EMULATION 1
#endif

// ---- Element types -------------------------------------------------------------------
using half = _Float16;

/// bfloat16: the top half of a float, rounded to nearest even.
struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float f) {  // NOLINT: converts like the device type
    uint32_t u = 0;
    std::memcpy(&u, &f, sizeof u);
    if (std::isnan(f)) {
      bits = static_cast<uint16_t>((u >> 16) | 0x40u);
    } else {
      bits = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    }
  }
  bfloat16_t(double d) : bfloat16_t(static_cast<float>(d)) {}  // NOLINT
  bfloat16_t(int i) : bfloat16_t(static_cast<float>(i)) {}     // NOLINT
  operator float() const {  // NOLINT
    const uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f = 0;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
};

// ---- The block's identity -------------------------------------------------------------
/// The running block's index and the launch's block count (the device globals).
inline thread_local int64_t block_idx = 0;
inline thread_local int64_t block_num = 1;

namespace AscendC {

constexpr int32_t ONE_BLK_SIZE = 32;  // bytes in one data block of the UB
constexpr int32_t ONE_REPEAT_BYTE_SIZE = 256;

__aicore__ inline int64_t GetBlockIdx() { return block_idx; }
__aicore__ inline int64_t GetBlockNum() { return block_num; }
__aicore__ inline int64_t GetSubBlockIdx() { return 0; }
__aicore__ inline int64_t GetTaskRation() { return 1; }

namespace cohort_detail {

/// Thrown by a trap; caught by the block runner, never by kernel code (it is not a
/// std::exception).
struct Trap {};

/// The running block: set by the runner before the kernel body runs.
struct BlockState {
  CohortKernelBlock* block = nullptr;
  const char* kernel = "kernel";
  uint8_t* ub = nullptr;
  uint64_t ubBytes = 0;
  uint64_t ubUsed = 0;
};
inline thread_local BlockState tState;

/// Ends the block with an AI Core exception saying why.
[[noreturn]] inline void trap(const char* format, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void trap(const char* format, ...) {
  CohortKernelBlock* b = tState.block;
  if (b != nullptr && b->error != nullptr && b->errorCapacity > 0) {
    va_list args;
    va_start(args, format);
    std::vsnprintf(b->error, b->errorCapacity, format, args);
    va_end(args);
  }
  throw Trap{};
}

/// The core's unified buffer: one allocation per thread, reused by every block it
/// runs (page faults are slow; the buffer is as large as COHORT_UB_SIZE).
inline uint8_t* unifiedBuffer(uint64_t bytes) {
  thread_local std::unique_ptr<uint8_t[]> buffer;
  thread_local uint64_t capacity = 0;
  if (capacity < bytes) {
    buffer.reset(new uint8_t[bytes + ONE_BLK_SIZE]);
    capacity = bytes;
  }
  auto address = reinterpret_cast<uintptr_t>(buffer.get());
  address = (address + ONE_BLK_SIZE - 1) & ~static_cast<uintptr_t>(ONE_BLK_SIZE - 1);
  return reinterpret_cast<uint8_t*>(address);
}

/// `bytes` of the UB, 32-byte aligned; traps when the UB has no room left.
inline uint8_t* allocateUb(uint64_t bytes, const char* what) {
  BlockState& s = tState;
  const uint64_t start = (s.ubUsed + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
  if (s.ub == nullptr || start + bytes > s.ubBytes) {
    trap("%s needs %llu bytes of the unified buffer, but only %llu of its %llu bytes are free "
         "(COHORT_UB_SIZE sets its size)",
         what, static_cast<unsigned long long>(bytes),
         static_cast<unsigned long long>(s.ubBytes > start ? s.ubBytes - start : 0),
         static_cast<unsigned long long>(s.ubBytes));
  }
  s.ubUsed = start + bytes;
  return s.ub + start;
}

/// Arithmetic type of an element type: half and bfloat16 compute in float.
template <typename T>
struct Calc {
  using type = T;
};
template <>
struct Calc<half> {
  using type = float;
};
template <>
struct Calc<bfloat16_t> {
  using type = float;
};
template <typename T>
using CalcT = typename Calc<T>::type;

}  // namespace cohort_detail

// ---- Positions, pipes, events ---------------------------------------------------------
enum class TPosition : uint8_t {
  GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM,
  SHM = SPM, TSCM, C2PIPE2GM, MAX
};
using QuePosition = TPosition;

enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX };
enum class HardEvent : uint8_t {
  MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V,
  MTE3_MTE1, MTE1_MTE3, MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3,
  S_V, V_S, S_MTE2, MTE2_S, S_MTE3, MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MAX
};

// A core runs its pipes one after another here: the barriers and flags that order
// them on the device have nothing to wait for.
template <pipe_t pipe>
__aicore__ inline void PipeBarrier() {}
template <HardEvent event>
__aicore__ inline void SetFlag(int32_t) {}
template <HardEvent event>
__aicore__ inline void WaitFlag(int32_t) {}
__aicore__ inline void pipe_barrier(pipe_t) {}
// No SyncAll: a barrier across blocks cannot hold when blocks outnumber the cores
// that run them, and a no-op would compute wrong results; such kernels do not build.

}  // namespace AscendC

// ---- Cache maintenance of newer SoCs: nothing to write back on the CPU -----------------
enum class cache_line_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class dcci_dst_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
template <typename T>
__aicore__ inline void dcci(T*, cache_line_t, dcci_dst_t) {}
template <typename T>
__aicore__ inline void dcci(T*, cache_line_t) {}
/// The trap instruction: the block ends with an AI Core exception.
[[noreturn]] __aicore__ inline void trap() { AscendC::cohort_detail::trap("the kernel executed trap"); }

#endif  // COHORT_ASCENDC_KERNEL_CORE_H_
