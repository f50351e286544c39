// Public device functions (cohort/runtime.h).
#include "runtime/api.h"

namespace cohort::runtime {

Status currentDevice(DeviceManager& manager, Device** out) {
  const int id = currentDeviceId();
  if (id < 0) {
    return Status(ErrorCode::kInvalidDevice,
                  "no current device on this thread (call setDevice first)");
  }
  return manager.device(id, out);
}

Status init() {
  return apiCall([](DeviceManager&) { return Status::Ok(); });
}

Status getDeviceCount(int* count) {
  return apiCall([&](DeviceManager& m) {
    if (count == nullptr) return Status(ErrorCode::kInvalidArgument, "getDeviceCount: count is null");
    *count = m.deviceCount();
    return Status::Ok();
  });
}

Status setDevice(int device) {
  return apiCall([&](DeviceManager& m) { return m.setDevice(device); });
}

Status resetDevice(int device) {
  return apiCall([&](DeviceManager& m) { return m.resetDevice(device); });
}

Status getDevice(int* device) {
  return apiCall([&](DeviceManager& m) {
    if (device == nullptr) return Status(ErrorCode::kInvalidArgument, "getDevice: device is null");
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(currentDevice(m, &d));
    *device = d->id();
    return Status::Ok();
  });
}

Status getDeviceInfo(int device, DeviceInfo* info) {
  return apiCall([&](DeviceManager& m) {
    if (info == nullptr) return Status(ErrorCode::kInvalidArgument, "getDeviceInfo: info is null");
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(m.device(device, &d));
    std::lock_guard<std::mutex> lock(d->mu);
    info->id = d->id();
    info->physicalId = d->physicalId();
    info->memoryTotal = d->capacity();
    const std::size_t used = d->pool() != nullptr ? d->pool()->used() : 0;
    info->memoryFree = d->capacity() - used;
    info->memoryPeak = d->pool() != nullptr ? d->pool()->peak() : 0;
    info->referenceCount = d->refCount;
    info->streamCount = static_cast<int>(d->streams.size());
    return Status::Ok();
  });
}

Status deviceResetCount(int device, std::uint64_t* count) {
  return apiCall([&](DeviceManager& m) {
    if (count == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "deviceResetCount: count is null");
    }
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(m.device(device, &d));
    *count = d->resetCount.load(std::memory_order_acquire);
    return Status::Ok();
  });
}

Status getMemInfo(std::size_t* freeBytes, std::size_t* totalBytes) {
  return apiCall([&](DeviceManager& m) {
    if (freeBytes == nullptr || totalBytes == nullptr) {
      return Status(ErrorCode::kInvalidArgument, "getMemInfo: null output pointer");
    }
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(currentDevice(m, &d));
    *totalBytes = d->capacity();
    *freeBytes = d->capacity() - (d->pool() != nullptr ? d->pool()->used() : 0);
    return Status::Ok();
  });
}

namespace {
// Waits for every stream of d (created before the call).
Status synchronizeStreamsOf(DeviceManager& m, Device* d, long timeoutMs) {
  std::vector<Stream*> streams;
  {
    std::lock_guard<std::mutex> lock(d->mu);
    streams.assign(d->streams.begin(), d->streams.end());
  }
  const Deadline deadline = Deadline::afterMs(timeoutMs);
  Status first;
  for (Stream* s : streams) {
    Stream* live = nullptr;
    if (!m.resolveStream(s, &live).ok()) continue;  // destroyed meanwhile
    Status st = s->synchronize(deadline);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}
}  // namespace

Status synchronizeDevice(long timeoutMs) {
  return apiCall([&](DeviceManager& m) {
    COHORT_RETURN_IF_ERROR(captureCheckUnsafe("synchronizeDevice"));
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(currentDevice(m, &d));
    return synchronizeStreamsOf(m, d, timeoutMs);
  });
}

Status synchronizeDeviceById(int device, long timeoutMs) {
  return apiCall([&](DeviceManager& m) {
    Device* d = nullptr;
    COHORT_RETURN_IF_ERROR(m.device(device, &d));
    return synchronizeStreamsOf(m, d, timeoutMs);
  });
}

}  // namespace cohort::runtime
