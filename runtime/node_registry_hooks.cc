// The process-side hooks of the node registry: the runtime and the communicator
// publish this process's devices and communicators through them (cohort-smi
// lists them). Slots are claimed lazily and released when their owner goes.
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "common/log.h"
#include "runtime/node_registry.h"

namespace cohort::runtime {


namespace {
constexpr int kMaxDevices = 64;  // COHORT_DEVICE_COUNT's bound

// This process's registry, opened on first use; null when it cannot be opened.
NodeRegistry* processRegistry() {
  static NodeRegistry* registry = [] {
    std::unique_ptr<NodeRegistry> r;
    const Status s = NodeRegistry::open(NodeRegistry::defaultPath(), true, &r);
    if (!s.ok()) {
      COHORT_LOG(kInfo, "runtime", "cohort-smi will not list this process: {}", s.toString());
    }
    return r.release();
  }();
  return registry;
}

// Device slots stay claimed until the process exits (a device set again reuses
// its slot), so a hook never writes to a slot another process took over.
std::atomic<NodeRegistry::Slot*> gDeviceSlots[kMaxDevices];
std::atomic<int> gPhysicalIds[kMaxDevices];

struct CommSlot {
  std::atomic<NodeRegistry::Slot*> slot{nullptr};
  std::string name;  // name, rank and size: guarded by gCommMu
  int rank = 0, size = 0;
  std::atomic<std::uint64_t> lastUse{0};
  std::atomic<int> noting{0};  // lock-free registryNoteOp calls writing through it
};
// A process keeps at most this many communicator slots: past it, the least
// recently used one goes (communicators leaked, never destroyed, must not fill
// the node's table).
constexpr std::size_t kMaxCommsPerProcess = 128;
std::mutex gCommMu;
std::map<const void*, CommSlot*> gComms;  // guarded by gCommMu
// Entries are never freed, only reused (guarded by gCommMu): a thread's cached
// entry may be touched after it left gComms.
std::deque<CommSlot> gCommPool;
std::vector<CommSlot*> gCommFree;
// Advanced before any entry leaves gComms: a thread's cached entry is still
// its communicator's while the epoch it saw holds.
std::atomic<std::uint64_t> gCommEpoch{1};
// The use clock for least-recently-used: advanced without a locked instruction
// (threads racing may read the same tick; the order stays close enough).
std::atomic<std::uint64_t> gCommUses{0};
std::uint64_t nextUse() {
  const std::uint64_t use = gCommUses.load(std::memory_order_relaxed) + 1;
  gCommUses.store(use, std::memory_order_relaxed);
  return use;
}

// The entry this thread noted last, for the lock-free path of registryNoteOp
// (the lock, the lookup and the comparisons took 40 ns of a small operation).
struct LastComm {
  const void* comm = nullptr;
  CommSlot* entry = nullptr;
  std::uint64_t epoch = 0;
};
thread_local LastComm tLastComm;

void removeComm(NodeRegistry* registry, std::map<const void*, CommSlot*>::iterator it) {
  CommSlot* entry = it->second;
  NodeRegistry::Slot* slot = entry->slot.exchange(nullptr);
  if (slot != nullptr) registry->release(slot);
  gComms.erase(it);
  gCommFree.push_back(entry);
}

void dropLeastRecentComm(NodeRegistry* registry) {
  auto oldest = gComms.end();
  for (auto it = gComms.begin(); it != gComms.end(); ++it) {
    if (oldest == gComms.end() || it->second->lastUse.load() < oldest->second->lastUse.load()) {
      oldest = it;
    }
  }
  if (oldest == gComms.end()) return;
  // Dekker with the lock-free path of registryNoteOp (both sequentially
  // consistent): either it sees the new epoch and takes the lock, or this sees
  // it noting and keeps the entry (the table holds one more until next time).
  gCommEpoch.fetch_add(1);
  if (oldest->second->noting.load() != 0) return;
  removeComm(registry, oldest);
}

bool validDevice(int id) { return id >= 0 && id < kMaxDevices; }
}  // namespace

void registryDeviceUp(int logicalDevice, int physicalDevice, std::uint64_t capacity) {
  NodeRegistry* registry = processRegistry();
  if (registry == nullptr || !validDevice(logicalDevice)) return;
  gPhysicalIds[logicalDevice].store(physicalDevice + 1, std::memory_order_relaxed);
  NodeRegistry::Slot* slot = gDeviceSlots[logicalDevice].load(std::memory_order_acquire);
  if (slot == nullptr) {
    SlotDescription d;
    d.physicalDevice = physicalDevice;
    d.logicalDevice = logicalDevice;
    d.memoryTotal = capacity;
    const Status s = registry->claim(d, &slot);
    if (!s.ok()) {
      COHORT_LOG(kInfo, "runtime", "device {} not listed by cohort-smi: {}", logicalDevice,
                 s.toString());
      return;
    }
    gDeviceSlots[logicalDevice].store(slot, std::memory_order_release);
  }
  NodeRegistry::setMemoryUsed(slot, 0);
  NodeRegistry::setHeld(slot, true);
}

void registryDeviceDown(int logicalDevice) {
  if (!validDevice(logicalDevice)) return;
  NodeRegistry::Slot* slot = gDeviceSlots[logicalDevice].load(std::memory_order_acquire);
  if (slot == nullptr) return;
  NodeRegistry::setHeld(slot, false);
  NodeRegistry::setMemoryUsed(slot, 0);
}

void registryNoteMemory(int logicalDevice, std::uint64_t used) {
  if (!validDevice(logicalDevice)) return;
  NodeRegistry::Slot* slot = gDeviceSlots[logicalDevice].load(std::memory_order_acquire);
  if (slot != nullptr) NodeRegistry::setMemoryUsed(slot, used);
}

void registryNoteOp(const void* comm, const std::string& name, int rank, int size,
                    int logicalDevice, std::uint64_t seq, const char* opName) {
  LastComm& last = tLastComm;
  if (last.comm == comm) {
    CommSlot* entry = last.entry;
    entry->noting.fetch_add(1);
    if (gCommEpoch.load() == last.epoch) {
      entry->lastUse.store(nextUse(), std::memory_order_relaxed);
      NodeRegistry::Slot* slot = entry->slot.load(std::memory_order_relaxed);
      if (slot != nullptr) NodeRegistry::noteOp(slot, seq, opName);
      entry->noting.fetch_sub(1, std::memory_order_release);
      return;
    }
    entry->noting.fetch_sub(1, std::memory_order_release);
  }
  NodeRegistry* registry = processRegistry();
  if (registry == nullptr) return;
  std::lock_guard<std::mutex> lock(gCommMu);
  auto it = gComms.find(comm);
  if (it != gComms.end() &&
      (it->second->name != name || it->second->rank != rank || it->second->size != size)) {
    gCommEpoch.fetch_add(1);
    removeComm(registry, it);  // a reused address
    it = gComms.end();
  }
  if (it == gComms.end()) {
    if (gComms.size() >= kMaxCommsPerProcess) dropLeastRecentComm(registry);
    SlotDescription d;
    d.kind = RegistryEntry::Kind::kCommunicator;
    d.logicalDevice = logicalDevice;
    d.physicalDevice = validDevice(logicalDevice) ? gPhysicalIds[logicalDevice].load() - 1 : -1;
    d.name = name;
    d.rank = rank;
    d.size = size;
    NodeRegistry::Slot* slot = nullptr;
    const Status s = registry->claim(d, &slot);
    if (!s.ok()) COHORT_LOG(kInfo, "runtime", "communicator {} not listed: {}", name, s.toString());
    CommSlot* entry = nullptr;
    if (gCommFree.empty()) {
      entry = &gCommPool.emplace_back();
    } else {
      entry = gCommFree.back();
      gCommFree.pop_back();
    }
    entry->name = name;
    entry->rank = rank;
    entry->size = size;
    entry->slot.store(slot);  // null: not retried
    it = gComms.emplace(comm, entry).first;
  }
  CommSlot* entry = it->second;
  entry->lastUse.store(nextUse(), std::memory_order_relaxed);
  NodeRegistry::Slot* slot = entry->slot.load(std::memory_order_relaxed);
  if (slot != nullptr) NodeRegistry::noteOp(slot, seq, opName);
  last = LastComm{comm, entry, gCommEpoch.load()};
}

void registryForgetComm(const void* comm) {
  std::lock_guard<std::mutex> lock(gCommMu);
  auto it = gComms.find(comm);
  if (it == gComms.end()) return;
  gCommEpoch.fetch_add(1);  // the communicator is going: no operation of it is noting
  removeComm(processRegistry(), it);
}

}  // namespace cohort::runtime
