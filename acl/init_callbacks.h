// The callbacks programs register to run at aclInit and at finalisation
// (aclInitCallbackRegister, aclFinalizeCallbackRegister), run by init_api.cc.
#pragma once

#include <string>

#include "acl/api_call.h"

namespace cohort::acl {

/// After a successful aclInit: remembers the configuration text (for callbacks
/// registered later) and runs the init callbacks in registration order. All run; the
/// outcome is the first failure (a callback's number), if any.
Outcome runInitCallbacks(const std::string& configText);
/// At finalisation, before anything is released: runs the finalize callbacks in
/// registration order, logging failures (finalisation goes on).
void runFinalizeCallbacks();

}  // namespace cohort::acl
