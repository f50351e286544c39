// The registry table and its ownership protocol. A slot's `owner` word is
// (claim number << 32 | pid), set by compare-and-swap; `published` takes the
// same value once the slot's fields describe that owner. A reader trusts the
// fields only when owner == published before and after it copies them, so a
// slot being (re)claimed is never mistaken for its previous owner's; a slot
// whose owner pid is dead (or reused: another start time) is freed by whoever
// sees it first.
#include "runtime/node_registry.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string_view>
#include <thread>

#include "common/error.h"

namespace cohort::runtime {

namespace {
constexpr std::uint64_t kMagic = 0x434f484f52524547ull;  // "COHORREG"
constexpr std::uint32_t kLayoutVersion = 1;
constexpr int kSlotCount = 1024;
constexpr std::uint32_t kStateReady = 2;

std::uint64_t ownerPid(std::uint64_t owner) { return owner & 0xffffffffu; }

// The clock ticks of the kernel (a few ms apart) without a full clock reading:
// noted on every operation.
std::int64_t coarseUnixMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

template <std::size_t N>
void storeText(std::atomic<std::uint64_t> (&words)[N], std::string_view text) {
  std::uint64_t packed[N] = {};
  std::memcpy(packed, text.data(), std::min(text.size(), N * 8 - 1));
  for (std::size_t i = 0; i < N; ++i) words[i].store(packed[i], std::memory_order_relaxed);
}

template <std::size_t N>
std::string loadText(const std::atomic<std::uint64_t> (&words)[N]) {
  char text[N * 8 + 1] = {};
  for (std::size_t i = 0; i < N; ++i) {
    const std::uint64_t w = words[i].load(std::memory_order_relaxed);
    std::memcpy(text + i * 8, &w, 8);
  }
  return text;
}

std::uint64_t selfStartTime() {
  static const std::uint64_t start = [] {
    std::uint64_t t = 0;
    processStartTime(static_cast<int>(getpid()), &t);
    return t;
  }();
  return start;
}
}  // namespace

struct NodeRegistry::Header {
  std::atomic<std::uint64_t> magic;
  std::atomic<std::uint32_t> state;  // 0 fresh, 1 initialising, 2 ready
  std::uint32_t layoutVersion;
  std::uint32_t slotCount;
  std::uint32_t slotSize;
  std::atomic<std::uint32_t> claims;
};

// Every field is atomic: a reader may copy a slot while its owner writes it
// (the owner/published protocol then discards the copy). Relaxed unless noted.
struct alignas(64) NodeRegistry::Slot {
  std::atomic<std::uint64_t> owner;      // 0 = free
  std::atomic<std::uint64_t> published;  // == owner once the fields below are its
  std::atomic<std::uint32_t> kind;
  std::atomic<std::int32_t> pid;
  std::atomic<std::uint64_t> startTime;
  std::atomic<std::int32_t> physicalDevice;
  std::atomic<std::int32_t> logicalDevice;
  std::atomic<std::int32_t> rank;
  std::atomic<std::int32_t> size;
  std::atomic<std::uint64_t> memoryTotal;
  std::atomic<std::uint64_t> name[8];  // up to 63 characters, zero-padded
  std::atomic<std::uint32_t> held;
  std::atomic<std::uint64_t> memoryUsed;
  // The last operation, under a sequence lock (odd while written).
  std::atomic<std::uint32_t> opVersion;
  std::atomic<std::uint64_t> lastSeq;
  std::atomic<std::int64_t> lastOpMs;
  std::atomic<std::uint64_t> lastOp[2];  // up to 16 characters
  char reserved[80];                     // room for later fields
};
static_assert(sizeof(NodeRegistry::Slot) == 256, "the slot layout is part of the file format");
static_assert(sizeof(NodeRegistry::Header) <= 256, "the header fits its 256 bytes");

namespace {
constexpr std::size_t kHeaderBytes = 256;
constexpr std::size_t kFileBytes = kHeaderBytes + kSlotCount * sizeof(NodeRegistry::Slot);

// Initialises a fresh header, or waits (briefly) for the process doing it.
Status initialiseHeader(NodeRegistry::Header* h, bool create, const std::string& path) {
  std::uint32_t fresh = 0;
  if (create && h->state.compare_exchange_strong(fresh, 1)) {
    h->layoutVersion = kLayoutVersion;
    h->slotCount = kSlotCount;
    h->slotSize = sizeof(NodeRegistry::Slot);
    h->magic.store(kMagic, std::memory_order_relaxed);
    h->state.store(kStateReady, std::memory_order_release);
  }
  for (int i = 0; i < 200 && h->state.load(std::memory_order_acquire) != kStateReady; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (h->state.load(std::memory_order_acquire) != kStateReady) {
    return makeError(ErrorCode::kUnavailable, "node registry {}: not initialised", path);
  }
  if (h->magic.load() != kMagic || h->layoutVersion != kLayoutVersion ||
      h->slotCount != kSlotCount || h->slotSize != sizeof(NodeRegistry::Slot)) {
    return makeError(ErrorCode::kVersionMismatch,
                     "node registry {}: layout version {} with {} slots of {} bytes; this "
                     "library uses layout version {} ({} slots of {} bytes): remove the file "
                     "when no Cohort process runs",
                     path, h->layoutVersion, h->slotCount, h->slotSize, kLayoutVersion, kSlotCount,
                     sizeof(NodeRegistry::Slot));
  }
  return Status::Ok();
}

}  // namespace

bool processStartTime(int pid, std::uint64_t* startTime) {
  if (pid <= 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return false;
  const char state = line[close + 2];
  if (state == 'Z' || state == 'X' || state == 'x') return false;
  // Fields after the command: state is field 3, starttime field 22.
  const char* p = line.c_str() + close + 2;
  for (int field = 3; field < 22; ++field) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return false;
    ++p;
  }
  *startTime = std::strtoull(p, nullptr, 10);
  return true;
}

std::string NodeRegistry::defaultPath() {
  return "/dev/shm/cohort-registry-" + std::to_string(geteuid());
}

NodeRegistry::NodeRegistry(std::string path, void* mapping, std::size_t bytes)
    : path_(std::move(path)), mapping_(mapping), bytes_(bytes) {}

NodeRegistry::~NodeRegistry() { munmap(mapping_, bytes_); }

int NodeRegistry::capacity() const { return kSlotCount; }

NodeRegistry::Slot* NodeRegistry::slotAt(int index) const {
  return reinterpret_cast<Slot*>(static_cast<char*>(mapping_) + kHeaderBytes) + index;
}

Status NodeRegistry::open(const std::string& path, bool create,
                          std::unique_ptr<NodeRegistry>* out) {
  const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0);
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return makeError(ErrorCode::kUnavailable,
                       "node registry {} does not exist (no Cohort "
                       "process has set a device on this node since boot)",
                       path);
    }
    if (err == ELOOP) {
      return makeError(ErrorCode::kInvalidUsage, "node registry {} is a symbolic link: refused",
                       path);
    }
    return systemError(err, "node registry " + path + ": open");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || (st.st_uid != geteuid() && geteuid() != 0)) {
    ::close(fd);
    return makeError(ErrorCode::kInvalidUsage,
                     "node registry {} belongs to uid {}, not to this user (uid {}): refused", path,
                     st.st_uid, geteuid());
  }
  if (static_cast<std::size_t>(st.st_size) < kFileBytes &&
      (!create || ftruncate(fd, static_cast<off_t>(kFileBytes)) != 0)) {
    const int err = errno;
    ::close(fd);
    if (!create) {
      return makeError(ErrorCode::kVersionMismatch, "node registry {}: {} bytes, expected {}", path,
                       st.st_size, kFileBytes);
    }
    return systemError(err, "node registry " + path + ": ftruncate");
  }
  void* mapping = mmap(nullptr, kFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (mapping == MAP_FAILED) return systemError(err, "node registry " + path + ": mmap");
  Status s = initialiseHeader(static_cast<Header*>(mapping), create, path);
  if (!s.ok()) {
    munmap(mapping, kFileBytes);
    return s;
  }
  out->reset(new NodeRegistry(path, mapping, kFileBytes));
  return Status::Ok();
}

namespace {
// What a reader (or a writer looking for a slot) concludes about one slot, whose
// owner word it read as `owner`; kLive fills *e.
enum class Verdict { kFree, kLive, kBusy, kDead };

Verdict judge(NodeRegistry::Slot* s, std::uint64_t owner, RegistryEntry* e) {
  if (owner == 0) return Verdict::kFree;
  const int pid = static_cast<int>(ownerPid(owner));
  std::uint64_t start = 0;
  const bool alive = processStartTime(pid, &start);
  const std::uint64_t published = s->published.load(std::memory_order_acquire);
  constexpr auto kRelaxed = std::memory_order_relaxed;
  e->kind = static_cast<RegistryEntry::Kind>(s->kind.load(kRelaxed));
  e->pid = s->pid.load(kRelaxed);
  e->startTime = s->startTime.load(kRelaxed);
  e->physicalDevice = s->physicalDevice.load(kRelaxed);
  e->logicalDevice = s->logicalDevice.load(kRelaxed);
  e->memoryTotal = s->memoryTotal.load(kRelaxed);
  e->memoryUsed = s->memoryUsed.load(kRelaxed);
  e->name = loadText(s->name);
  e->rank = s->rank.load(kRelaxed);
  e->size = s->size.load(kRelaxed);
  const bool held = s->held.load(kRelaxed) != 0;
  if (s->owner.load(std::memory_order_acquire) != owner) return Verdict::kBusy;
  if (!alive) return Verdict::kDead;
  if (published != owner) return Verdict::kBusy;  // being written by a live process
  if (e->pid != pid || e->startTime != start) return Verdict::kDead;  // pid reused
  if (e->kind == RegistryEntry::Kind::kDevice && !held) return Verdict::kBusy;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint32_t v = s->opVersion.load(std::memory_order_acquire);
    if (v % 2 != 0) continue;
    e->lastSeq = s->lastSeq.load(kRelaxed);
    e->lastOpUnixMs = s->lastOpMs.load(kRelaxed);
    std::string op = loadText(s->lastOp);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s->opVersion.load(kRelaxed) == v) {
      e->lastOp = std::move(op);
      break;
    }
  }
  return Verdict::kLive;
}
}  // namespace

Status NodeRegistry::claim(const SlotDescription& d, Slot** out) {
  auto* header = static_cast<Header*>(mapping_);
  const std::uint64_t claimNo = header->claims.fetch_add(1) + 1u;
  const std::uint64_t mine = (claimNo << 32) | static_cast<std::uint32_t>(getpid());
  const int first = static_cast<int>(getpid() % kSlotCount);
  // Free slots first (atomic loads only); then those of dead processes.
  for (int i = 0; i < 2 * kSlotCount; ++i) {
    Slot* s = slotAt((first + i) % kSlotCount);
    std::uint64_t seen = s->owner.load(std::memory_order_acquire);
    RegistryEntry ignored;
    const bool takeable = i < kSlotCount ? seen == 0 : judge(s, seen, &ignored) == Verdict::kDead;
    if (!takeable || !s->owner.compare_exchange_strong(seen, mine, std::memory_order_acq_rel)) {
      continue;
    }
    constexpr auto kRelaxed = std::memory_order_relaxed;
    s->kind.store(static_cast<std::uint32_t>(d.kind), kRelaxed);
    s->pid.store(static_cast<std::int32_t>(getpid()), kRelaxed);
    s->startTime.store(selfStartTime(), kRelaxed);
    s->physicalDevice.store(d.physicalDevice, kRelaxed);
    s->logicalDevice.store(d.logicalDevice, kRelaxed);
    s->rank.store(d.rank, kRelaxed);
    s->size.store(d.size, kRelaxed);
    s->memoryTotal.store(d.memoryTotal, kRelaxed);
    storeText(s->name, d.name);
    s->held.store(0, kRelaxed);
    s->memoryUsed.store(0, kRelaxed);
    s->opVersion.store(0, kRelaxed);
    s->lastSeq.store(0, kRelaxed);
    s->lastOpMs.store(0, kRelaxed);
    storeText(s->lastOp, "");
    s->published.store(mine, std::memory_order_release);
    *out = s;
    return Status::Ok();
  }
  return makeError(ErrorCode::kUnavailable,
                   "node registry {}: all {} slots are held by live processes", path_, kSlotCount);
}

void NodeRegistry::release(Slot* slot) {
  slot->published.store(0, std::memory_order_relaxed);
  slot->owner.store(0, std::memory_order_release);
}

void NodeRegistry::setHeld(Slot* slot, bool held) {
  slot->held.store(held ? 1 : 0, std::memory_order_relaxed);
}

void NodeRegistry::setMemoryUsed(Slot* slot, std::uint64_t bytes) {
  slot->memoryUsed.store(bytes, std::memory_order_relaxed);
}

void NodeRegistry::noteOp(Slot* slot, std::uint64_t seq, const char* opName) {
  const std::uint32_t v = slot->opVersion.load(std::memory_order_relaxed);
  slot->opVersion.store(v + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  if (seq != 0) slot->lastSeq.store(seq, std::memory_order_relaxed);
  slot->lastOpMs.store(coarseUnixMs(), std::memory_order_relaxed);
  storeText(slot->lastOp, opName);
  slot->opVersion.store(v + 2, std::memory_order_release);
}

std::vector<RegistryEntry> NodeRegistry::liveEntries() {
  std::vector<RegistryEntry> out;
  for (int i = 0; i < kSlotCount; ++i) {
    Slot* s = slotAt(i);
    std::uint64_t seen = s->owner.load(std::memory_order_acquire);
    RegistryEntry e;
    const Verdict v = judge(s, seen, &e);
    if (v == Verdict::kLive) out.push_back(std::move(e));
    if (v == Verdict::kDead) s->owner.compare_exchange_strong(seen, 0);
  }
  return out;
}

}  // namespace cohort::runtime
