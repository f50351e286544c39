// AscendC on the CPU, part 2: global and local tensors, the queues and buffers a
// TPipe carves from the unified buffer, each checked against its size.
#ifndef COHORT_ASCENDC_KERNEL_TENSOR_H_
#define COHORT_ASCENDC_KERNEL_TENSOR_H_

#include "kernel_core.h"

namespace AscendC {

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

}  // namespace AscendC

#endif  // COHORT_ASCENDC_KERNEL_TENSOR_H_
