// The bytes of a MemHandle: enough for a process of the same node to open the
// exporter's memfd through /proc/<pid>/fd/<fd> and map the buffer.
#pragma once

#include <cstdint>

#include "cohort/runtime.h"

namespace cohort::runtime {

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

}  // namespace cohort::runtime
