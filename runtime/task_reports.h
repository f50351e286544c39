// Internal side of the task reports (public side: the "Device control and task
// reports" section of cohort/runtime.h): what streams call when they queue a task and
// when one fails.
#pragma once

#include <cstdint>

#include "cohort/status.h"

namespace cohort::runtime {

class Stream;

/// The Linux thread id of the calling thread (looked up once per thread).
std::uint32_t currentThreadId();
/// In a forked child: the thread that forked has another id there.
void forgetThreadId();
/// Records, for threadLastTask(), that the calling thread queued task `index` on
/// `stream` (ignored for default streams).
void noteTaskQueued(const Stream& stream, std::uint64_t index);
/// Tells the task-failure observer, if any, that task `index` of `stream`, queued by
/// thread `launcher`, failed with `status`.
void reportTaskFailure(const Stream& stream, std::uint64_t index, std::uint32_t launcher,
                       const Status& status);

}  // namespace cohort::runtime
