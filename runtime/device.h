// Emulated devices and the registry of everything the runtime hands out (devices,
// streams, events, imported mappings), so that any pointer or handle a caller
// passes can be checked before it is used.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cohort/runtime.h"
#include "runtime/event.h"
#include "runtime/memory_pool.h"
#include "runtime/stream.h"

namespace cohort::runtime {

/// Runs non-blocking callbacks of one device in order, off the stream workers.
class CallbackRunner {
 public:
  ~CallbackRunner();
  void post(std::function<void()> fn);

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

/// One emulated device. Brought up by its first setDevice, torn down (streams
/// destroyed, memory released to its pool) by the last resetDevice.
class Device {
 public:
  Device(int id, int physicalId, std::size_t capacity)
      : id_(id), physicalId_(physicalId), capacity_(capacity) {}

  int id() const { return id_; }
  int physicalId() const { return physicalId_; }
  std::size_t capacity() const { return capacity_; }
  /// Null until the device is first set. Stable afterwards (never unmapped).
  MemoryPool* pool() const { return pool_.load(std::memory_order_acquire); }

  std::mutex mu;          // guards the fields below
  int refCount = 0;
  std::atomic<std::uint64_t> resetCount{0};  // teardowns so far (deviceResetCount)
  Stream* defaultStream = nullptr;
  std::set<Stream*> streams;  // including the default stream
  /// Streams destroyed by force whose queued work still runs; deleted once idle
  /// (at the next stream creation or destruction) or at teardown.
  std::vector<Stream*> retired;
  int nextStreamId = 0;
  std::unique_ptr<CallbackRunner> callbacks;

  void setPool(std::unique_ptr<MemoryPool> pool);

 private:
  const int id_;
  const int physicalId_;
  const std::size_t capacity_;
  std::unique_ptr<MemoryPool> ownedPool_;
  std::atomic<MemoryPool*> pool_{nullptr};
};

/// What a pointer is, as far as the runtime knows.
struct PointerInfo {
  // kMapped: device memory at addresses of a reservation (vmm.h), outside every pool.
  // kRegistered: plain host memory registered with hostRegister; kManaged: managedMalloc
  // memory (host_memory.h).
  enum class Kind {
    kHost, kPinnedHost, kDevice, kImported, kMapped, kRegistered, kManaged
  } kind = Kind::kHost;
  int device = -1;
  bool live = false;  // inside a live allocation (always true for kHost)
  // Host memory registered as mapped and managed memory: a copy may use it as host
  // memory or as device memory.
  bool eitherSide = false;
  char* base = nullptr;
  std::size_t size = 0;  // bytes from base that belong to the allocation
  const char* label = "host memory";
};

/// Process-wide singleton. Thread-safe.
class DeviceManager {
 public:
  static DeviceManager& get();

  /// The configuration / version status every public call checks first.
  const Status& initStatus() const { return initStatus_; }
  int deviceCount() const { return static_cast<int>(devices_.size()); }
  /// kInvalidDevice (naming the visible range) for a bad id.
  Status device(int id, Device** out);

  Status setDevice(int id);
  Status resetDevice(int id);
  /// resetDevice down to no reference at once (device_control.cc).
  Status resetDeviceForce(int id);

  Status createStream(Device* device, Stream** out);
  Status destroyStream(Stream* stream);
  /// destroyStream without waiting: the handle dies now, the queued work runs on
  /// (waits end aborted), the stream is deleted once idle (device.cc).
  Status destroyStreamForce(Stream* stream);
  Status unregisterStream(Stream* stream, const char* function);
  /// Resolves a caller's stream: null = the current device's default stream.
  Status resolveStream(Stream* stream, Stream** out);

  Status createEvent(Event** out);
  Status destroyEvent(Event* event);
  bool isLiveEvent(Event* event);

  MemoryPool* hostPool() const { return hostPool_.get(); }
  /// The pinned host pool and every device pool created so far, in a fixed order.
  /// Takes no lock (the devices are fixed at start, a pool is never unmapped), so
  /// the fork handlers may call it.
  std::vector<MemoryPool*> pools() const;
  PointerInfo classify(const void* p);
  /// Before a synchronous memory call of the host touches `p`: if it is device memory,
  /// waits for the device work leading its device's streams (Stream::settle).
  void settleFor(const PointerInfo& p);

  Status importMapping(const MemHandle& handle, void** ptr);
  Status closeMapping(void* ptr);

 private:
  DeviceManager();
  Status bringUp(Device* device);
  void tearDown(Device* device);
  /// Before a reset destroys the device's streams, the stream observer hears of each,
  /// without device->mu (it may call into the runtime): while `removing()` (called
  /// under the lock) holds, announces the streams not announced yet, releasing `lock`
  /// (on device->mu) around the calls; streams created meanwhile are announced in the
  /// next round. Returns with `lock` held.
  void announceStreamRemovals(Device* device, std::unique_lock<std::mutex>* lock,
                              const std::function<bool()>& removing);

  Status initStatus_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::unique_ptr<MemoryPool> hostPool_;

  std::mutex registryMu_;
  std::set<Stream*> streams_;
  std::set<Event*> events_;
  struct Import {
    void* mapping;
    std::size_t mappingSize;
    char* user;
    std::size_t size;
  };
  std::map<std::uintptr_t, Import> imports_;  // keyed by user pointer
};

/// Installs (by the DeviceManager's constructor, once) the fork() handlers that make every pool
/// copy-on-write in a forked child (runtime/fork_handlers.cc).
void registerForkHandlers();

/// The calling thread's current device id (-1 if none): getDevice without its lock.
int currentDeviceId();
void setCurrentDeviceId(int id);

}  // namespace cohort::runtime
