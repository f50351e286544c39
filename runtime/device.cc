#include "runtime/device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "common/version.h"
#include "runtime/host_memory.h"
#include "runtime/ipc_handle.h"
#include "runtime/memory_generation.h"
#include "runtime/node_registry.h"
#include "runtime/stream_control.h"
#include "runtime/vmm.h"

namespace cohort::runtime {

namespace {
thread_local int tCurrentDevice = -1;
constexpr std::size_t kHostPoolCapacity = 64ull << 30;
}  // namespace

int currentDeviceId() { return tCurrentDevice; }
void setCurrentDeviceId(int id) { tCurrentDevice = id; }

CallbackRunner::~CallbackRunner() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CallbackRunner::post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable()) {
    thread_ = std::thread([this] {
      nameThisThread("cohort callback");
      loop();
    });
  }
  queue_.push_back(std::move(fn));
  cv_.notify_one();
}

void CallbackRunner::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    auto fn = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    fn();
    lock.lock();
  }
}

void Device::setPool(std::unique_ptr<MemoryPool> pool) {
  ownedPool_ = std::move(pool);
  pool_.store(ownedPool_.get(), std::memory_order_release);
  noteMemoryChange();  // its addresses are device memory from now on
}

DeviceManager& DeviceManager::get() {
  // Never destroyed: stream workers may still run while static destructors do.
  static DeviceManager* manager = new DeviceManager();
  return *manager;
}

DeviceManager::DeviceManager() {
  const Config& config = Config::global();
  initStatus_ = config.status();
  if (initStatus_.ok()) initStatus_ = checkApiVersion();
  if (!initStatus_.ok()) {
    COHORT_LOG(kError, "runtime", "initialisation refused: {}", initStatus_.toString());
    return;
  }
  std::vector<int> physical = config.visibleDevices;
  if (physical.empty()) {
    for (int i = 0; i < config.deviceCount; ++i) physical.push_back(i);
  }
  for (int id : physical) {
    if (id >= config.deviceCount) {
      initStatus_ = makeError(ErrorCode::kConfigError,
                              "Value '{}' for environment variable COHORT_VISIBLE_DEVICES is "
                              "invalid: device {} does not exist (COHORT_DEVICE_COUNT={})",
                              fmt::join(config.visibleDevices, ","), id, config.deviceCount);
      devices_.clear();
      return;
    }
    devices_.push_back(std::make_unique<Device>(static_cast<int>(devices_.size()), id,
                                                static_cast<std::size_t>(config.deviceMemory)));
  }
  Status s = MemoryPool::create("pinned host memory", kHostPoolCapacity, &hostPool_);
  if (!s.ok()) initStatus_ = s;
  registerForkHandlers();
}

std::vector<MemoryPool*> DeviceManager::pools() const {
  std::vector<MemoryPool*> out;
  if (hostPool_ != nullptr) out.push_back(hostPool_.get());
  for (const auto& d : devices_) {
    if (d->pool() != nullptr) out.push_back(d->pool());
  }
  return out;
}

Status DeviceManager::device(int id, Device** out) {
  if (id < 0 || id >= deviceCount()) {
    return makeError(ErrorCode::kInvalidDevice, "device {} does not exist: {} device(s) visible "
                     "(ids 0..{}; COHORT_DEVICE_COUNT / COHORT_VISIBLE_DEVICES)",
                     id, deviceCount(), deviceCount() - 1);
  }
  *out = devices_[static_cast<std::size_t>(id)].get();
  return Status::Ok();
}

void DeviceManager::settleFor(const PointerInfo& p) {
  using Kind = PointerInfo::Kind;
  if (p.kind != Kind::kDevice && p.kind != Kind::kImported && p.kind != Kind::kMapped) return;
  auto settle = [](Device* d) {
    // Under the device's lock, so that no stream is deleted meanwhile: the work
    // waited for takes no lock of the device.
    std::lock_guard<std::mutex> lock(d->mu);
    for (Stream* s : d->streams) s->settle();
    for (Stream* s : d->retired) s->settle();
  };
  Device* d = nullptr;
  if (device(p.device, &d).ok()) {
    settle(d);
  } else if (p.kind == Kind::kImported) {  // a peer's memory: any device may use it
    for (const auto& each : devices_) settle(each.get());
  }
}

Status DeviceManager::bringUp(Device* device) {
  if (device->pool() == nullptr) {
    std::unique_ptr<MemoryPool> pool;
    COHORT_RETURN_IF_ERROR(
        MemoryPool::create(fmt::format("device {}", device->id()), device->capacity(), &pool));
    device->setPool(std::move(pool));
  }
  auto stream = new Stream(device, device->nextStreamId++, /*isDefault=*/true);
  device->defaultStream = stream;
  device->streams.insert(stream);
  registryDeviceUp(device->id(), device->physicalId(), device->capacity());
  std::lock_guard<std::mutex> lock(registryMu_);
  streams_.insert(stream);
  return Status::Ok();
}

void DeviceManager::tearDown(Device* device) {
  device->resetCount.fetch_add(1, std::memory_order_acq_rel);
  // Streams drain in their destructors. Unregister first so no new work arrives.
  {
    std::lock_guard<std::mutex> lock(registryMu_);
    for (Stream* s : device->streams) streams_.erase(s);
  }
  for (Stream* s : device->streams) delete s;
  device->streams.clear();
  for (Stream* s : device->retired) delete s;  // their queued work drains first
  device->retired.clear();
  device->defaultStream = nullptr;
  device->callbacks.reset();
  device->pool()->reset();
  registryDeviceDown(device->id());
  COHORT_LOG(kInfo, "runtime", "device {} reset: streams destroyed, memory released",
             device->id());
}

void DeviceManager::announceStreamRemovals(Device* device, std::unique_lock<std::mutex>* lock,
                                           const std::function<bool()>& removing) {
  std::set<Stream*> announced;
  while (removing() && hasStreamObserver()) {
    std::vector<Stream*> unannounced;
    for (Stream* s : device->streams) {
      if (announced.count(s) == 0) unannounced.push_back(s);
    }
    if (unannounced.empty()) break;
    lock->unlock();
    for (Stream* s : unannounced) notifyStreamObserver(s, /*created=*/false);
    announced.insert(unannounced.begin(), unannounced.end());
    lock->lock();
  }
}

Status DeviceManager::setDevice(int id) {
  Device* device = nullptr;
  COHORT_RETURN_IF_ERROR(this->device(id, &device));
  Stream* created = nullptr;  // the default stream, when this call brought the device up
  {
    std::lock_guard<std::mutex> lock(device->mu);
    if (device->refCount == 0) {
      COHORT_RETURN_IF_ERROR(bringUp(device));
      created = device->defaultStream;
    }
    ++device->refCount;
    tCurrentDevice = id;
    log::setThreadDevice(id);
  }
  if (created != nullptr) notifyStreamObserver(created, /*created=*/true);
  return Status::Ok();
}

Status DeviceManager::resetDevice(int id) {
  Device* device = nullptr;
  COHORT_RETURN_IF_ERROR(this->device(id, &device));
  std::unique_lock<std::mutex> lock(device->mu);
  // The last reference destroys the device's streams.
  announceStreamRemovals(device, &lock, [device] { return device->refCount == 1; });
  if (device->refCount == 0) {
    return makeError(ErrorCode::kInvalidDevice, "resetDevice({}): the device is not set", id);
  }
  if (--device->refCount == 0) tearDown(device);
  if (tCurrentDevice == id && device->refCount == 0) {
    tCurrentDevice = -1;
    log::setThreadDevice(-1);
  }
  return Status::Ok();
}

namespace {

// With device->mu held: deletes the retired streams that have finished their work.
void reapRetired(Device* device) {
  auto& retired = device->retired;
  for (auto it = retired.begin(); it != retired.end();) {
    if ((*it)->idle()) {
      delete *it;  // its worker has nothing left: returns at once
      it = retired.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

Status DeviceManager::createStream(Device* device, Stream** out) {
  std::lock_guard<std::mutex> lock(device->mu);
  if (device->refCount == 0) {
    return makeError(ErrorCode::kInvalidDevice, "device {} is not set", device->id());
  }
  reapRetired(device);
  auto stream = new Stream(device, device->nextStreamId++, /*isDefault=*/false);
  device->streams.insert(stream);
  {
    std::lock_guard<std::mutex> registry(registryMu_);
    streams_.insert(stream);
  }
  *out = stream;
  return Status::Ok();
}

// Takes `stream` out of the registry: its handle is dead from now on.
Status DeviceManager::unregisterStream(Stream* stream, const char* function) {
  std::lock_guard<std::mutex> lock(registryMu_);
  if (stream == nullptr || streams_.count(stream) == 0) {
    return makeError(ErrorCode::kInvalidHandle, "{}: {} is not a live stream", function,
                     static_cast<void*>(stream));
  }
  if (stream->isDefault()) {
    return makeError(ErrorCode::kInvalidHandle,
                     "{}: {} is a default stream; resetDevice releases it", function,
                     stream->name());
  }
  streams_.erase(stream);
  return Status::Ok();
}

Status DeviceManager::destroyStream(Stream* stream) {
  COHORT_RETURN_IF_ERROR(unregisterStream(stream, "streamDestroy"));
  Device* device = stream->device();
  {
    std::lock_guard<std::mutex> lock(device->mu);
    device->streams.erase(stream);
    reapRetired(device);
  }
  delete stream;  // drains
  return Status::Ok();
}

Status DeviceManager::destroyStreamForce(Stream* stream) {
  COHORT_RETURN_IF_ERROR(unregisterStream(stream, "streamDestroyForce"));
  Device* device = stream->device();
  if (stream->stopped()) {
    // A stopped stream holds its work: destruction drops it, at once.
    {
      std::lock_guard<std::mutex> lock(device->mu);
      device->streams.erase(stream);
    }
    delete stream;
    return Status::Ok();
  }
  stream->retire();
  std::lock_guard<std::mutex> lock(device->mu);
  device->streams.erase(stream);
  device->retired.push_back(stream);
  reapRetired(device);
  return Status::Ok();
}

Status DeviceManager::resolveStream(Stream* stream, Stream** out) {
  if (stream == nullptr) {
    Device* device = nullptr;
    if (tCurrentDevice < 0) {
      return Status(ErrorCode::kInvalidDevice,
                    "no current device on this thread (call setDevice first)");
    }
    COHORT_RETURN_IF_ERROR(this->device(tCurrentDevice, &device));
    std::lock_guard<std::mutex> lock(device->mu);
    if (device->defaultStream == nullptr) {
      return makeError(ErrorCode::kInvalidDevice, "device {} is not set", tCurrentDevice);
    }
    *out = device->defaultStream;
    return Status::Ok();
  }
  std::lock_guard<std::mutex> lock(registryMu_);
  if (streams_.count(stream) == 0) {
    return makeError(ErrorCode::kInvalidHandle, "{} is not a live stream (destroyed?)",
                     static_cast<void*>(stream));
  }
  *out = stream;
  return Status::Ok();
}

Status DeviceManager::createEvent(Event** out) {
  auto event = new Event();
  std::lock_guard<std::mutex> lock(registryMu_);
  events_.insert(event);
  *out = event;
  return Status::Ok();
}

Status DeviceManager::destroyEvent(Event* event) {
  {
    std::lock_guard<std::mutex> lock(registryMu_);
    if (events_.erase(event) == 0) {
      return makeError(ErrorCode::kInvalidHandle, "{} is not a live event",
                       static_cast<void*>(event));
    }
  }
  delete event;
  return Status::Ok();
}

bool DeviceManager::isLiveEvent(Event* event) {
  std::lock_guard<std::mutex> lock(registryMu_);
  return events_.count(event) != 0;
}

PointerInfo DeviceManager::classify(const void* p) {
  PointerInfo info;
  info.base = const_cast<char*>(static_cast<const char*>(p));
  info.live = true;
  for (const auto& device : devices_) {
    MemoryPool* pool = device->pool();
    if (pool == nullptr || !pool->contains(p)) continue;
    info.kind = PointerInfo::Kind::kDevice;
    info.device = device->id();
    info.label = "device memory";
    info.live = pool->findAllocation(p, &info.base, &info.size);
    return info;
  }
  if (hostPool_ && hostPool_->contains(p)) {
    info.kind = PointerInfo::Kind::kPinnedHost;
    info.label = "pinned host memory";
    info.live = hostPool_->findAllocation(p, &info.base, &info.size);
    info.eitherSide = HostMemory::get().mappedRegistration(p);
    return info;
  }
  if (HostMemory::get().classify(p, &info)) return info;
  if (VirtualMemory::get().classify(p, &info)) return info;
  std::lock_guard<std::mutex> lock(registryMu_);
  auto it = imports_.upper_bound(reinterpret_cast<std::uintptr_t>(p));
  if (it != imports_.begin()) {
    --it;
    const Import& imp = it->second;
    if (static_cast<const char*>(p) < imp.user + imp.size) {
      info.kind = PointerInfo::Kind::kImported;
      info.label = "imported device memory";
      info.base = imp.user;
      info.size = imp.size;
    }
  }
  return info;
}

Status openPeerFile(std::int32_t pid, int fd, std::uint64_t end, const char* what, int* out) {
  const std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  const int opened = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (opened < 0) {
    return systemError(errno, fmt::format("{}: cannot open the exporter's memory {} (process {} "
                                          "gone, or another user?)", what, path, pid));
  }
  struct stat st;
  if (fstat(opened, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < end) {
    close(opened);
    return makeError(ErrorCode::kInvalidArgument,
                     "{}: {} is not the exporter's memory any more (too small for the handle: "
                     "stale?)", what, path);
  }
  *out = opened;
  return Status::Ok();
}

Status DeviceManager::importMapping(const MemHandle& handle, void** ptr) {
  IpcHandle h;
  COHORT_RETURN_IF_ERROR(decodeIpcHandle(handle, &h));
  const std::string path = fmt::format("/proc/{}/fd/{}", h.pid, h.fd);
  int fd = -1;
  COHORT_RETURN_IF_ERROR(openPeerFile(h.pid, h.fd, h.offset + h.size, "memImport", &fd));
  const std::size_t page = 4096;
  const std::size_t mapOffset = h.offset / page * page;
  const std::size_t mappingSize = (h.offset - mapOffset + h.size + page - 1) / page * page;
  void* mapping = mmap(nullptr, mappingSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                       static_cast<off_t>(mapOffset));
  int err = errno;
  close(fd);
  if (mapping == MAP_FAILED) return systemError(err, "memImport: mmap of " + path);
  char* user = static_cast<char*>(mapping) + (h.offset - mapOffset);
  std::lock_guard<std::mutex> lock(registryMu_);
  imports_[reinterpret_cast<std::uintptr_t>(user)] =
      Import{mapping, mappingSize, user, static_cast<std::size_t>(h.size)};
  *ptr = user;
  noteMemoryChange();
  return Status::Ok();
}

Status DeviceManager::closeMapping(void* ptr) {
  Import imp;
  {
    std::lock_guard<std::mutex> lock(registryMu_);
    auto it = imports_.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == imports_.end()) {
      return makeError(ErrorCode::kInvalidPointer, "memClose: {} is not an imported buffer", ptr);
    }
    imp = it->second;
    imports_.erase(it);
  }
  munmap(imp.mapping, imp.mappingSize);
  noteMemoryChange();
  return Status::Ok();
}

}  // namespace cohort::runtime
