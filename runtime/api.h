// The wrapper every public runtime function runs in: initialisation check, then
// the body, then the result recorded as the thread's last error.
#pragma once

#include "common/error.h"
#include "runtime/device.h"

namespace cohort::runtime {

template <typename Body>
Status apiCall(Body&& body) {
  DeviceManager& manager = DeviceManager::get();
  if (!manager.initStatus().ok()) return recordError(manager.initStatus());
  return recordError(body(manager));
}

/// The Device object of the calling thread's current device.
Status currentDevice(DeviceManager& manager, Device** out);

}  // namespace cohort::runtime
