// Shared memory that is not device memory (sharedAlloc, sharedRetain, sharedFree in
// cohort/runtime.h): a memfd segment with a handle another process maps, counted by
// this process's holders.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>

#include "runtime/api.h"
#include "runtime/ipc_handle.h"

namespace cohort::runtime {

namespace {
struct SharedSegment {
  int fd;
  std::size_t bytes;
  int refs;  // sharedAlloc's and every sharedRetain's, until their sharedFree
};
std::mutex gSharedMu;
std::map<void*, SharedSegment>& sharedSegments() {
  static auto* segments = new std::map<void*, SharedSegment>();  // used until exit
  return *segments;
}
}  // namespace

Status sharedAlloc(std::size_t bytes, void** ptr, MemHandle* handle) {
  if (ptr == nullptr || handle == nullptr || bytes == 0) {
    return Status(ErrorCode::kInvalidArgument, "sharedAlloc: null output or zero size");
  }
  const int fd = memfd_create("cohort-shared", MFD_CLOEXEC);
  if (fd < 0) return systemError(errno, "sharedAlloc: memfd_create");
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    close(fd);
    return systemError(err, fmt::format("sharedAlloc: ftruncate to {} bytes", bytes));
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return systemError(err, fmt::format("sharedAlloc: mmap of {} bytes", bytes));
  }
  IpcHandle h{};
  h.magic = kIpcMagic;
  h.version = kIpcVersion;
  h.pid = static_cast<std::int32_t>(getpid());
  h.fd = fd;
  h.offset = 0;
  h.size = bytes;
  h.physicalDevice = -1;
  *handle = encodeIpcHandle(h);
  std::lock_guard<std::mutex> lock(gSharedMu);
  sharedSegments()[p] = SharedSegment{fd, bytes, 1};
  *ptr = p;
  return Status::Ok();
}

Status sharedRetain(const MemHandle& handle, void** ptr) {
  if (ptr == nullptr) return Status(ErrorCode::kInvalidArgument, "sharedRetain: null output");
  IpcHandle h{};
  COHORT_RETURN_IF_ERROR(decodeIpcHandle(handle, &h));
  if (h.pid != static_cast<std::int32_t>(getpid())) {
    return makeError(ErrorCode::kInvalidArgument,
                     "sharedRetain: the handle is process {}'s, not this one's (map it with "
                     "memImport)",
                     h.pid);
  }
  std::lock_guard<std::mutex> lock(gSharedMu);
  for (auto& [address, seg] : sharedSegments()) {
    if (seg.fd == h.fd && seg.bytes == h.size) {
      ++seg.refs;
      *ptr = address;
      return Status::Ok();
    }
  }
  return makeError(ErrorCode::kInvalidPointer,
                   "sharedRetain: the shared memory of the handle (fd {}) was released", h.fd);
}

Status sharedFree(void* ptr) {
  SharedSegment seg{};
  {
    std::lock_guard<std::mutex> lock(gSharedMu);
    auto it = sharedSegments().find(ptr);
    if (it == sharedSegments().end()) {
      return makeError(ErrorCode::kInvalidPointer, "sharedFree: {} is not from sharedAlloc", ptr);
    }
    if (--it->second.refs > 0) return Status::Ok();
    seg = it->second;
    sharedSegments().erase(it);
  }
  munmap(ptr, seg.bytes);
  close(seg.fd);
  return Status::Ok();
}

}  // namespace cohort::runtime
