// What `cohort-smi` shows (like `npu-smi info`): the emulated devices of this
// node, the processes holding each and their device memory in use, and every
// communicator's rank, size and last completed operation, read from the node
// registry (runtime/node_registry.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cohort/status.h"
#include "runtime/node_registry.h"

namespace cohort::smi {

/// A snapshot of the node. A plain value.
struct NodeView {
  std::string registryPath;
  bool registryPresent = false;    ///< false: no Cohort process has run here since boot
  int deviceCount = 0;             ///< COHORT_DEVICE_COUNT of this node (or more if seen)
  std::uint64_t deviceMemory = 0;  ///< COHORT_DEVICE_MEMORY (capacity per device)
  std::vector<runtime::RegistryEntry> devices;        ///< held devices, by physical id then pid
  std::vector<runtime::RegistryEntry> communicators;  ///< by pid, then name and rank
};

/// Reads the registry at `registryPath` (its dead entries are freed on the way).
/// An absent registry is an empty node; other failures (another user's file, a
/// table of another layout) are returned.
Status readNode(const std::string& registryPath, NodeView* out);

/// The process name (/proc/<pid>/comm), or "?" when it is gone.
std::string processName(int pid);

/// The JSON form: library and protocol versions, devices (with their processes
/// and memory), processes and communicators.
nlohmann::json nodeJson(const NodeView& view);

/// The text form: a device table, a process table and a communicator table.
std::string nodeText(const NodeView& view);

}  // namespace cohort::smi
