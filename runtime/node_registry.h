// The node registry: a small fixed table in shared memory
// (/dev/shm/cohort-registry-<uid>) where every Cohort process of the node
// publishes the devices it holds, their memory in use, and its communicators'
// rank, size and last completed operation, for cohort-smi to read.
//
// A slot belongs to a process (pid + start time from /proc/<pid>/stat, so that
// a reused pid is told apart). Nothing has to clean up after a crash: readers
// ignore, and free, the slots of processes that are gone, and writers reuse them.
//
// Writers publish with plain atomic stores (a device's memory counter is one
// relaxed store); the process-side hooks at the end of this file never fail and
// never block on other processes: when the registry cannot be opened the
// process simply does not appear in cohort-smi.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cohort/status.h"

namespace cohort::runtime {

/// One live entry, as a reader sees it. A plain value.
struct RegistryEntry {
  enum class Kind { kDevice = 1, kCommunicator = 2 };
  Kind kind = Kind::kDevice;
  int pid = 0;
  std::uint64_t startTime = 0;  ///< field 22 of /proc/<pid>/stat (clock ticks after boot)
  int physicalDevice = -1;      ///< id on the node
  int logicalDevice = -1;       ///< id in the owning process
  // kDevice: the device's memory in the owning process.
  std::uint64_t memoryUsed = 0;
  std::uint64_t memoryTotal = 0;
  // kCommunicator.
  std::string name;
  int rank = -1;
  int size = 0;
  std::uint64_t lastSeq = 0;      ///< last completed operation (0 = none yet)
  std::string lastOp;             ///< "allreduce"; "" before the first operation
  std::int64_t lastOpUnixMs = 0;  ///< when it completed
};

/// What a writer publishes when it claims a slot (fixed for the slot's life).
struct SlotDescription {
  RegistryEntry::Kind kind = RegistryEntry::Kind::kDevice;
  int physicalDevice = -1;
  int logicalDevice = -1;
  std::uint64_t memoryTotal = 0;
  std::string name;  ///< communicators: truncated to 63 bytes
  int rank = -1;
  int size = 0;
};

/// A mapping of one registry file. Thread-safe; the process-wide instance used
/// by the hooks lives until exit, others until destroyed (slots claimed through
/// an instance must not be used after it).
class NodeRegistry {
 public:
  struct Header;  // the table's first 256 bytes
  struct Slot;    // one entry of the shared table

  /// /dev/shm/cohort-registry-<effective uid>.
  static std::string defaultPath();
  /// Maps the registry at `path`, creating it (mode 0600) when `create`.
  /// kUnavailable for an absent file when !create; kInvalidUsage for a file
  /// owned by another user (unless root) or a symbolic link; kVersionMismatch
  /// for a table of another layout; kSystemError naming the path otherwise.
  static Status open(const std::string& path, bool create, std::unique_ptr<NodeRegistry>* out);
  ~NodeRegistry();
  NodeRegistry(const NodeRegistry&) = delete;
  NodeRegistry& operator=(const NodeRegistry&) = delete;

  /// Claims a free slot, or one whose owner is gone, for this process and
  /// publishes `description` in it. kUnavailable when every slot is held by a
  /// live process.
  Status claim(const SlotDescription& description, Slot** out);
  /// Gives a slot claimed by this process back.
  void release(Slot* slot);
  /// Device slots: whether the device is set (only held devices are listed) and
  /// its memory in use. One relaxed store each.
  static void setHeld(Slot* slot, bool held);
  static void setMemoryUsed(Slot* slot, std::uint64_t bytes);
  /// Communicator slots: an operation completed (one writer per slot).
  static void noteOp(Slot* slot, std::uint64_t seq, const char* opName);

  /// The entries of live processes (device entries only while held); slots of
  /// processes that are gone are freed on the way.
  std::vector<RegistryEntry> liveEntries();

  const std::string& path() const { return path_; }
  int capacity() const;

 private:
  NodeRegistry(std::string path, void* mapping, std::size_t bytes);
  Slot* slotAt(int index) const;

  const std::string path_;
  void* const mapping_;
  const std::size_t bytes_;
};

/// The start time of a live process (field 22 of /proc/<pid>/stat); false when
/// there is no such process or it is a zombie.
bool processStartTime(int pid, std::uint64_t* startTime);

// ---- Process-side hooks (runtime and communicator) ------------------------------
// Each opens the process's registry on first use; none fails or throws.

/// A device of this process came up (setDevice took the first reference).
void registryDeviceUp(int logicalDevice, int physicalDevice, std::uint64_t capacity);
/// The device's last reference was dropped (its memory is released).
void registryDeviceDown(int logicalDevice);
/// The device's memory in use changed.
void registryNoteMemory(int logicalDevice, std::uint64_t used);
/// A communicator of this process (`comm` identifies it) completed an
/// operation; seq 0 (send/recv) leaves the last sequence number as it was.
void registryNoteOp(const void* comm, const std::string& name, int rank, int size,
                    int logicalDevice, std::uint64_t seq, const char* opName);
/// The communicator is destroyed: its entry goes.
void registryForgetComm(const void* comm);

}  // namespace cohort::runtime
