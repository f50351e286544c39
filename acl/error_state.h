// What aclrtGetLastError / aclrtPeekAtLastError / aclGetRecentErrMsg report: the
// calling thread's latest error number, and the messages of failed calls since
// they were last read (per thread, or per process with err_msg_mode "1").
#pragma once

#include "acl/acl_base.h"
#include "cohort/status.h"

namespace cohort::acl {

/// Records a failed call of `function`: sets the thread's last error number,
/// stacks "function: number (NAME): message", stores the Status as Cohort's
/// lastError() and logs it. Thread-safe.
void noteFailure(const char* function, aclError code, const Status& status);

/// The thread's latest error number; `reset` sets it back to ACL_SUCCESS.
aclError lastErrorNumber(bool reset);

/// The stacked messages, newest first, one per line, and clears them; null when
/// none. The text stays valid until the calling thread's next call.
const char* takeRecentMessages();

/// err_msg_mode: false = per thread (default), true = one stack for the process.
void setProcessWideMessages(bool processWide);

}  // namespace cohort::acl
