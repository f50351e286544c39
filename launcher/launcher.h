// cohortrun's job, start to end: plan the ranks, host the store, start the
// ranks with their environment, supervise them. The command-line tool is a thin
// parser in front of runJob.
#pragma once

#include "launcher/launch_plan.h"

namespace cohort::launcher {

/// Runs the job and returns cohortrun's exit code: 0 when every rank exited 0;
/// the first failed rank's code (128 + signal for a signal); 124 on --timeout;
/// 128 + signal when cohortrun was signalled; 127 when the program cannot be
/// started; 1 for bad options, a bad rank table or a store that cannot start.
/// Errors go to stderr as one "cohortrun: ..." line each. Call from the main
/// thread before any other thread starts (see SignalChannel).
int runJob(const LaunchOptions& options);

}  // namespace cohort::launcher
