// Physical allocations shared between the processes of a node (vmmExport, vmmImport).
//
// The exporter puts a record in shared memory (sharedAlloc): where the allocation's
// pages are in its pool's memfd, the creator's attributes, the whitelist, and one slot
// per importing process. The shareable handle is a 64-bit number naming the record: the
// exporter's pid, the record's descriptor there and a nonce, so that a stale handle
// (its record gone, its descriptor number reused) is told apart. An importer maps the
// record through /proc/<pid>/fd, checks the whitelist, takes a slot and opens the pool's
// memfd the same way: its mappings are the exporter's pages.
//
// The pages must not go back to the exporter's pool while an importer still uses them,
// even after the exporter freed its handle. So an exported allocation that ends in the
// exporter becomes a zombie while a slot is taken (or its process alive), and is freed
// by a later sweep. Importer and exporter order their steps like Dekker's: the importer
// takes a slot and then checks the record is open, the exporter closes it and then
// looks at the slots, so at least one of them sees the other.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <new>
#include <random>

#include "common/error.h"
#include "common/process.h"
#include "runtime/ipc_handle.h"
#include "runtime/vmm.h"

namespace cohort::runtime {

namespace {
constexpr std::uint64_t kMagic = 0xC0405AA2EDB10C5Dull;
constexpr std::size_t kMaxPids = 1024;
constexpr std::size_t kMaxImporters = 256;
// Handle layout: pid (22 bits: Linux pids stay below 2^22) | descriptor (20 bits) |
// nonce (22 bits).
constexpr int kFdShift = 22;
constexpr int kPidShift = 42;
constexpr std::uint64_t kNonceMask = (1u << 22) - 1;
constexpr std::uint64_t kFdLimit = 1u << 20;
constexpr std::uint64_t kPidLimit = 1u << 22;
}  // namespace

// Lives in shared memory, written by the exporter and read (slots: written) by
// importers; its atomics are lock-free, so they work across processes.
struct ShareRecord {
  std::uint64_t magic;
  std::uint32_t nonce;
  std::atomic<std::uint32_t> open;  // 1 while the exporter's allocation lives
  std::uint32_t checkPid;           // importers must be on the whitelist
  std::int32_t poolFd;              // the exporter's pool memfd
  std::uint64_t fileOffset;         // of the pages in it
  std::uint64_t size;
  std::uint64_t attributes;
  std::atomic<std::uint32_t> pidCount;
  std::int32_t pids[kMaxPids];
  std::atomic<std::int32_t> importers[kMaxImporters];  // pids holding an import, or 0
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "shared atomics");
static_assert(std::atomic<std::int32_t>::is_always_lock_free, "shared atomics");

namespace {

bool whitelisted(const ShareRecord& r, std::int32_t pid) {
  const std::uint32_t n = std::min<std::uint32_t>(r.pidCount.load(std::memory_order_acquire),
                                                  static_cast<std::uint32_t>(kMaxPids));
  return std::find(r.pids, r.pids + n, pid) != r.pids + n;
}

bool alive(std::int32_t pid) { return !processEnded(pid); }

// Whether a process still holds an import; slots of processes that died are cleared.
bool imported(ShareRecord* r) {
  bool any = false;
  for (auto& slot : r->importers) {
    std::int32_t pid = slot.load();
    if (pid == 0) continue;
    if (alive(pid)) {
      any = true;
    } else {
      slot.compare_exchange_strong(pid, 0);
    }
  }
  return any;
}

Status notExported(std::uint64_t shareable, const char* why) {
  return makeError(ErrorCode::kInvalidArgument, "import: shareable handle {:#x} is {}", shareable,
                   why);
}

}  // namespace

Status VirtualMemory::exportShareable(PhysicalMemory* mem, bool checkPid,
                                      std::uint64_t* shareable) {
  std::lock_guard<std::mutex> lock(mu_);
  COHORT_RETURN_IF_ERROR(heldLocked(mem, "export"));
  sweepLocked();
  if (mem->imported) {
    return makeError(ErrorCode::kInvalidArgument,
                     "export: the allocation is another process's (imported); only the process "
                     "that allocated it shares it");
  }
  COHORT_RETURN_IF_ERROR(mem->device->pool()->checkShareable("export"));  // allocated there
  if (mem->record != nullptr) {
    return makeError(ErrorCode::kInvalidUsage,
                     "export: the allocation is exported already, as shareable handle {:#x} (one "
                     "handle per allocation)", mem->shareable);
  }
  void* p = nullptr;
  MemHandle handle;
  COHORT_RETURN_IF_ERROR(sharedAlloc(sizeof(ShareRecord), &p, &handle));
  IpcHandle h;
  Status s = decodeIpcHandle(handle, &h);
  if (s.ok() && (static_cast<std::uint64_t>(h.pid) >= kPidLimit ||
                 static_cast<std::uint64_t>(h.fd) >= kFdLimit)) {
    s = makeError(ErrorCode::kUnavailable,
                  "export: process {} / descriptor {} do not fit in a shareable handle", h.pid,
                  h.fd);
  }
  if (!s.ok()) {
    (void)sharedFree(p);
    return s;
  }
  std::uint32_t nonce = 0;
  while (nonce == 0) nonce = static_cast<std::uint32_t>(std::random_device{}() & kNonceMask);
  auto* record = new (p) ShareRecord();  // zeroed memory: the other fields start at 0
  record->magic = kMagic;
  record->nonce = nonce;
  record->checkPid = checkPid ? 1 : 0;
  record->poolFd = mem->fd;
  record->fileOffset = mem->fileOffset;
  record->size = mem->size;
  record->attributes = mem->attributes;
  record->open.store(1);
  mem->record = record;
  mem->shareable = static_cast<std::uint64_t>(h.pid) << kPidShift |
                   static_cast<std::uint64_t>(h.fd) << kFdShift | nonce;
  exports_[mem->shareable] = mem;
  *shareable = mem->shareable;
  return Status::Ok();
}

Status VirtualMemory::setImportPids(std::uint64_t shareable, const std::int32_t* pids,
                                    std::size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = exports_.find(shareable);
  if (it == exports_.end()) {
    return makeError(ErrorCode::kInvalidArgument,
                     "whitelist: shareable handle {:#x} was not exported by this process (or its "
                     "allocation is freed)", shareable);
  }
  ShareRecord* record = it->second->record;
  std::uint32_t n = record->pidCount.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < count; ++i) {
    if (whitelisted(*record, pids[i])) continue;
    if (n == kMaxPids) {
      return makeError(ErrorCode::kInvalidArgument,
                       "whitelist: the whitelist of {:#x} is full ({} processes)", shareable,
                       kMaxPids);
    }
    record->pids[n++] = pids[i];
    record->pidCount.store(n, std::memory_order_release);  // the id is written first
  }
  return Status::Ok();
}

Status VirtualMemory::importShareable(std::uint64_t shareable, Device* device,
                                      PhysicalMemory** out, bool* denied) {
  const auto pid = static_cast<std::int32_t>(shareable >> kPidShift);
  const auto fd = static_cast<int>((shareable >> kFdShift) & (kFdLimit - 1));
  const auto nonce = static_cast<std::uint32_t>(shareable & kNonceMask);
  const auto self = static_cast<std::int32_t>(getpid());
  if (pid == 0 || nonce == 0) return notExported(shareable, "not a shareable handle");
  if (pid == self) {
    return makeError(ErrorCode::kNotSupported,
                     "import: shareable handle {:#x} was exported by this process; allocations "
                     "are shared between processes only (use the allocation's own handle)",
                     shareable);
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto again = imports_.find(shareable);
  if (again != imports_.end()) {
    return makeError(ErrorCode::kInvalidUsage,
                     "import: shareable handle {:#x} is imported already, as {} (one handle per "
                     "shareable handle in a process; free it first)", shareable,
                     static_cast<void*>(again->second));
  }
  int recordFd = -1;
  if (!openPeerFile(pid, fd, sizeof(ShareRecord), "import", &recordFd).ok()) {
    return notExported(shareable, "not exported (its process has exited, or it is stale)");
  }
  void* p = mmap(nullptr, sizeof(ShareRecord), PROT_READ | PROT_WRITE, MAP_SHARED, recordFd, 0);
  const int err = errno;
  close(recordFd);
  if (p == MAP_FAILED) return systemError(err, "import: mmap of the exporter's record");
  auto* record = static_cast<ShareRecord*>(p);
  auto fail = [&](Status s) {
    munmap(record, sizeof(ShareRecord));
    return s;
  };
  if (record->magic != kMagic || record->nonce != nonce || record->open.load() != 1) {
    return fail(notExported(shareable, "not exported (freed by its exporter, or stale)"));
  }
  if (record->checkPid != 0 && !whitelisted(*record, self)) {
    if (denied != nullptr) *denied = true;
    return fail(makeError(ErrorCode::kInvalidUsage,
                          "import: process {} is not on the whitelist of shareable handle {:#x} "
                          "(the exporter adds it with aclrtMemSetPidToShareableHandle)",
                          self, shareable));
  }
  int slot = -1;
  for (std::size_t i = 0; i < kMaxImporters && slot < 0; ++i) {
    std::int32_t expected = 0;
    if (record->importers[i].compare_exchange_strong(expected, self)) slot = static_cast<int>(i);
  }
  if (slot < 0) {
    return fail(makeError(ErrorCode::kUnavailable,
                          "import: shareable handle {:#x} has {} importers already", shareable,
                          kMaxImporters));
  }
  int pagesFd = -1;
  Status s = record->open.load() == 1
                 ? openPeerFile(pid, record->poolFd, record->fileOffset + record->size, "import",
                                &pagesFd)
                 : notExported(shareable, "not exported (freed by its exporter)");
  if (!s.ok()) {
    record->importers[slot].store(0);
    return fail(s);
  }
  auto* mem = new PhysicalMemory{device, record->size, record->attributes, pagesFd,
                                 record->fileOffset};
  mem->record = record;
  mem->shareable = shareable;
  mem->imported = true;
  mem->slot = slot;
  blocks_.insert(mem);
  imports_[shareable] = mem;
  *out = mem;
  return Status::Ok();
}

void VirtualMemory::endImportLocked(PhysicalMemory* mem) {
  imports_.erase(mem->shareable);
  mem->record->importers[mem->slot].store(0);
  munmap(mem->record, sizeof(ShareRecord));
  close(mem->fd);
  delete mem;
}

void VirtualMemory::endExportLocked(PhysicalMemory* mem) {
  exports_.erase(mem->shareable);
  mem->record->open.store(0);  // then the slots: see the file comment
  if (imported(mem->record)) {
    zombies_.push_back(mem);
    return;
  }
  freeBlockLocked(mem);
  (void)sharedFree(mem->record);
  delete mem;
}

void VirtualMemory::sweepLocked() {
  auto keep = std::remove_if(zombies_.begin(), zombies_.end(), [this](PhysicalMemory* mem) {
    if (imported(mem->record)) return false;
    freeBlockLocked(mem);
    (void)sharedFree(mem->record);
    delete mem;
    return true;
  });
  zombies_.erase(keep, zombies_.end());
}

}  // namespace cohort::runtime
