// What the ACL layer keeps about streams beyond the runtime: the flags and priority
// they were created with, the attributes aclrtSetStreamAttribute records, and the
// callbacks aclrtRegStreamStateCallback registers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "acl/acl.h"
#include "acl/api_call.h"
#include "cohort/runtime.h"

namespace cohort::acl {

struct StreamSettings {
  std::uint32_t flags = 0;
  std::uint32_t priority = 0;
  std::uint32_t overflowSwitch = 0;
  std::uint32_t userCustomTag = 0;
  std::uint32_t cacheOpInfo = 0;
};

/// Settings per stream, keyed by (device, stream id), which the runtime never reuses:
/// an entry can only describe the stream it was made for. Entries go when the runtime
/// says their stream is destroyed (its stream observer, installed by get()). The same
/// observer runs the state callbacks. Process-wide, thread-safe, never destroyed.
class StreamAttrs {
 public:
  static StreamAttrs& get();

  /// Records what a stream was created with (aclrtCreateStreamWithConfig, V2).
  void created(aclrtStream stream, std::uint32_t flags, std::uint32_t priority);
  /// The settings of a live stream (null: the current device's default stream);
  /// defaults for one nothing was recorded for.
  Status read(aclrtStream stream, StreamSettings* out);
  Status update(aclrtStream stream, const std::function<void(StreamSettings&)>& change);

  /// aclrtRegStreamStateCallback: registers (callback non-null) or removes one.
  Outcome registerCallback(const char* name, aclrtStreamStateCallback callback, void* args);

 private:
  using Key = std::pair<int, int>;  // device, stream id
  struct Callback {
    aclrtStreamStateCallback fn;
    void* args;
  };
  StreamAttrs();
  void onStream(runtime::Stream* stream, bool created);

  std::mutex mu_;
  std::map<Key, StreamSettings> settings_;
  std::map<std::string, Callback> callbacks_;
};

}  // namespace cohort::acl
