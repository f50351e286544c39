#include "acl/init_callbacks.h"

#include <mutex>
#include <vector>

#include "acl/acl.h"
#include "common/error.h"
#include "common/log.h"

namespace cohort::acl {

namespace {

template <typename Fn>
struct Entry {
  aclRegisterCallbackType type;
  Fn fn;
  void* userData;
};

// Registrations and the configuration text of the current aclInit. Process-wide,
// never destroyed; callbacks run without the lock, so they may register others.
struct CallbackState {
  std::mutex mu;
  std::vector<Entry<aclInitCallbackFunc>> init;
  std::vector<Entry<aclFinalizeCallbackFunc>> finalize;
  std::string configText;
};

CallbackState& state() {
  static auto* s = new CallbackState();
  return *s;
}

Outcome checkType(const char* function, aclRegisterCallbackType type) {
  const int t = static_cast<int>(type);
  if ((t < ACL_REG_TYPE_ACL_MODEL || t > ACL_REG_TYPE_ACL_RETR) && t != ACL_REG_TYPE_OTHER) {
    return makeError(ErrorCode::kInvalidArgument, "{}: type {} is not an aclRegisterCallbackType",
                     function, t);
  }
  return Status::Ok();
}

// Adds (replacing the userData of an equal registration) or removes one entry.
template <typename Fn>
Outcome update(const char* function, std::vector<Entry<Fn>>* entries, aclRegisterCallbackType type,
               Fn fn, void* userData, bool add) {
  ACL_RETURN_IF_FAILED(checkType(function, type));
  if (fn == nullptr) return makeError(ErrorCode::kInvalidArgument, "{}: cbFunc is null", function);
  for (auto it = entries->begin(); it != entries->end(); ++it) {
    if (it->type == type && it->fn == fn) {
      if (add) {
        it->userData = userData;
      } else {
        entries->erase(it);
      }
      return Status::Ok();
    }
  }
  if (add) entries->push_back(Entry<Fn>{type, fn, userData});
  return Status::Ok();
}

Outcome callInit(const Entry<aclInitCallbackFunc>& entry, const std::string& text) {
  const aclError result = entry.fn(text.c_str(), text.size(), entry.userData);
  if (result == ACL_SUCCESS) return Status::Ok();
  return Outcome(result,
                 makeError(ErrorCode::kInvalidUsage, "an init callback (type {}) returned {}",
                           static_cast<int>(entry.type), result));
}

}  // namespace

Outcome runInitCallbacks(const std::string& configText) {
  std::vector<Entry<aclInitCallbackFunc>> callbacks;
  {
    CallbackState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    s.configText = configText;
    callbacks = s.init;
  }
  Outcome first = Status::Ok();
  for (const auto& entry : callbacks) {
    Outcome result = callInit(entry, configText);
    if (!result.ok() && first.ok()) first = result;
  }
  return first;
}

void runFinalizeCallbacks() {
  std::vector<Entry<aclFinalizeCallbackFunc>> callbacks;
  {
    CallbackState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    callbacks = s.finalize;
  }
  for (const auto& entry : callbacks) {
    const aclError result = entry.fn(entry.userData);
    if (result != ACL_SUCCESS) {
      COHORT_LOG(kWarn, "acl", "a finalize callback (type {}) returned {}",
                 static_cast<int>(entry.type), result);
    }
  }
}

}  // namespace cohort::acl

namespace {

using cohort::acl::apiCallAnyTime;
using cohort::acl::Outcome;
using cohort::acl::state;

}  // namespace

aclError aclInitCallbackRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc,
                                 void* userData) {
  const char* fn = "aclInitCallbackRegister";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    std::string text;
    {
      auto& s = state();
      std::lock_guard<std::mutex> lock(s.mu);
      ACL_RETURN_IF_FAILED(cohort::acl::update(fn, &s.init, type, cbFunc, userData, true));
      text = s.configText;
    }
    // Registered while initialised: it runs now, as it would have at aclInit.
    if (!cohort::acl::isInitialized()) return cohort::Status::Ok();
    return cohort::acl::callInit({type, cbFunc, userData}, text);
  });
}

aclError aclInitCallbackUnRegister(aclRegisterCallbackType type, aclInitCallbackFunc cbFunc) {
  const char* fn = "aclInitCallbackUnRegister";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    auto& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return cohort::acl::update(fn, &s.init, type, cbFunc, nullptr, false);
  });
}

aclError aclFinalizeCallbackRegister(aclRegisterCallbackType type, aclFinalizeCallbackFunc cbFunc,
                                     void* userData) {
  const char* fn = "aclFinalizeCallbackRegister";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    auto& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return cohort::acl::update(fn, &s.finalize, type, cbFunc, userData, true);
  });
}

aclError aclFinalizeCallbackUnRegister(aclRegisterCallbackType type,
                                       aclFinalizeCallbackFunc cbFunc) {
  const char* fn = "aclFinalizeCallbackUnRegister";
  return apiCallAnyTime(fn, [&]() -> Outcome {
    auto& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    return cohort::acl::update(fn, &s.finalize, type, cbFunc, nullptr, false);
  });
}
