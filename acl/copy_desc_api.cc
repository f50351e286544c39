// Copies whose addresses are read when the task runs (aclrtMemcpyAsyncWithOffset, copy
// descriptors) and 32-bit memsets (aclrtMemsetD32*).
#include <cstdint>
#include <cstring>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/memory_util.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

using cohort::acl::Place;
using cohort::acl::placeOf;
using cohort::acl::requireDeviceMemory;

// What aclrtSetMemcpyDesc writes into device memory: ours, so its size is ours too.
struct MemcpyDesc {
  std::uint64_t magic;
  std::uint64_t src;
  std::uint64_t dst;
  std::uint64_t count;
  std::uint64_t reserved[4];
};
constexpr std::uint64_t kDescMagic = 0xC0407D35C0000001ull;
static_assert(sizeof(MemcpyDesc) == 64, "descriptor size");

Outcome requireInnerKind(const char* fn, aclrtMemcpyKind kind) {
  if (kind == ACL_MEMCPY_INNER_DEVICE_TO_DEVICE) return Status::Ok();
  return cohort::makeError(ErrorCode::kInvalidArgument,
                           "{}: kind {} is not supported (only ACL_MEMCPY_INNER_DEVICE_TO_DEVICE)",
                           fn, static_cast<int>(kind));
}

// Reads a pointer-sized slot the program (or a kernel) filled.
const char* readSlot(const void* slot) {
  const void* p = nullptr;
  std::memcpy(&p, slot, sizeof(p));
  return static_cast<const char*>(p);
}

// The slot holding an address must be readable: inside its allocation if the runtime
// knows it.
Outcome checkSlot(const char* fn, const char* role, const void* slot) {
  return cohort::acl::checkSpan(fn, role, slot, sizeof(void*), placeOf(slot));
}

// Copies inside one device's memory, when the task runs.
Status copyInside(void* dst, std::size_t destMax, const void* src, std::size_t count) {
  return rt::memcpy(dst, destMax, src, count, rt::MemcpyKind::kDeviceToDevice);
}

Outcome fillD32(const char* fn, void* ptr, std::size_t memSize, std::uint32_t value, std::size_t n,
                bool async, aclrtStream stream) {
  if (async) ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
  if (n > SIZE_MAX / 4 || memSize < n * 4) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: memSize {} is less than 4 * N (N = {})", fn, memSize, n);
  }
  if (ptr == nullptr) return cohort::makeError(ErrorCode::kInvalidArgument, "{}: ptr is null", fn);
  const Place place = placeOf(ptr);
  if (place.pageable) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: {} is plain host memory; the memory must come from aclrtMalloc "
                             "or aclrtMallocHost",
                             fn, ptr);
  }
  if (place.attributes.isDevice && !place.known) {
    return cohort::makeError(ErrorCode::kInvalidPointer,
                             "{}: {} lies in device memory but not in a live allocation", fn, ptr);
  }
  ACL_RETURN_IF_FAILED(cohort::acl::checkSpan(fn, "ptr", ptr, n * 4, place));
  auto fill = [ptr, value, n] {
    auto* out = static_cast<unsigned char*>(ptr);
    for (std::size_t i = 0; i < n; ++i) std::memcpy(out + i * 4, &value, 4);
  };
  // Device memory is set by a task of the stream; host memory at once, as CANN does.
  if (!async || !place.device) {
    fill();
    return Status::Ok();
  }
  if (n == 0) return Status::Ok();
  return rt::launchKernel(toStream(stream), [fill](rt::Stream*) {
    fill();
    return Status::Ok();
  });
}

}  // namespace

aclError aclrtMemcpyAsyncWithOffset(void** dst, size_t destMax, size_t dstDataOffset,
                                    const void** src, size_t count, size_t srcDataOffset,
                                    aclrtMemcpyKind kind, aclrtStream stream) {
  return apiCall("aclrtMemcpyAsyncWithOffset", [&]() -> Outcome {
    const char* fn = "aclrtMemcpyAsyncWithOffset";
    ACL_RETURN_IF_FAILED(requireInnerKind(fn, kind));
    if (count > destMax) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: count {} exceeds destMax {}", fn,
                               count, destMax);
    }
    ACL_RETURN_IF_FAILED(checkSlot(fn, "dst", dst));
    ACL_RETURN_IF_FAILED(checkSlot(fn, "src", src));
    ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
    // The slots may be written by earlier tasks: read them when this one runs.
    return rt::launchKernel(toStream(stream), [=](rt::Stream*) {
      char* d = const_cast<char*>(readSlot(dst));
      const char* s = readSlot(src);
      if (d == nullptr || s == nullptr) {
        return cohort::makeError(ErrorCode::kInvalidArgument, "{}: *{} is null when the copy runs",
                                 fn, d == nullptr ? "dst" : "src");
      }
      return copyInside(d + dstDataOffset, destMax, s + srcDataOffset, count);
    });
  });
}

aclError aclrtGetMemcpyDescSize(aclrtMemcpyKind kind, size_t* descSize) {
  return apiCall("aclrtGetMemcpyDescSize", [&]() -> Outcome {
    ACL_RETURN_IF_FAILED(requireInnerKind("aclrtGetMemcpyDescSize", kind));
    if (descSize == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "aclrtGetMemcpyDescSize: descSize is null");
    }
    *descSize = sizeof(MemcpyDesc);
    return Status::Ok();
  });
}

aclError aclrtSetMemcpyDesc(void* desc, aclrtMemcpyKind kind, void* srcAddr, void* dstAddr,
                            size_t count, void* config) {
  return apiCall("aclrtSetMemcpyDesc", [&]() -> Outcome {
    const char* fn = "aclrtSetMemcpyDesc";
    ACL_RETURN_IF_FAILED(requireInnerKind(fn, kind));
    if (config != nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: config must be NULL", fn);
    }
    Place d, s, dd;
    ACL_RETURN_IF_FAILED(requireDeviceMemory(fn, "desc", desc, sizeof(MemcpyDesc), &dd));
    ACL_RETURN_IF_FAILED(requireDeviceMemory(fn, "srcAddr", srcAddr, count, &s));
    ACL_RETURN_IF_FAILED(requireDeviceMemory(fn, "dstAddr", dstAddr, count, &d));
    if (s.deviceId >= 0 && d.deviceId >= 0 && s.deviceId != d.deviceId) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: srcAddr is memory of device {} and dstAddr of device {}: an "
                               "inner copy stays in one device",
                               fn, s.deviceId, d.deviceId);
    }
    MemcpyDesc value{};
    value.magic = kDescMagic;
    value.src = reinterpret_cast<std::uintptr_t>(srcAddr);
    value.dst = reinterpret_cast<std::uintptr_t>(dstAddr);
    value.count = count;
    std::memcpy(desc, &value, sizeof(value));  // device memory is host RAM here
    return Status::Ok();
  });
}

aclError aclrtMemcpyAsyncWithDesc(void* desc, aclrtMemcpyKind kind, aclrtStream stream) {
  return apiCall("aclrtMemcpyAsyncWithDesc", [&]() -> Outcome {
    const char* fn = "aclrtMemcpyAsyncWithDesc";
    ACL_RETURN_IF_FAILED(requireInnerKind(fn, kind));
    Place place;
    ACL_RETURN_IF_FAILED(requireDeviceMemory(fn, "desc", desc, sizeof(MemcpyDesc), &place));
    MemcpyDesc now;
    std::memcpy(&now, desc, sizeof(now));
    if (now.magic != kDescMagic) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: {} holds no descriptor (call aclrtSetMemcpyDesc first)", fn,
                               desc);
    }
    ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
    // Read again when the task runs: a kernel may have rewritten the descriptor.
    return rt::launchKernel(toStream(stream), [desc, fn](rt::Stream*) {
      MemcpyDesc d;
      std::memcpy(&d, desc, sizeof(d));
      if (d.magic != kDescMagic) {
        return cohort::makeError(ErrorCode::kInvalidArgument,
                                 "{}: {} no longer holds a descriptor when the copy runs", fn,
                                 desc);
      }
      return copyInside(reinterpret_cast<void*>(d.dst), d.count,
                        reinterpret_cast<const void*>(d.src), d.count);
    });
  });
}

aclError aclrtMemsetD32(void* ptr, size_t memSize, uint32_t value, size_t N) {
  return apiCall("aclrtMemsetD32", [&]() -> Outcome {
    return fillD32("aclrtMemsetD32", ptr, memSize, value, N, false, nullptr);
  });
}

aclError aclrtMemsetD32Async(void* ptr, size_t memSize, uint32_t value, size_t N,
                             aclrtStream stream) {
  return apiCall("aclrtMemsetD32Async", [&]() -> Outcome {
    return fillD32("aclrtMemsetD32Async", ptr, memSize, value, N, true, stream);
  });
}
