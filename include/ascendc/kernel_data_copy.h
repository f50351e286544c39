// AscendC on the CPU, part 3: DataCopy and DataCopyPad between global and local
// memory, every copy checked against both tensors.
#ifndef COHORT_ASCENDC_KERNEL_DATA_COPY_H_
#define COHORT_ASCENDC_KERNEL_DATA_COPY_H_

#include "kernel_tensor.h"

namespace AscendC {

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

namespace cohort_detail {
// One side of a copy: its bytes, whether their number is known (a global tensor's
// size is optional), and what to call it in a trap.
struct Extent {
  uint8_t* data;
  uint64_t bytes;
  bool known;
  const char* kind;
};
template <typename T>
Extent extentOf(const LocalTensor<T>& t) {
  return {reinterpret_cast<uint8_t*>(t.GetPhyAddr()), uint64_t{t.GetSize()} * sizeof(T), true,
          "local"};
}
template <typename T>
Extent extentOf(const GlobalTensor<T>& t) {
  return {reinterpret_cast<uint8_t*>(t.GetPhyAddr()), t.GetSize() * sizeof(T), t.GetSize() != 0,
          "global"};
}

// Copies `count` elements of T from src to dst, checking both against their sizes.
template <typename T, class D, class S>
void copyCount(const D& dst, const S& src, uint32_t count) {
  const Extent to = extentOf(dst), from = extentOf(src);
  const uint64_t bytes = uint64_t{count} * sizeof(T);
  for (const auto& [e, role] : {std::make_pair(to, "destination"), std::make_pair(from, "source")}) {
    if (bytes > 0 && e.data == nullptr) trap("DataCopy: the %s %s has no buffer", e.kind, role);
    if (e.known && bytes > e.bytes) {
      trap("DataCopy: %u elements asked, but the %s %s has only %llu", count, e.kind, role,
           static_cast<unsigned long long>(e.bytes / sizeof(T)));
    }
  }
  std::memmove(to.data, from.data, bytes);
}

// Copies p.blockCount runs of p.blockLen 32-byte blocks, the source advancing by
// the run plus p.srcStride blocks and the destination by the run plus p.dstStride;
// checks both ends against their sizes.
template <class D, class S>
void copyRuns(const D& dst, const S& src, const DataCopyParams& p) {
  if (p.blockCount == 0) return;
  const Extent to = extentOf(dst), from = extentOf(src);
  const uint64_t run = uint64_t{p.blockLen} * ONE_BLK_SIZE;
  const uint64_t srcStep = run + uint64_t{p.srcStride} * ONE_BLK_SIZE;
  const uint64_t dstStep = run + uint64_t{p.dstStride} * ONE_BLK_SIZE;
  const uint64_t srcSpan = (p.blockCount - 1) * srcStep + run;
  const uint64_t dstSpan = (p.blockCount - 1) * dstStep + run;
  if (from.known && srcSpan > from.bytes) {
    trap("DataCopy: the copy reads %llu bytes, but the source has %llu",
         static_cast<unsigned long long>(srcSpan), static_cast<unsigned long long>(from.bytes));
  }
  if (to.known && dstSpan > to.bytes) {
    trap("DataCopy: the copy writes %llu bytes, but the destination has %llu",
         static_cast<unsigned long long>(dstSpan), static_cast<unsigned long long>(to.bytes));
  }
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    std::memmove(to.data + b * dstStep, from.data + b * srcStep, run);
  }
}
}  // namespace cohort_detail

// The three paths of DataCopy (global and local memory, local and local), by count
// of elements or by runs of 32-byte blocks.
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                uint32_t count) {
  cohort_detail::copyCount<T>(dst, src, count);
}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                uint32_t count) {
  cohort_detail::copyCount<T>(dst, src, count);
}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                uint32_t count) {
  cohort_detail::copyCount<T>(dst, src, count);
}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                                const DataCopyParams& p) {
  cohort_detail::copyRuns(dst, src, p);
}
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                                const DataCopyParams& p) {
  cohort_detail::copyRuns(dst, src, p);
}
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                const DataCopyParams& p) {
  cohort_detail::copyRuns(dst, src, p);
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

}  // namespace AscendC

#endif  // COHORT_ASCENDC_KERNEL_DATA_COPY_H_
