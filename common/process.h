// Whether another process of this machine has ended.
#pragma once

#include <sys/types.h>

namespace cohort {

/// True once process `pid` has ended: it is gone, exiting, or a zombie its parent
/// has not reaped yet (a rank killed under a launcher that reaps late must count as
/// dead).
/// False for a live process and for one this process may not look at.
bool processEnded(pid_t pid);

}  // namespace cohort
