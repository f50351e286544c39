// Copies beyond aclrtMemcpy: 2D copies, batches, the deprecated WithCondition variant,
// and copies to or from device symbols (not supported: symbols live in kernel binaries).
#include <cstdint>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "acl/entry_names.h"
#include "acl/memory_util.h"
#include "acl/unsupported.h"
#include "cohort/runtime.h"
#include "common/error.h"

namespace {

using cohort::acl::checkSpan;
using cohort::acl::Place;
using cohort::acl::placeOf;

constexpr std::size_t kMax2dWidth = 5000000;
constexpr std::size_t kMax2dHeight = 5u << 20;

// p must be usable as the side of a copy that wants device (or host) memory, live, and
// hold `bytes`.
Outcome checkSide(const char* fn, const char* role, const void* p, std::size_t bytes,
                  bool wantDevice, Place* place) {
  if (p == nullptr)
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: {} is null", fn, role);
  *place = placeOf(p);
  if (wantDevice ? !place->device : !place->host) {
    return cohort::makeError(
        ErrorCode::kInvalidMemcpyKind, "{}: the kind wants {} memory for {}, but {} is {} memory",
        fn, wantDevice ? "device" : "host", role, p, wantDevice ? "host" : "device");
  }
  if (place->attributes.isDevice && !place->known) {
    return cohort::makeError(ErrorCode::kInvalidPointer,
                             "{}: {} {} lies in device memory but not in a live allocation", fn,
                             role, p);
  }
  return checkSpan(fn, role, p, bytes, *place);
}

// A queued copy returns after the work when a host side is pageable, as aclrtMemcpyAsync.
Outcome finishAsync(aclrtStream stream, bool pageable) {
  if (!pageable) return Status::Ok();
  return rt::streamSynchronize(toStream(stream), -1);
}

struct Copy2d {
  char* dst;
  std::size_t dpitch;
  const char* src;
  std::size_t spitch;
  std::size_t width;
  std::size_t height;
  void run() const {
    for (std::size_t row = 0; row < height; ++row) {
      std::memmove(dst + row * dpitch, src + row * spitch, width);
    }
  }
};

Outcome memcpy2d(const char* fn, void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                 std::size_t width, std::size_t height, aclrtMemcpyKind kind, bool async,
                 aclrtStream stream) {
  const bool kindOk = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_HOST ||
                      (async && kind == ACL_MEMCPY_DEVICE_TO_DEVICE);
  if (!kindOk) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: kind {} is not supported (HOST_TO_DEVICE, DEVICE_TO_HOST{})", fn,
                             static_cast<int>(kind), async ? ", DEVICE_TO_DEVICE" : "");
  }
  if (width > dpitch || width > spitch) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: width {} exceeds dpitch {} or spitch {}", fn, width, dpitch,
                             spitch);
  }
  if (async && (width > kMax2dWidth || height > kMax2dHeight)) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: width {} or height {} above the limits ({}, {})", fn, width,
                             height, kMax2dWidth, kMax2dHeight);
  }
  if (async) ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
  if (width == 0 || height == 0) return Status::Ok();
  // The last row ends at (height - 1) * pitch + width.
  if ((height - 1) > (SIZE_MAX - width) / dpitch || (height - 1) > (SIZE_MAX - width) / spitch) {
    return cohort::makeError(ErrorCode::kInvalidArgument, "{}: the rows overflow the address space",
                             fn);
  }
  Place d, s;
  ACL_RETURN_IF_FAILED(checkSide(fn, "dst", dst, (height - 1) * dpitch + width,
                                 kind != ACL_MEMCPY_DEVICE_TO_HOST, &d));
  ACL_RETURN_IF_FAILED(checkSide(fn, "src", src, (height - 1) * spitch + width,
                                 kind != ACL_MEMCPY_HOST_TO_DEVICE, &s));
  const Copy2d copy{
      static_cast<char*>(dst), dpitch, static_cast<const char*>(src), spitch, width, height};
  if (!async) {
    copy.run();
    return Status::Ok();
  }
  COHORT_RETURN_IF_ERROR(rt::launchKernel(toStream(stream), [copy](rt::Stream*) {
    copy.run();
    return Status::Ok();
  }));
  return finishAsync(stream, d.pageable || s.pageable);
}

// Where attrs puts one side of a copy: host or a device.
Outcome checkLocation(const char* fn, const char* role, std::size_t index,
                      const aclrtMemLocation& loc, const Place& place, bool* isDevice) {
  switch (loc.type) {
    case ACL_MEM_LOCATION_TYPE_HOST:
    case ACL_MEM_LOCATION_TYPE_HOST_NUMA:
      *isDevice = false;
      if (place.host) return Status::Ok();
      break;
    case ACL_MEM_LOCATION_TYPE_DEVICE:
      *isDevice = true;
      // Memory of a device must be of that one; registered and managed memory belong to
      // every device.
      if (place.device && (!place.attributes.isDevice || place.attributes.isManaged ||
                           place.deviceId < 0 || place.deviceId == static_cast<int>(loc.id))) {
        return Status::Ok();
      }
      break;
    default:
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: copy {}: {} location type {} is not HOST or DEVICE", fn, index,
                               role, static_cast<int>(loc.type));
  }
  return cohort::makeError(
      ErrorCode::kInvalidArgument, "{}: copy {}: the attributes put the {} on {} {}, but it is {}",
      fn, index, role, loc.type == ACL_MEM_LOCATION_TYPE_DEVICE ? "device" : "the host",
      loc.type == ACL_MEM_LOCATION_TYPE_DEVICE ? static_cast<int>(loc.id) : 0,
      place.device ? (place.deviceId >= 0 ? "device memory of another device" : "device memory")
                   : "host memory");
}

// The batch copies. The V1 calls (withFailIndex) must give failIndex, which names the
// copy that failed a check; the V2 calls have none.
Outcome memcpyBatch(const char* fn, void** dsts, std::size_t* destMaxs, void** srcs,
                    std::size_t* sizes, std::size_t numBatches, aclrtMemcpyBatchAttr* attrs,
                    std::size_t* attrsIndexes, std::size_t numAttrs, bool withFailIndex,
                    std::size_t* failIndex, bool async, aclrtStream stream) {
  if (withFailIndex && failIndex == nullptr) return nullArgument(fn, "failIndex");
  if (failIndex != nullptr) *failIndex = SIZE_MAX;
  if (dsts == nullptr || destMaxs == nullptr || srcs == nullptr || sizes == nullptr ||
      attrs == nullptr || attrsIndexes == nullptr || numBatches == 0 || numAttrs == 0 ||
      numAttrs > numBatches) {
    return cohort::makeError(ErrorCode::kInvalidArgument,
                             "{}: needs non-null arrays and 0 < numAttrs ({}) <= numBatches ({})",
                             fn, numAttrs, numBatches);
  }
  for (std::size_t k = 0; k < numAttrs; ++k) {
    const bool ok = k == 0 ? attrsIndexes[0] == 0
                           : attrsIndexes[k] > attrsIndexes[k - 1] && attrsIndexes[k] < numBatches;
    if (!ok) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: attrsIndexes[{}] = {}: the first must be 0, each larger than "
                               "the last and below numBatches ({})",
                               fn, k, attrsIndexes[k], numBatches);
    }
  }
  if (async) ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
  // Everything is checked before anything is copied.
  bool pageable = false;
  int direction = -1;  // 1: host to device, 0: device to host
  std::size_t k = 0;
  for (std::size_t i = 0; i < numBatches; ++i) {
    while (k + 1 < numAttrs && attrsIndexes[k + 1] <= i) ++k;
    if (dsts[i] == nullptr || srcs[i] == nullptr) {
      return cohort::makeError(ErrorCode::kInvalidArgument, "{}: copy {} has a null pointer", fn,
                               i);
    }
    if (sizes[i] > destMaxs[i]) {
      return cohort::makeError(ErrorCode::kInvalidArgument,
                               "{}: copy {}: size {} exceeds destMax {}", fn, i, sizes[i],
                               destMaxs[i]);
    }
    const Place d = placeOf(dsts[i]);
    const Place s = placeOf(srcs[i]);
    bool dstDevice = false, srcDevice = false;
    Outcome where = checkLocation(fn, "destination", i, attrs[k].dstLoc, d, &dstDevice);
    if (where.ok()) where = checkLocation(fn, "source", i, attrs[k].srcLoc, s, &srcDevice);
    if (where.ok() && dstDevice == srcDevice) {
      where = cohort::makeError(ErrorCode::kInvalidArgument,
                                "{}: copy {} is {}: a batch copies host to device or device to "
                                "host",
                                fn, i, dstDevice ? "device to device" : "host to host");
    }
    if (where.ok() && direction >= 0 && direction != (dstDevice ? 1 : 0)) {
      where = cohort::makeError(ErrorCode::kInvalidArgument,
                                "{}: copy {} goes the other way than copy 0: a batch goes one way",
                                fn, i);
    }
    if (!where.ok()) {
      if (failIndex != nullptr) *failIndex = i;
      return where;
    }
    direction = dstDevice ? 1 : 0;
    ACL_RETURN_IF_FAILED(checkSpan(fn, "destination", dsts[i], sizes[i], d));
    ACL_RETURN_IF_FAILED(checkSpan(fn, "source", srcs[i], sizes[i], s));
    pageable = pageable || d.pageable || s.pageable;
  }
  const rt::MemcpyKind kind =
      direction == 1 ? rt::MemcpyKind::kHostToDevice : rt::MemcpyKind::kDeviceToHost;
  for (std::size_t i = 0; i < numBatches; ++i) {
    if (async) {
      COHORT_RETURN_IF_ERROR(
          rt::memcpyAsync(dsts[i], destMaxs[i], srcs[i], sizes[i], kind, toStream(stream)));
    } else {
      COHORT_RETURN_IF_ERROR(rt::memcpy(dsts[i], destMaxs[i], srcs[i], sizes[i], kind));
    }
  }
  return async ? finishAsync(stream, pageable) : Outcome(Status::Ok());
}

constexpr const char* kSymbolsWhy =
    "device symbols live in kernel binaries, which cannot be loaded on an emulated device";

}  // namespace

aclError aclrtMemcpy2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                       size_t height, aclrtMemcpyKind kind) {
  return apiCall("aclrtMemcpy2d", [&]() -> Outcome {
    return memcpy2d("aclrtMemcpy2d", dst, dpitch, src, spitch, width, height, kind, false, nullptr);
  });
}

aclError aclrtMemcpy2dAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                            size_t height, aclrtMemcpyKind kind, aclrtStream stream) {
  return apiCall("aclrtMemcpy2dAsync", [&]() -> Outcome {
    return memcpy2d("aclrtMemcpy2dAsync", dst, dpitch, src, spitch, width, height, kind, true,
                    stream);
  });
}

aclError aclrtMemcpyBatch(void** dsts, size_t* destMaxs, void** srcs, size_t* sizes,
                          size_t numBatches, aclrtMemcpyBatchAttr* attrs, size_t* attrsIndexes,
                          size_t numAttrs, size_t* failIndex) {
  return apiCall("aclrtMemcpyBatch", [&]() -> Outcome {
    return memcpyBatch("aclrtMemcpyBatch", dsts, destMaxs, srcs, sizes, numBatches, attrs,
                       attrsIndexes, numAttrs, true, failIndex, false, nullptr);
  });
}

aclError aclrtMemcpyBatchAsync(void** dsts, size_t* destMaxs, void** srcs, size_t* sizes,
                               size_t numBatches, aclrtMemcpyBatchAttr* attrs, size_t* attrsIndexes,
                               size_t numAttrs, size_t* failIndex, aclrtStream stream) {
  return apiCall("aclrtMemcpyBatchAsync", [&]() -> Outcome {
    return memcpyBatch("aclrtMemcpyBatchAsync", dsts, destMaxs, srcs, sizes, numBatches, attrs,
                       attrsIndexes, numAttrs, true, failIndex, true, stream);
  });
}

aclError aclrtMemcpyBatchV2(void** dsts, size_t* destMaxs, void** srcs, size_t* sizes,
                            size_t numBatches, aclrtMemcpyBatchAttr* attrs, size_t* attrsIndexes,
                            size_t numAttrs) {
  return apiCall("aclrtMemcpyBatchV2", [&]() -> Outcome {
    return memcpyBatch("aclrtMemcpyBatchV2", dsts, destMaxs, srcs, sizes, numBatches, attrs,
                       attrsIndexes, numAttrs, false, nullptr, false, nullptr);
  });
}

aclError aclrtMemcpyBatchAsyncV2(void** dsts, size_t* destMaxs, void** srcs, size_t* sizes,
                                 size_t numBatches, aclrtMemcpyBatchAttr* attrs,
                                 size_t* attrsIndexes, size_t numAttrs, aclrtStream stream) {
  return apiCall("aclrtMemcpyBatchAsyncV2", [&]() -> Outcome {
    return memcpyBatch("aclrtMemcpyBatchAsyncV2", dsts, destMaxs, srcs, sizes, numBatches, attrs,
                       attrsIndexes, numAttrs, false, nullptr, true, stream);
  });
}

aclError aclrtMemcpyAsyncWithCondition(void* dst, size_t destMax, const void* src, size_t count,
                                       aclrtMemcpyKind kind, aclrtStream stream) {
  return apiCall("aclrtMemcpyAsyncWithCondition", [&]() -> Outcome {
    const char* fn = "aclrtMemcpyAsyncWithCondition";
    rt::MemcpyKind rtKind;
    ACL_RETURN_IF_FAILED(cohort::acl::toRuntimeKind(fn, kind, &rtKind));
    const Place d = placeOf(dst);
    const Place s = placeOf(src);
    const bool hostToHost =
        rtKind == rt::MemcpyKind::kHostToHost ||
        (rtKind == rt::MemcpyKind::kDefault && !d.attributes.isDevice && !s.attributes.isDevice);
    if (hostToHost) {
      return cohort::makeError(ErrorCode::kNotSupported,
                               "{}: host-to-host copies are not asynchronous on a device stream",
                               fn);
    }
    ACL_RETURN_IF_FAILED(cohort::acl::checkStream(fn, stream));
    COHORT_RETURN_IF_ERROR(rt::memcpyAsync(dst, destMax, src, count, rtKind, toStream(stream)));
    return finishAsync(stream, count > 0 && (d.pageable || s.pageable));
  });
}

aclError aclrtMemcpyToSymbol(const void* /*symbol*/, const void* /*src*/, size_t /*count*/,
                             size_t /*offset*/, aclrtMemcpyKind /*kind*/) {
  return cohort::acl::notSupported("aclrtMemcpyToSymbol", kSymbolsWhy);
}

aclError aclrtMemcpyFromSymbol(void* /*dst*/, size_t /*dstMax*/, const void* /*symbol*/,
                               size_t /*count*/, size_t /*offset*/, aclrtMemcpyKind /*kind*/) {
  return cohort::acl::notSupported("aclrtMemcpyFromSymbol", kSymbolsWhy);
}

aclError aclrtMemcpyToSymbolAsync(const void* /*symbol*/, const void* /*src*/, size_t /*count*/,
                                  size_t /*offset*/, aclrtMemcpyKind /*kind*/,
                                  aclrtStream /*stream*/) {
  return cohort::acl::notSupported("aclrtMemcpyToSymbolAsync", kSymbolsWhy);
}

aclError aclrtMemcpyFromSymbolAsync(void* /*dst*/, size_t /*dstMax*/, const void* /*symbol*/,
                                    size_t /*count*/, size_t /*offset*/, aclrtMemcpyKind /*kind*/,
                                    aclrtStream /*stream*/) {
  return cohort::acl::notSupported("aclrtMemcpyFromSymbolAsync", kSymbolsWhy);
}
