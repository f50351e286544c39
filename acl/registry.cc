#include "acl/registry.h"

#include <iterator>
#include <vector>

#include "acl/device_state.h"
#include "acl/report_hub.h"
#include "common/error.h"

namespace cohort::acl {

namespace rt = cohort::runtime;

namespace {
thread_local const Context* tContext = nullptr;

bool deviceIsSet(int device) {
  rt::DeviceInfo info;
  return rt::getDeviceInfo(device, &info).ok() && info.referenceCount > 0;
}
}  // namespace

Registry& Registry::get() {
  static Registry* registry = new Registry();  // never destroyed: used at exit
  return *registry;
}

Context* Registry::defaultContextLocked(int device) {
  auto& slot = defaults_[device];
  if (!slot) slot = std::make_unique<Context>(Context{device, true, {}});
  return slot.get();
}

// Handles come from the caller: compare pointers before reading through one.
bool Registry::isDefaultLocked(const Context* context) const {
  for (const auto& entry : defaults_) {
    if (entry.second.get() == context) return true;
  }
  return false;
}

bool Registry::isValidLocked(const Context* context) {
  if (context == nullptr) return false;
  if (explicit_.count(context) != 0) return true;
  return isDefaultLocked(context) && deviceIsSet(context->device);
}

// The device-state callbacks hear only of devices that exist.
Status Registry::setDevice(int device) {
  rt::DeviceInfo info;
  COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(device, &info));
  notifyDeviceState(device, ACL_RT_DEVICE_STATE_SET_PRE);
  COHORT_RETURN_IF_ERROR(setDeviceUntold(device));
  notifyDeviceState(device, ACL_RT_DEVICE_STATE_SET_POST);
  return Status::Ok();
}

Status Registry::resetDevice(int device) {
  rt::DeviceInfo info;
  COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(device, &info));
  notifyDeviceState(device, ACL_RT_DEVICE_STATE_RESET_PRE);
  COHORT_RETURN_IF_ERROR(resetDeviceUntold(device));
  notifyDeviceState(device, ACL_RT_DEVICE_STATE_RESET_POST);
  return Status::Ok();
}

Status Registry::setDeviceUntold(int device) {
  COHORT_RETURN_IF_ERROR(rt::setDevice(device));
  std::lock_guard<std::mutex> lock(mu_);
  ++deviceRefs_[device];
  tContext = defaultContextLocked(device);
  return Status::Ok();
}

Status Registry::resetDeviceUntold(int device) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = deviceRefs_.find(device);
    if (it == deviceRefs_.end() || it->second == 0) {
      rt::DeviceInfo info;
      COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(device, &info));  // names the valid range
      return makeError(ErrorCode::kInvalidDevice,
                       "aclrtResetDevice({}): the device is not set (no aclrtSetDevice "
                       "reference is outstanding)",
                       device);
    }
    --it->second;
  }
  COHORT_RETURN_IF_ERROR(rt::resetDevice(device));
  if (!deviceIsSet(device)) {
    if (tContext != nullptr && tContext->device == device && tContext->isDefault) {
      tContext = nullptr;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      defaultContextLocked(device)->sysParams.clear();
    }
    ReportHub::get().forgetDeadStreams();
  }
  return Status::Ok();
}

Status Registry::resetDeviceForce(int device) {
  rt::DeviceInfo info;
  COHORT_RETURN_IF_ERROR(rt::getDeviceInfo(device, &info));  // names the valid range
  notifyDeviceState(device, ACL_RT_DEVICE_STATE_RESET_PRE);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = deviceRefs_.find(device);
    if (it == deviceRefs_.end() || it->second == 0) {
      return makeError(ErrorCode::kInvalidDevice,
                       "aclrtResetDeviceForce({}): the device is not set (no aclrtSetDevice "
                       "reference is outstanding)",
                       device);
    }
    deviceRefs_.erase(it);
    // Explicit contexts of the device go with it: their references die in the teardown.
    // The calling thread's context is checked before its explicit one is freed.
    if (tContext != nullptr && tContext->device == device) tContext = nullptr;
    for (auto c = explicit_.begin(); c != explicit_.end();) {
      c = c->second->device == device ? explicit_.erase(c) : std::next(c);
    }
    defaultContextLocked(device)->sysParams.clear();
  }
  COHORT_RETURN_IF_ERROR(rt::resetDeviceForce(device));
  ReportHub::get().forgetDeadStreams();
  notifyDeviceState(device, ACL_RT_DEVICE_STATE_RESET_POST);
  return Status::Ok();
}

Status Registry::createContext(int device, Context** out) {
  COHORT_RETURN_IF_ERROR(rt::setDevice(device));
  auto context = std::make_unique<Context>(Context{device, false, {}});
  Context* raw = context.get();
  std::lock_guard<std::mutex> lock(mu_);
  explicit_[raw] = std::move(context);
  tContext = raw;
  *out = raw;
  return Status::Ok();
}

Status Registry::destroyContext(Context* context) {
  int device = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = explicit_.find(context);
    if (it == explicit_.end()) {
      if (isDefaultLocked(context)) {
        return makeError(ErrorCode::kInvalidHandle,
                         "aclrtDestroyContext: {} is the default context of device {}; "
                         "aclrtResetDevice releases it",
                         static_cast<void*>(context), context->device);
      }
      return makeError(ErrorCode::kInvalidHandle, "aclrtDestroyContext: {} is not a live context",
                       static_cast<void*>(context));
    }
    device = context->device;
    explicit_.erase(it);
  }
  if (tContext == context) tContext = nullptr;
  return rt::resetDevice(device);
}

Status Registry::setCurrentContext(Context* context) {
  int device = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!isValidLocked(context)) {
      return makeError(ErrorCode::kInvalidHandle,
                       "aclrtSetCurrentContext: {} is not a live context (destroyed, or its "
                       "device was reset)",
                       static_cast<void*>(context));
    }
    device = context->device;
  }
  // The context holds a reference on its device, so this pair only moves the
  // runtime's current device of this thread.
  COHORT_RETURN_IF_ERROR(rt::setDevice(device));
  COHORT_RETURN_IF_ERROR(rt::resetDevice(device));
  tContext = context;
  return Status::Ok();
}

Status Registry::currentContext(Context** out) {
  std::lock_guard<std::mutex> lock(mu_);
  return currentContextLocked(out);
}

Status Registry::setContextParam(int option, std::int64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  Context* context = nullptr;
  COHORT_RETURN_IF_ERROR(currentContextLocked(&context));
  context->sysParams[option] = value;
  return Status::Ok();
}

Status Registry::contextParam(int option, std::int64_t* value, bool* found) {
  std::lock_guard<std::mutex> lock(mu_);
  Context* context = nullptr;
  COHORT_RETURN_IF_ERROR(currentContextLocked(&context));
  auto it = context->sysParams.find(option);
  *found = it != context->sysParams.end();
  if (*found) *value = it->second;
  return Status::Ok();
}

Status Registry::currentContextLocked(Context** out) {
  if (isValidLocked(tContext)) {
    *out = const_cast<Context*>(tContext);
    return Status::Ok();
  }
  int device = -1;
  COHORT_RETURN_IF_ERROR(rt::getDevice(&device));
  if (!deviceIsSet(device)) {
    return makeError(ErrorCode::kInvalidDevice, "the current device {} has been reset", device);
  }
  *out = defaultContextLocked(device);
  return Status::Ok();
}

void Registry::addEvent(rt::Event* event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.insert(event);
}

void Registry::removeEvent(rt::Event* event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.erase(event);
}

void Registry::releaseAll() {
  std::set<rt::Event*> events;
  std::vector<int> resets;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events.swap(events_);
    for (const auto& entry : explicit_) resets.push_back(entry.second->device);
    explicit_.clear();
    for (const auto& [device, refs] : deviceRefs_) resets.insert(resets.end(), refs, device);
    deviceRefs_.clear();
    for (auto& entry : defaults_) entry.second->sysParams.clear();
  }
  for (rt::Event* event : events) (void)rt::eventDestroy(event);
  for (int device : resets) (void)rt::resetDevice(device);
  tContext = nullptr;
}

}  // namespace cohort::acl
