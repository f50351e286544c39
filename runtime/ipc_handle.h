// The bytes of a MemHandle: enough for a process of the same node to open the
// exporter's memfd through /proc/<pid>/fd/<fd> and map the buffer.
#pragma once

#include <cstdint>

#include "cohort/runtime.h"

namespace cohort::runtime {

/// What every handle begins with: this format, and its version.
inline constexpr std::uint32_t kIpcMagic = 0xC0402D1Au;
inline constexpr std::uint32_t kIpcVersion = 1;

struct IpcHandle {
  std::uint32_t magic;
  std::uint32_t version;
  std::int32_t pid;
  std::int32_t fd;
  std::uint64_t offset;
  std::uint64_t size;
  std::int32_t physicalDevice;
};

MemHandle encodeIpcHandle(const IpcHandle& h);
/// kInvalidArgument when the bytes are not a handle of this runtime version.
Status decodeIpcHandle(const MemHandle& handle, IpcHandle* out);

/// Opens (read-write, close-on-exec) the file behind descriptor `fd` of process `pid` of
/// this node through /proc, if it holds at least `end` bytes: a stale handle may name a
/// descriptor that is now another, smaller file, whose pages past its end would raise
/// SIGBUS. `what` prefixes the errors. The caller closes *out.
Status openPeerFile(std::int32_t pid, int fd, std::uint64_t end, const char* what, int* out);

}  // namespace cohort::runtime
