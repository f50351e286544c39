// The AscendC kernel language on the CPU: the vector subset that CANN's kernel
// samples use, written by Cohort from the documented API. A kernel source compiles
// with the host compiler; each block runs on a thread of the device's AI Core pool
// (runtime/core_pool.h) with a bounded local buffer standing for the core's unified
// buffer (UB). Everything the hardware would corrupt silently -- an operand larger
// than its tensor, a UB overrun, an empty queue -- traps instead: the block stops
// and the stream reports an AI Core exception naming the kernel, block and cause.
//
// Thread-safety: a block's state (block_idx, the UB) is per thread; blocks share
// only global memory, as on the device. Nothing here outlives a kernel launch.
#ifndef COHORT_ASCENDC_KERNEL_OPERATOR_H_
#define COHORT_ASCENDC_KERNEL_OPERATOR_H_

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
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

// ---- Tensors ------------------------------------------------------------------------
/// Elements in global memory. A copy is a view; SetGlobalBuffer's size (0: unknown)
/// bounds the copies that read or write it.
template <typename T>
class GlobalTensor {
 public:
  using PrimType = T;
  __aicore__ inline void SetGlobalBuffer(__gm__ T* buffer, uint64_t size = 0) {
    address_ = buffer;
    size_ = size;
  }
  __aicore__ inline T* GetPhyAddr() const { return address_; }
  __aicore__ inline T* GetPhyAddr(uint64_t offset) const { return address_ + offset; }
  __aicore__ inline uint64_t GetSize() const { return size_; }
  __aicore__ inline T GetValue(uint64_t offset) const { return address_[offset]; }
  __aicore__ inline void SetValue(uint64_t offset, T value) { address_[offset] = value; }
  __aicore__ inline T& operator()(uint64_t offset) { return address_[offset]; }
  __aicore__ inline GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor view;
    view.address_ = address_ + offset;
    view.size_ = size_ > offset ? size_ - offset : 0;
    return view;
  }
  template <typename Hint>
  __aicore__ inline void SetL2CacheHint(Hint) {}

 private:
  T* address_ = nullptr;
  uint64_t size_ = 0;
};

/// Elements in the core's unified buffer, as handed out by a queue or a TBuf.
template <typename T>
class LocalTensor {
 public:
  using PrimType = T;
  LocalTensor() = default;
  LocalTensor(T* address, uint32_t size, int32_t buffer = -1)
      : address_(address), size_(size), buffer_(buffer) {}

  __aicore__ inline T* GetPhyAddr() const { return address_; }
  __aicore__ inline T* GetPhyAddr(uint32_t offset) const { return address_ + offset; }
  __aicore__ inline uint32_t GetSize() const { return size_; }
  __aicore__ inline void SetSize(uint32_t size) { size_ = size; }
  __aicore__ inline T GetValue(uint32_t offset) const {
    check(offset, "GetValue");
    return address_[offset];
  }
  __aicore__ inline void SetValue(uint32_t offset, T value) const {
    check(offset, "SetValue");
    address_[offset] = value;
  }
  __aicore__ inline T& operator()(uint32_t offset) const {
    check(offset, "operator()");
    return address_[offset];
  }
  __aicore__ inline LocalTensor operator[](uint32_t offset) const {
    if (offset > size_) {
      cohort_detail::trap("LocalTensor[%u]: the tensor has %u elements", offset, size_);
    }
    return LocalTensor(address_ + offset, size_ - offset, buffer_);
  }
  template <typename U>
  __aicore__ inline LocalTensor<U> ReinterpretCast() const {
    return LocalTensor<U>(reinterpret_cast<U*>(address_),
                          static_cast<uint32_t>(size_ * sizeof(T) / sizeof(U)), buffer_);
  }
  /// The queue buffer this tensor came from (-1: none); for the queues' checks.
  int32_t bufferId() const { return buffer_; }

 private:
  void check(uint32_t offset, const char* what) const {
    if (offset >= size_) {
      cohort_detail::trap("LocalTensor::%s(%u): the tensor has %u elements", what, offset, size_);
    }
  }
  T* address_ = nullptr;
  uint32_t size_ = 0;
  int32_t buffer_ = -1;
};

namespace cohort_detail {

/// Traps unless `count` elements fit in a tensor of `size` (0 for a global tensor:
/// its size was not given).
inline void checkCount(const char* call, const char* operand, uint64_t count, uint64_t size,
                       bool sizeKnown = true) {
  if (sizeKnown && count > size) {
    trap("%s: %llu elements asked, but %s has only %llu", call,
         static_cast<unsigned long long>(count), operand, static_cast<unsigned long long>(size));
  }
}
template <typename T>
void checkLocal(const char* call, const char* operand, uint64_t count, const LocalTensor<T>& t) {
  checkCount(call, operand, count, t.GetSize());
}
template <typename T>
void checkGlobal(const char* call, const char* operand, uint64_t count,
                 const GlobalTensor<T>& t) {
  checkCount(call, operand, count, t.GetSize(), t.GetSize() != 0);
  if (count > 0 && t.GetPhyAddr() == nullptr) trap("%s: %s has no global buffer", call, operand);
}

/// The buffers of one queue or TBuf, carved from the UB by TPipe::InitBuffer.
class BufferSet {
 public:
  void init(uint32_t count, uint32_t bytes, const char* what) {
    count_ = std::min<uint32_t>(count, kMaxBuffers);
    if (count != count_) trap("%s: %u buffers asked, at most %u", what, count, kMaxBuffers);
    bytes_ = bytes;
    base_ = allocateUb(static_cast<uint64_t>(count) * alignedBytes(), what);
    for (uint32_t i = 0; i < count_; ++i) state_[i] = kFree;
    head_ = tail_ = queued_ = 0;
  }
  uint32_t bytes() const { return bytes_; }
  uint8_t* buffer(uint32_t i) const { return base_ + static_cast<uint64_t>(i) * alignedBytes(); }

  template <typename T>
  LocalTensor<T> alloc(const char* queue) {
    for (uint32_t i = 0; i < count_; ++i) {
      if (state_[i] == kFree) {
        state_[i] = kAllocated;
        return LocalTensor<T>(reinterpret_cast<T*>(buffer(i)),
                              static_cast<uint32_t>(bytes_ / sizeof(T)), static_cast<int32_t>(i));
      }
    }
    if (count_ == 0) trap("%s::AllocTensor: the queue has no buffers (TPipe::InitBuffer)", queue);
    trap("%s::AllocTensor: all %u buffers are taken (FreeTensor returns them)", queue, count_);
  }
  template <typename T>
  void enqueue(const LocalTensor<T>& t, uint32_t depth, const char* queue) {
    const int32_t i = own(t, queue, "EnQue");
    if (queued_ >= std::max<uint32_t>(depth, count_)) trap("%s::EnQue: the queue is full", queue);
    state_[i] = kQueued;
    order_[tail_] = static_cast<uint8_t>(i);
    tail_ = (tail_ + 1) % kMaxBuffers;
    ++queued_;
  }
  template <typename T>
  LocalTensor<T> dequeue(const char* queue) {
    if (queued_ == 0) trap("%s::DeQue: the queue is empty (nothing was EnQue'd)", queue);
    const uint32_t i = order_[head_];
    head_ = (head_ + 1) % kMaxBuffers;
    --queued_;
    state_[i] = kAllocated;
    return LocalTensor<T>(reinterpret_cast<T*>(buffer(i)),
                          static_cast<uint32_t>(bytes_ / sizeof(T)), static_cast<int32_t>(i));
  }
  template <typename T>
  void free(const LocalTensor<T>& t, const char* queue) {
    const int32_t i = own(t, queue, "FreeTensor");
    if (state_[i] != kAllocated) trap("%s::FreeTensor: buffer %d is not allocated", queue, i);
    state_[i] = kFree;
  }
  uint32_t queued() const { return queued_; }
  uint32_t count() const { return count_; }

 private:
  static constexpr uint32_t kMaxBuffers = 64;
  enum State : uint8_t { kFree, kAllocated, kQueued };
  uint64_t alignedBytes() const { return (bytes_ + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE; }
  template <typename T>
  int32_t own(const LocalTensor<T>& t, const char* queue, const char* call) const {
    const int32_t i = t.bufferId();
    if (i < 0 || static_cast<uint32_t>(i) >= count_ ||
        reinterpret_cast<const uint8_t*>(t.GetPhyAddr()) != buffer(static_cast<uint32_t>(i))) {
      trap("%s::%s: the tensor is not one of this queue's buffers", queue, call);
    }
    return i;
  }
  uint8_t* base_ = nullptr;
  uint32_t bytes_ = 0;
  uint32_t count_ = 0;
  State state_[kMaxBuffers] = {};
  uint8_t order_[kMaxBuffers] = {};
  uint32_t head_ = 0, tail_ = 0, queued_ = 0;
};

}  // namespace cohort_detail

/// A queue of UB buffers between two positions (TQue is the one-position case).
template <TPosition src, TPosition dst, int32_t depth, auto... mask>
class TQueBind {
 public:
  template <typename T>
  __aicore__ inline LocalTensor<T> AllocTensor() { return set_.template alloc<T>("TQue"); }
  template <typename T>
  __aicore__ inline bool EnQue(const LocalTensor<T>& tensor) {
    set_.enqueue(tensor, depth, "TQue");
    return true;
  }
  template <typename T>
  __aicore__ inline LocalTensor<T> DeQue() { return set_.template dequeue<T>("TQue"); }
  template <typename T>
  __aicore__ inline void FreeTensor(LocalTensor<T>& tensor) { set_.free(tensor, "TQue"); }
  __aicore__ inline bool VacantInQue() const { return set_.queued() < set_.count(); }
  __aicore__ inline bool HasTensorInQue() const { return set_.queued() > 0; }
  __aicore__ inline int32_t GetTensorCountInQue() const {
    return static_cast<int32_t>(set_.queued());
  }
  cohort_detail::BufferSet& buffers() { return set_; }

 private:
  cohort_detail::BufferSet set_;
};

template <TPosition pos, int32_t depth, auto... mask>
class TQue : public TQueBind<pos, pos, depth, mask...> {};

/// A UB buffer for intermediate results, taken whole or in part (Get).
template <TPosition pos = TPosition::VECCALC>
class TBuf {
 public:
  template <typename T>
  __aicore__ inline LocalTensor<T> Get() {
    return Get<T>(set_.bytes() / sizeof(T));
  }
  template <typename T>
  __aicore__ inline LocalTensor<T> Get(uint32_t count) {
    if (set_.count() == 0) cohort_detail::trap("TBuf::Get: the buffer has no memory (InitBuffer)");
    cohort_detail::checkCount("TBuf::Get", "the buffer", count, set_.bytes() / sizeof(T));
    return LocalTensor<T>(reinterpret_cast<T*>(set_.buffer(0)), count);
  }
  template <typename T>
  __aicore__ inline LocalTensor<T> GetWithOffset(uint32_t count, uint32_t offsetBytes) {
    if (set_.count() == 0) cohort_detail::trap("TBuf::GetWithOffset: the buffer has no memory");
    cohort_detail::checkCount("TBuf::GetWithOffset", "the buffer", offsetBytes + count * sizeof(T),
                              set_.bytes());
    return LocalTensor<T>(reinterpret_cast<T*>(set_.buffer(0) + offsetBytes), count);
  }
  cohort_detail::BufferSet& buffers() { return set_; }

 private:
  cohort_detail::BufferSet set_;
};

/// Hands out the UB to queues and buffers. What it handed out is returned when it
/// is destroyed (or Destroy()), so a block may build a new pipe.
class TPipe {
 public:
  __aicore__ inline TPipe() : start_(cohort_detail::tState.ubUsed) {}
  __aicore__ inline ~TPipe() { Destroy(); }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <class Queue>
  __aicore__ inline bool InitBuffer(Queue& queue, uint8_t num, uint32_t len) {
    queue.buffers().init(num, len, "TPipe::InitBuffer");
    return true;
  }
  template <TPosition pos>
  __aicore__ inline bool InitBuffer(TBuf<pos>& buffer, uint32_t len) {
    buffer.buffers().init(1, len, "TPipe::InitBuffer");
    return true;
  }
  __aicore__ inline void Reset() { cohort_detail::tState.ubUsed = start_; }
  __aicore__ inline void Destroy() {
    if (cohort_detail::tState.ubUsed > start_) cohort_detail::tState.ubUsed = start_;
  }

 private:
  uint64_t start_;
};

// ---- Data movement -------------------------------------------------------------------
struct DataCopyParams {
  DataCopyParams() = default;
  DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;   // data blocks of 32 bytes
  uint16_t srcStride = 0;  // data blocks between the end of one block and the next
  uint16_t dstStride = 0;
};

struct DataCopyExtParams {
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn,
                    uint32_t rsv = 0)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn),
        rsv(rsv) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;   // bytes
  uint32_t srcStride = 0;  // bytes on the global side, 32-byte blocks on the local one
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;   // elements
  uint8_t rightPadding = 0;  // elements
  T paddingValue = T();
};

struct DataCopyPadParams {
  DataCopyPadParams() = default;
  DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
};

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                uint32_t count) {
  cohort_detail::checkLocal("DataCopy", "the local destination", count, dst);
  cohort_detail::checkGlobal("DataCopy", "the global source", count, src);
  std::memcpy(dst.GetPhyAddr(), src.GetPhyAddr(), static_cast<size_t>(count) * sizeof(T));
}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                uint32_t count) {
  cohort_detail::checkLocal("DataCopy", "the local source", count, src);
  cohort_detail::checkGlobal("DataCopy", "the global destination", count, dst);
  std::memcpy(dst.GetPhyAddr(), src.GetPhyAddr(), static_cast<size_t>(count) * sizeof(T));
}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                uint32_t count) {
  cohort_detail::checkLocal("DataCopy", "the local destination", count, dst);
  cohort_detail::checkLocal("DataCopy", "the local source", count, src);
  std::memmove(dst.GetPhyAddr(), src.GetPhyAddr(), static_cast<size_t>(count) * sizeof(T));
}

namespace cohort_detail {
// Copies `blocks` runs of `runBytes`, the source advancing by runBytes + srcGap
// and the destination by runBytes + dstGap; checks both ends against their sizes
// (in bytes; 0 = unknown for a global tensor).
inline void stridedCopy(uint8_t* dst, uint64_t dstBytes, bool dstKnown, const uint8_t* src,
                        uint64_t srcBytes, bool srcKnown, uint32_t blocks, uint64_t runBytes,
                        uint64_t srcGap, uint64_t dstGap, const char* call) {
  if (blocks == 0) return;
  const uint64_t srcSpan = (blocks - 1) * (runBytes + srcGap) + runBytes;
  const uint64_t dstSpan = (blocks - 1) * (runBytes + dstGap) + runBytes;
  if (srcKnown && srcSpan > srcBytes) {
    trap("%s: the copy reads %llu bytes, but the source has %llu", call,
         static_cast<unsigned long long>(srcSpan), static_cast<unsigned long long>(srcBytes));
  }
  if (dstKnown && dstSpan > dstBytes) {
    trap("%s: the copy writes %llu bytes, but the destination has %llu", call,
         static_cast<unsigned long long>(dstSpan), static_cast<unsigned long long>(dstBytes));
  }
  for (uint32_t b = 0; b < blocks; ++b) {
    std::memcpy(dst + b * (runBytes + dstGap), src + b * (runBytes + srcGap), runBytes);
  }
}
}  // namespace cohort_detail

template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                const DataCopyParams& p) {
  cohort_detail::stridedCopy(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()),
                             uint64_t{dst.GetSize()} * sizeof(T), true,
                             reinterpret_cast<const uint8_t*>(src.GetPhyAddr()),
                             src.GetSize() * sizeof(T), src.GetSize() != 0, p.blockCount,
                             uint64_t{p.blockLen} * ONE_BLK_SIZE, uint64_t{p.srcStride} * ONE_BLK_SIZE,
                             uint64_t{p.dstStride} * ONE_BLK_SIZE, "DataCopy");
}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                const DataCopyParams& p) {
  cohort_detail::stridedCopy(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()),
                             dst.GetSize() * sizeof(T), dst.GetSize() != 0,
                             reinterpret_cast<const uint8_t*>(src.GetPhyAddr()),
                             uint64_t{src.GetSize()} * sizeof(T), true, p.blockCount,
                             uint64_t{p.blockLen} * ONE_BLK_SIZE, uint64_t{p.srcStride} * ONE_BLK_SIZE,
                             uint64_t{p.dstStride} * ONE_BLK_SIZE, "DataCopy");
}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                const DataCopyParams& p) {
  cohort_detail::stridedCopy(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()),
                             uint64_t{dst.GetSize()} * sizeof(T), true,
                             reinterpret_cast<const uint8_t*>(src.GetPhyAddr()),
                             uint64_t{src.GetSize()} * sizeof(T), true, p.blockCount,
                             uint64_t{p.blockLen} * ONE_BLK_SIZE, uint64_t{p.srcStride} * ONE_BLK_SIZE,
                             uint64_t{p.dstStride} * ONE_BLK_SIZE, "DataCopy");
}

/// Global -> local, any length: each run lands at a 32-byte boundary of the UB,
/// optionally padded left and right with a value.
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyExtParams& p,
                                   const DataCopyPadExtParams<T>& pad) {
  const uint64_t run = p.blockLen;
  const uint64_t left = pad.isPad ? pad.leftPadding * sizeof(T) : 0;
  const uint64_t right = pad.isPad ? pad.rightPadding * sizeof(T) : 0;
  const uint64_t slot = (left + run + right + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
  const uint64_t dstStep = slot + uint64_t{p.dstStride} * ONE_BLK_SIZE;
  const uint64_t need = p.blockCount == 0 ? 0 : (p.blockCount - 1) * dstStep + left + run + right;
  cohort_detail::checkCount("DataCopyPad", "the local destination (bytes)", need,
                            uint64_t{dst.GetSize()} * sizeof(T));
  const uint64_t srcSpan = p.blockCount == 0 ? 0 : (p.blockCount - 1) * (run + p.srcStride) + run;
  cohort_detail::checkCount("DataCopyPad", "the global source (bytes)", srcSpan,
                            src.GetSize() * sizeof(T), src.GetSize() != 0);
  auto* out = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  const auto* in = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    uint8_t* slotStart = out + b * dstStep;
    T* padded = reinterpret_cast<T*>(slotStart);
    for (uint64_t i = 0; i < pad.leftPadding && pad.isPad; ++i) padded[i] = pad.paddingValue;
    std::memcpy(slotStart + left, in + b * (run + p.srcStride), run);
    T* tail = reinterpret_cast<T*>(slotStart + left + run);
    for (uint64_t i = 0; i < pad.rightPadding && pad.isPad; ++i) tail[i] = pad.paddingValue;
  }
}
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                   const DataCopyParams& p, const DataCopyPadParams& pad) {
  T value = T();
  std::memcpy(&value, &pad.paddingValue, std::min(sizeof(T), sizeof(pad.paddingValue)));
  DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride),
              DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, value));
}
/// Local -> global, any length: each run starts at a 32-byte boundary of the UB.
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyExtParams& p) {
  const uint64_t run = p.blockLen;
  const uint64_t slot = (run + ONE_BLK_SIZE - 1) / ONE_BLK_SIZE * ONE_BLK_SIZE;
  const uint64_t srcStep = slot + uint64_t{p.srcStride} * ONE_BLK_SIZE;
  const uint64_t need = p.blockCount == 0 ? 0 : (p.blockCount - 1) * srcStep + run;
  cohort_detail::checkCount("DataCopyPad", "the local source (bytes)", need,
                            uint64_t{src.GetSize()} * sizeof(T));
  const uint64_t dstSpan = p.blockCount == 0 ? 0 : (p.blockCount - 1) * (run + p.dstStride) + run;
  cohort_detail::checkCount("DataCopyPad", "the global destination (bytes)", dstSpan,
                            dst.GetSize() * sizeof(T), dst.GetSize() != 0);
  auto* out = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  const auto* in = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    std::memcpy(out + b * (run + p.dstStride), in + b * srcStep, run);
  }
}
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                   const DataCopyParams& p) {
  DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride));
}

// ---- Vector computation (count-based) ------------------------------------------------
namespace cohort_detail {
template <typename T, typename F>
inline void binary(const char* call, const LocalTensor<T>& dst, const LocalTensor<T>& a,
                   const LocalTensor<T>& b, int32_t count, F f) {
  if (count < 0) trap("%s: count %d is negative", call, count);
  checkLocal(call, "dst", count, dst);
  checkLocal(call, "src0", count, a);
  checkLocal(call, "src1", count, b);
  T* d = dst.GetPhyAddr();
  const T* x = a.GetPhyAddr();
  const T* y = b.GetPhyAddr();
  for (int32_t i = 0; i < count; ++i) {
    d[i] = static_cast<T>(f(static_cast<CalcT<T>>(x[i]), static_cast<CalcT<T>>(y[i])));
  }
}
template <typename T, typename F>
inline void unary(const char* call, const LocalTensor<T>& dst, const LocalTensor<T>& a,
                  int32_t count, F f) {
  if (count < 0) trap("%s: count %d is negative", call, count);
  checkLocal(call, "dst", count, dst);
  checkLocal(call, "src", count, a);
  T* d = dst.GetPhyAddr();
  const T* x = a.GetPhyAddr();
  for (int32_t i = 0; i < count; ++i) d[i] = static_cast<T>(f(static_cast<CalcT<T>>(x[i])));
}
}  // namespace cohort_detail

#define COHORT_ASCENDC_BINARY(Name, expr)                                                  \
  template <typename T>                                                                   \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0,      \
                              const LocalTensor<T>& src1, const int32_t& count) {         \
    cohort_detail::binary(#Name, dst, src0, src1, count, [](auto a, auto b) { return expr; }); \
  }
COHORT_ASCENDC_BINARY(Add, a + b)
COHORT_ASCENDC_BINARY(Sub, a - b)
COHORT_ASCENDC_BINARY(Mul, a * b)
COHORT_ASCENDC_BINARY(Div, a / b)
COHORT_ASCENDC_BINARY(Max, a > b ? a : b)
COHORT_ASCENDC_BINARY(Min, a < b ? a : b)
#undef COHORT_ASCENDC_BINARY

#define COHORT_ASCENDC_SCALAR(Name, expr)                                                     \
  template <typename T, typename U>                                                          \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src,          \
                              const U& scalarValue, const int32_t& count) {                  \
    const auto s = static_cast<cohort_detail::CalcT<T>>(static_cast<T>(scalarValue));        \
    cohort_detail::unary(#Name, dst, src, count, [s](auto a) { return expr; });              \
  }
COHORT_ASCENDC_SCALAR(Adds, a + s)
COHORT_ASCENDC_SCALAR(Muls, a * s)
COHORT_ASCENDC_SCALAR(Maxs, a > s ? a : s)
COHORT_ASCENDC_SCALAR(Mins, a < s ? a : s)
#undef COHORT_ASCENDC_SCALAR

#define COHORT_ASCENDC_UNARY(Name, expr)                                                    \
  template <typename T>                                                                    \
  __aicore__ inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src,        \
                              const int32_t& count) {                                      \
    cohort_detail::unary(#Name, dst, src, count, [](auto a) { return expr; });             \
  }
COHORT_ASCENDC_UNARY(Abs, a < 0 ? -a : a)
COHORT_ASCENDC_UNARY(Exp, std::exp(a))
COHORT_ASCENDC_UNARY(Ln, std::log(a))
COHORT_ASCENDC_UNARY(Sqrt, std::sqrt(a))
COHORT_ASCENDC_UNARY(Relu, a > 0 ? a : decltype(a)(0))
COHORT_ASCENDC_UNARY(Reciprocal, decltype(a)(1) / a)
#undef COHORT_ASCENDC_UNARY

/// Every element of dst set to `value`.
template <typename T, typename U>
__aicore__ inline void Duplicate(const LocalTensor<T>& dst, const U& value, const int32_t& count) {
  if (count < 0) cohort_detail::trap("Duplicate: count %d is negative", count);
  cohort_detail::checkLocal("Duplicate", "dst", count, dst);
  const T v = static_cast<T>(value);
  std::fill_n(dst.GetPhyAddr(), count, v);
}

enum class RoundMode : uint8_t {
  CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD
};

/// Converts each element, rounding as `mode` says when the destination is coarser.
template <typename D, typename S>
__aicore__ inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src,
                            const RoundMode& mode, const uint32_t& count) {
  cohort_detail::checkLocal("Cast", "dst", count, dst);
  cohort_detail::checkLocal("Cast", "src", count, src);
  D* d = dst.GetPhyAddr();
  const S* s = src.GetPhyAddr();
  for (uint32_t i = 0; i < count; ++i) {
    const double v = static_cast<double>(static_cast<cohort_detail::CalcT<S>>(s[i]));
    double r = v;
    if (std::is_integral<D>::value) {
      switch (mode) {
        case RoundMode::CAST_FLOOR: r = std::floor(v); break;
        case RoundMode::CAST_CEIL: r = std::ceil(v); break;
        case RoundMode::CAST_ROUND: r = std::round(v); break;
        case RoundMode::CAST_TRUNC: r = std::trunc(v); break;
        default: r = std::nearbyint(v); break;
      }
    }
    d[i] = static_cast<D>(static_cast<cohort_detail::CalcT<D>>(r));
  }
}

/// dst[0] = the sum of src's first `count` elements (work is scratch space).
template <typename T>
__aicore__ inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& work, const int32_t count) {
  (void)work;
  cohort_detail::checkLocal("ReduceSum", "src", count, src);
  cohort_detail::checkLocal("ReduceSum", "dst", 1, dst);
  cohort_detail::CalcT<T> sum = 0;
  for (int32_t i = 0; i < count; ++i) sum += static_cast<cohort_detail::CalcT<T>>(src.GetPhyAddr()[i]);
  dst.GetPhyAddr()[0] = static_cast<T>(sum);
}
/// dst[0] = the largest of src's first `count` elements; with calIndex, dst[1] holds
/// its index (the bits of a uint32_t, as the device writes it).
template <typename T>
__aicore__ inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                 const LocalTensor<T>& work, const int32_t count,
                                 bool calIndex = false) {
  (void)work;
  if (count <= 0) cohort_detail::trap("ReduceMax: count %d is not positive", count);
  cohort_detail::checkLocal("ReduceMax", "src", count, src);
  cohort_detail::checkLocal("ReduceMax", "dst", calIndex ? 2 : 1, dst);
  const T* s = src.GetPhyAddr();
  int32_t best = 0;
  for (int32_t i = 1; i < count; ++i) {
    if (static_cast<cohort_detail::CalcT<T>>(s[i]) > static_cast<cohort_detail::CalcT<T>>(s[best])) best = i;
  }
  dst.GetPhyAddr()[0] = s[best];
  if (calIndex) {
    const uint32_t index = static_cast<uint32_t>(best);
    std::memcpy(dst.GetPhyAddr() + 1, &index, std::min(sizeof(T), sizeof(index)));
  }
}

// ---- Printing ------------------------------------------------------------------------
/// printf from a kernel: one whole line per call on the host's stdout.
__aicore__ inline void printf(const char* format, ...) __attribute__((format(printf, 1, 2)));
__aicore__ inline void printf(const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n > 0) {
    std::fwrite(line, 1, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1), stdout);
    std::fflush(stdout);
  }
}
#define PRINTF AscendC::printf

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

// ---- Launching (the code ascendc.cmake's rewrite of kernel<<<...>>>(...) calls) --------
namespace cohort_ascendc {

template <typename F>
struct FunctionArity;
template <typename... P>
struct FunctionArity<void (*)(P...)> {
  static constexpr std::index_sequence_for<P...> sequence() { return {}; }
};

/// Converts an argument as the device's launch stub does: a global-memory pointer
/// of any type (the stub takes void*) or a value converted to the parameter's type.
template <typename P, typename A>
P convertArgument(A&& a) {
  using D = std::decay_t<A>;
  if constexpr (std::is_pointer<P>::value && std::is_pointer<D>::value) {
    return reinterpret_cast<P>(const_cast<void*>(static_cast<const volatile void*>(a)));
  } else if constexpr (std::is_pointer<P>::value && std::is_null_pointer<D>::value) {
    return nullptr;
  } else {
    return static_cast<P>(std::forward<A>(a));
  }
}

/// Runs one block of `run` with the block's identity and UB set up; a trap or an
/// exception becomes the block's failure.
template <typename Run>
int runBlock(CohortKernelBlock* block, const char* kernel, Run&& run) {
  auto& s = AscendC::cohort_detail::tState;
  s.block = block;
  s.kernel = kernel;
  s.ubBytes = block->ubBytes;
  s.ub = AscendC::cohort_detail::unifiedBuffer(block->ubBytes);
  s.ubUsed = 0;
  block_idx = block->blockIdx;
  block_num = block->blockNum;
  try {
    run();
    return 0;
  } catch (const AscendC::cohort_detail::Trap&) {
    return 1;
  } catch (const std::exception& e) {
    std::snprintf(block->error, block->errorCapacity, "the kernel threw: %s", e.what());
    return 1;
  } catch (...) {
    std::snprintf(block->error, block->errorCapacity, "the kernel threw");
    return 1;
  }
}

template <typename... P>
struct BoundKernel {
  void (*kernel)(P...);
  const char* name;
  std::tuple<P...> args;

  static int run(void* self, CohortKernelBlock* block) {
    auto* k = static_cast<BoundKernel*>(self);
    return runBlock(block, k->name, [k] { std::apply(k->kernel, k->args); });
  }
  static void release(void* self) { delete static_cast<BoundKernel*>(self); }
};

/// `kernel<<<blockDim, l2ctrl, stream>>>(args...)` becomes
/// `Launch(kernel, "kernel", blockDim, l2ctrl, stream)(args...)`: queues the kernel
/// with its arguments bound by value and returns the aclError of the launch.
template <typename... P>
class Launcher {
 public:
  Launcher(void (*kernel)(P...), const char* name, uint32_t blockDim, void* l2ctrl, void* stream)
      : kernel_(kernel), name_(name), blockDim_(blockDim), l2ctrl_(l2ctrl), stream_(stream) {}

  template <typename... A>
  uint32_t operator()(A&&... a) const {
    static_assert(sizeof...(A) == sizeof...(P), "the launch passes a different number of "
                                                "arguments than the kernel has parameters");
    auto* bound = new BoundKernel<P...>{
        kernel_, name_, std::tuple<P...>(convertArgument<P>(std::forward<A>(a))...)};
    return cohortKernelLaunch(name_, blockDim_, l2ctrl_, stream_, &BoundKernel<P...>::run, bound,
                              &BoundKernel<P...>::release);
  }

 private:
  void (*kernel_)(P...);
  const char* name_;
  uint32_t blockDim_;
  void* l2ctrl_;
  void* stream_;
};

template <typename... P, typename L, typename S>
Launcher<P...> Launch(void (*kernel)(P...), const char* name, uint32_t blockDim, L l2ctrl,
                      S stream) {
  return Launcher<P...>(kernel, name, blockDim, convertArgument<void*>(l2ctrl),
                        convertArgument<void*>(stream));
}

// ---- Fatbin modules: a table of the module's kernels (ascendc_fatbin_library) ----------
/// Runs one block of `Kernel` on packed parameters (params[i] points at parameter i).
template <auto Kernel, typename... P, size_t... I>
int runPackedAt(void (*)(P...), void* const* params, CohortKernelBlock* block,
                std::index_sequence<I...>) {
  return runBlock(block, "", [params] {
    Kernel(*static_cast<std::remove_reference_t<P>*>(params[I])...);
  });
}
template <auto Kernel>
int runPacked(void* const* params, CohortKernelBlock* block) {
  return runPackedAt<Kernel>(Kernel, params, block, FunctionArity<decltype(Kernel)>::sequence());
}

template <typename... P>
CohortKernelEntry makeEntry(const char* name, void (*)(P...),
                            int (*run)(void* const*, CohortKernelBlock*)) {
  static const uint32_t sizes[sizeof...(P) + 1] = {static_cast<uint32_t>(sizeof(P))..., 0};
  return CohortKernelEntry{name, static_cast<uint32_t>(sizeof...(P)), sizes, run};
}

/// The kernels of this module (a fatbin module is built with hidden visibility, so
/// each module has its own list).
inline std::vector<CohortKernelEntry>& moduleKernels() {
  static std::vector<CohortKernelEntry> kernels;
  return kernels;
}
struct RegisterKernel {
  explicit RegisterKernel(const CohortKernelEntry& entry) { moduleKernels().push_back(entry); }
};

}  // namespace cohort_ascendc

// Inline assembly of the device (asm("trap")) has no CPU meaning: a trap traps, any
// other instruction is refused at run time with its text.
namespace AscendC::cohort_detail {
inline void inlineAssembly(const char* text) {
  if (std::strstr(text, "trap") != nullptr) trap("the kernel executed asm(\"trap\")");
  trap("inline assembly %s does not run on an emulated AI Core", text);
}
}  // namespace AscendC::cohort_detail
#define asm(...) ::AscendC::cohort_detail::inlineAssembly(#__VA_ARGS__)

// What ascendc.cmake appends to a fatbin module's sources: one registration per
// kernel, and (once per module) the table the runtime reads.
#define COHORT_ASCENDC_REGISTER(name)                                               \
  static ::cohort_ascendc::RegisterKernel cohort_ascendc_register_##name(           \
      ::cohort_ascendc::makeEntry(#name, &name, &::cohort_ascendc::runPacked<&name>));
#define COHORT_ASCENDC_KERNEL_TABLE()                                                    \
  extern "C" __attribute__((visibility("default"))) const CohortKernelEntry*            \
  cohort_ascendc_kernel_table(uint32_t* count) {                                        \
    *count = static_cast<uint32_t>(::cohort_ascendc::moduleKernels().size());           \
    return ::cohort_ascendc::moduleKernels().data();                                    \
  }

#endif  // COHORT_ASCENDC_KERNEL_OPERATOR_H_
