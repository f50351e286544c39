#include "collective/device_area.h"

#include "cohort/runtime.h"
#include "common/error.h"

namespace cohort::collective {

Status DeviceArea::get(std::size_t bytes, void** out) {
  if (bytes > bytes_) {
    release();
    const Status s = runtime::deviceMalloc(&area_, bytes);
    if (!s.ok()) {
      area_ = nullptr;
      return makeError(s.code(), "{} ({} bytes): {}", what_, bytes, s.message());
    }
    bytes_ = bytes;
  }
  *out = area_;
  return Status::Ok();
}

void DeviceArea::release() {
  if (area_ != nullptr) (void)runtime::deviceFree(area_);
  area_ = nullptr;
  bytes_ = 0;
}

}  // namespace cohort::collective
