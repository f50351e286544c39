// IPC events: an event whose record counters live in memory shared by the processes
// of a node (sharedAlloc / memImport), so that a record in one of them releases the
// waits and synchronizations of all. The public functions are in cohort/runtime.h;
// stream_api.cc routes an IPC event's record, wait, query and synchronize here.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "cohort/runtime.h"
#include "common/wait.h"
#include "runtime/event.h"

namespace cohort::runtime {

class Stream;

/// The shared part. Holds no pointers: every process maps it at its own address.
struct IpcEventBlock {
  std::uint32_t magic;
  std::uint32_t version;
  std::atomic<std::uint64_t> recorded;   // generation of the latest record call, any process
  std::atomic<std::uint64_t> completed;  // highest generation that has run
  std::atomic<std::uint32_t> failed;     // that completion came from a failed stream
  std::atomic<std::int32_t> failedPid;   // the process whose stream had failed
  WaitWord word;                         // notified at every completion
};

/// One process's link to a block: the creator frees it (sharedFree), an opener unmaps
/// it (memClose), when the event and the last of its queued tasks are gone. Immutable
/// after construction, so thread-safe.
class IpcEvent {
 public:
  IpcEvent(IpcEventBlock* block, const MemHandle& handle, bool creator)
      : block_(block), handle_(handle), creator_(creator) {}
  ~IpcEvent();
  IpcEvent(const IpcEvent&) = delete;
  IpcEvent& operator=(const IpcEvent&) = delete;

  IpcEventBlock* block() const { return block_; }
  const MemHandle& handle() const { return handle_; }

 private:
  IpcEventBlock* const block_;
  const MemHandle handle_;
  const bool creator_;
};

/// The IPC counterparts of eventRecord, streamWaitEvent (timeoutMs <= 0: the event wait
/// timeout), eventQuery and eventSynchronize, for a resolved stream.
Status ipcEventRecord(Stream* stream, const std::shared_ptr<IpcEvent>& ipc);
Status ipcEventWait(Stream* stream, const std::shared_ptr<EventState>& state, long timeoutMs);
Status ipcEventQuery(const IpcEvent& ipc);
Status ipcEventSynchronize(const IpcEvent& ipc, long timeoutMs);
/// kNotSupported naming `function`: what an IPC event cannot do.
Status ipcEventUnsupported(const char* function);

}  // namespace cohort::runtime
