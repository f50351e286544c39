// The streaming copy of every path: any size and alignment, nothing written outside.
#include "kernels/copy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace cohort::kernels::testing {
namespace {

class CopyTest : public PathTest {};

TEST_P(CopyTest, AnySizeAndAlignment) {
  std::vector<unsigned char> src(3 << 20);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  std::vector<std::size_t> sizes(300);
  std::iota(sizes.begin(), sizes.end(), 0);
  for (std::size_t big : {4096 + 13, 64 << 10, (1 << 20) + 255, 2 << 20}) sizes.push_back(big);
  constexpr std::size_t kGuard = 128;
  for (std::size_t bytes : sizes) {
    for (std::size_t dstOff : {0, 1, 15, 31, 33, 63}) {
      const std::size_t srcOff = (dstOff * 7 + bytes) % 61;
      std::vector<unsigned char> dst(bytes + 2 * kGuard + 64, 0xA5);
      streamCopy(&dst[kGuard + dstOff], &src[srcOff], bytes, path());
      streamFence();
      ASSERT_EQ(std::memcmp(&dst[kGuard + dstOff], &src[srcOff], bytes), 0)
          << bytes << " bytes at offset " << dstOff;
      for (std::size_t i = 0; i < dst.size(); ++i) {
        if (i >= kGuard + dstOff && i < kGuard + dstOff + bytes) continue;
        ASSERT_EQ(dst[i], 0xA5) << "byte " << i << " written, copying " << bytes << " at offset "
                                << dstOff;
      }
    }
  }
}

COHORT_INSTANTIATE_PATHS(CopyTest);

}  // namespace
}  // namespace cohort::kernels::testing
