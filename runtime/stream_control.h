// What stream_control.cc shares with the rest of the runtime: the stream observer's
// notifications, and wait tasks queued without another apiCall around them.
#pragma once

#include <memory>

#include "cohort/runtime.h"

namespace cohort::runtime {

class Stream;
struct EventState;

/// Whether setStreamObserver installed an observer (cheap: one atomic load).
bool hasStreamObserver();
/// Tells the observer, if any, that `stream` was created or is about to be destroyed.
/// The caller holds no runtime lock.
void notifyStreamObserver(Stream* stream, bool created);

/// launchWait on a resolved stream.
void enqueueWaitTask(Stream* stream, WaitTask task);

/// While a capture runs (stream_api.cc): an event record on a capturing stream is
/// recorded into the model (`external`: for streams outside the model, which then do
/// not join the capture); a wait on a capturing stream is recorded, and a stream that
/// waits on an event recorded in a capture joins it. kNotReady when no capture is
/// concerned: queue the real record or wait.
Status captureEventRecord(Stream* s, const std::shared_ptr<EventState>& state, bool external);
Status captureEventWait(Stream* s, const std::shared_ptr<EventState>& state);

}  // namespace cohort::runtime
