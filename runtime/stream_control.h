// What stream_control.cc shares with the rest of the runtime: the stream observer's
// notifications, and wait tasks queued without another apiCall around them.
#pragma once

#include "cohort/runtime.h"

namespace cohort::runtime {

class Stream;

/// Whether setStreamObserver installed an observer (cheap: one atomic load).
bool hasStreamObserver();
/// Tells the observer, if any, that `stream` was created or is about to be destroyed.
/// The caller holds no runtime lock.
void notifyStreamObserver(Stream* stream, bool created);

/// launchWait on a resolved stream.
void enqueueWaitTask(Stream* stream, WaitTask task);

}  // namespace cohort::runtime
