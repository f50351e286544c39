// What the files of model entry points (model_api.cc, model_control_api.cc) share:
// their handles as runtime objects, and ACL's capture modes, which have the
// runtime's numbers.
#pragma once

#include "acl/acl.h"
#include "cohort/runtime_capture.h"

namespace cohort::acl {

inline runtime::Model* toModel(aclmdlRI model) { return static_cast<runtime::Model*>(model); }

inline bool knownCaptureMode(aclmdlRICaptureMode mode) {
  return mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
         mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL ||
         mode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
}

inline runtime::CaptureMode toCaptureMode(aclmdlRICaptureMode mode) {
  return static_cast<runtime::CaptureMode>(mode);
}

}  // namespace cohort::acl
