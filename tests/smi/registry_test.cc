// The node registry on a private file: what a writer publishes is what a reader
// sees; the slots of dead processes (exited, zombie, or a reused pid) are
// neither listed nor kept; a full table and foreign files are refused by name.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "runtime/node_registry.h"
#include "test_util.h"

namespace cohort::runtime {
namespace {

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = "/dev/shm/cohort-registry-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    unlink(path_.c_str());
    ASSERT_OK(NodeRegistry::open(path_, true, &registry_));
  }
  void TearDown() override {
    registry_.reset();
    unlink(path_.c_str());
  }

  std::vector<RegistryEntry> entriesOf(int pid) {
    std::vector<RegistryEntry> out;
    for (auto& e : registry_->liveEntries()) {
      if (e.pid == pid) out.push_back(e);
    }
    return out;
  }

  SlotDescription device(int physical, int logical) {
    SlotDescription d;
    d.physicalDevice = physical;
    d.logicalDevice = logical;
    d.memoryTotal = 1ull << 30;
    return d;
  }

  std::string path_;
  std::unique_ptr<NodeRegistry> registry_;
};

TEST_F(RegistryTest, HeldDeviceIsListedWithItsMemory) {
  NodeRegistry::Slot* slot = nullptr;
  ASSERT_OK(registry_->claim(device(5, 0), &slot));
  EXPECT_TRUE(entriesOf(getpid()).empty()) << "a device is listed only while held";
  NodeRegistry::setHeld(slot, true);
  NodeRegistry::setMemoryUsed(slot, 3u << 20);
  const auto entries = entriesOf(getpid());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].kind, RegistryEntry::Kind::kDevice);
  EXPECT_EQ(entries[0].physicalDevice, 5);
  EXPECT_EQ(entries[0].logicalDevice, 0);
  EXPECT_EQ(entries[0].memoryUsed, 3u << 20);
  EXPECT_EQ(entries[0].memoryTotal, 1ull << 30);
  std::uint64_t start = 0;
  ASSERT_TRUE(processStartTime(getpid(), &start));
  EXPECT_EQ(entries[0].startTime, start);
  registry_->release(slot);
  EXPECT_TRUE(entriesOf(getpid()).empty());
}

TEST_F(RegistryTest, CommunicatorShowsRankSizeAndLastOperation) {
  SlotDescription d;
  d.kind = RegistryEntry::Kind::kCommunicator;
  d.physicalDevice = 2;
  d.name = std::string(100, 'n');  // truncated to 63
  d.rank = 3;
  d.size = 8;
  NodeRegistry::Slot* slot = nullptr;
  ASSERT_OK(registry_->claim(d, &slot));
  auto entries = entriesOf(getpid());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].name, std::string(63, 'n'));
  EXPECT_EQ(entries[0].rank, 3);
  EXPECT_EQ(entries[0].size, 8);
  EXPECT_EQ(entries[0].lastSeq, 0u);
  EXPECT_EQ(entries[0].lastOp, "");
  NodeRegistry::noteOp(slot, 41, "allreduce");
  NodeRegistry::noteOp(slot, 42, "broadcast");
  NodeRegistry::noteOp(slot, 0, "send/recv");  // seq 0 keeps the last sequence number
  entries = entriesOf(getpid());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].lastSeq, 42u);
  EXPECT_EQ(entries[0].lastOp, "send/recv");
  EXPECT_GT(entries[0].lastOpUnixMs, 0);
}

TEST_F(RegistryTest, ExitedAndZombieProcessesAreIgnoredAndTheirSlotsFreed) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::unique_ptr<NodeRegistry> r;
    NodeRegistry::Slot* slot = nullptr;
    if (!NodeRegistry::open(path_, false, &r).ok() || !r->claim(device(1, 0), &slot).ok()) _exit(1);
    NodeRegistry::setHeld(slot, true);
    _exit(0);  // a crash: nothing released
  }
  // A zombie (exited, not yet reaped) is already gone for the registry.
  std::uint64_t start = 0;
  for (int i = 0; i < 500 && processStartTime(child, &start); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(processStartTime(child, &start));
  EXPECT_TRUE(entriesOf(child).empty());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(entriesOf(child).empty());
  EXPECT_FALSE(processStartTime(child, &start));
  // The dead process's slot is reused: the whole table can be claimed again.
  std::vector<NodeRegistry::Slot*> slots(registry_->capacity());
  for (auto& s : slots) ASSERT_OK(registry_->claim(device(0, 0), &s));
}

TEST_F(RegistryTest, ReusedPidIsToldApartByStartTime) {
  NodeRegistry::Slot* slot = nullptr;
  ASSERT_OK(registry_->claim(device(4, 0), &slot));
  NodeRegistry::setHeld(slot, true);
  ASSERT_EQ(entriesOf(getpid()).size(), 1u);
  // Pretend the slot was written by an earlier process with this pid: another
  // start time (the slot layout is the file format: start time at byte 24).
  const int fd = open(path_.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, 256 + 1024 * 256, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  ASSERT_NE(map, MAP_FAILED);
  char* mine = static_cast<char*>(map) + 256 + (getpid() % 1024) * 256;
  std::uint64_t start = 0;
  std::memcpy(&start, mine + 24, 8);
  std::uint64_t realStart = 0;
  ASSERT_TRUE(processStartTime(getpid(), &realStart));
  ASSERT_EQ(start, realStart) << "the first claim takes slot pid % 1024";
  start -= 1;
  std::memcpy(mine + 24, &start, 8);
  munmap(map, 256 + 1024 * 256);
  EXPECT_TRUE(entriesOf(getpid()).empty());
}

TEST_F(RegistryTest, FullTableIsRefusedByName) {
  std::vector<NodeRegistry::Slot*> slots(registry_->capacity());
  for (auto& s : slots) ASSERT_OK(registry_->claim(device(0, 0), &s));
  NodeRegistry::Slot* extra = nullptr;
  EXPECT_ERROR(registry_->claim(device(0, 0), &extra), kUnavailable,
               "all 1024 slots are held by live processes");
  registry_->release(slots[7]);
  EXPECT_OK(registry_->claim(device(0, 0), &extra));
}

TEST_F(RegistryTest, ConcurrentClaimsGetDistinctSlots) {
  std::vector<std::vector<NodeRegistry::Slot*>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        NodeRegistry::Slot* s = nullptr;
        if (registry_->claim(device(t, t), &s).ok()) got[t].push_back(s);
        (void)registry_->liveEntries();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<NodeRegistry::Slot*> all;
  for (const auto& g : got) all.insert(all.end(), g.begin(), g.end());
  ASSERT_EQ(all.size(), 200u);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()), all.end());
}

// The hooks the runtime and the communicator call, on this user's registry.
TEST(RegistryHooks, PublishDevicesAndCommunicatorsOfThisProcess) {
  std::unique_ptr<NodeRegistry> registry;
  auto mine = [&] {
    std::vector<RegistryEntry> out;
    for (auto& e : registry->liveEntries()) {
      if (e.pid == getpid()) out.push_back(e);
    }
    return out;
  };
  registryDeviceUp(3, 7, 1ull << 30);
  ASSERT_OK(NodeRegistry::open(NodeRegistry::defaultPath(), false, &registry));
  registryNoteMemory(3, 5u << 20);
  auto entries = mine();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].physicalDevice, 7);
  EXPECT_EQ(entries[0].logicalDevice, 3);
  EXPECT_EQ(entries[0].memoryUsed, 5u << 20);
  // Communicators on device 3 (physical 7); at most 128 per process, the least
  // recently used going first.
  std::vector<int> keys(130);
  auto note = [&](int i) {
    registryNoteOp(&keys[i], "comm" + std::to_string(i), i % 4, 4, 3, 10 + i, "allgather");
  };
  for (int i = 0; i < 128; ++i) note(i);
  registryNoteOp(&keys[0], "comm0", 0, 4, 3, 0, "send/recv");  // comm0 is used again
  note(128);  // the table of this process is full: comm1, then comm2, go
  note(129);
  entries = mine();
  std::map<std::string, RegistryEntry> comms;
  for (const auto& e : entries) {
    if (e.kind == RegistryEntry::Kind::kCommunicator) comms[e.name] = e;
  }
  EXPECT_EQ(comms.size(), 128u);
  ASSERT_EQ(comms.count("comm0"), 1u);
  EXPECT_EQ(comms["comm0"].lastSeq, 10u);
  EXPECT_EQ(comms["comm0"].lastOp, "send/recv");
  EXPECT_EQ(comms["comm0"].physicalDevice, 7);
  EXPECT_EQ(comms.count("comm1"), 0u) << "the least recently used went first";
  EXPECT_EQ(comms.count("comm2"), 0u);
  EXPECT_EQ(comms.count("comm3"), 1u);
  ASSERT_EQ(comms.count("comm129"), 1u);
  EXPECT_EQ(comms["comm129"].rank, 1);
  EXPECT_EQ(comms["comm129"].lastSeq, 139u);
  for (auto& key : keys) registryForgetComm(&key);
  registryDeviceDown(3);
  EXPECT_TRUE(mine().empty());
}

// A communicator noted again by the same thread takes the hook's lock-free
// path; once forgotten, a new communicator at the same address gets a slot of
// its own and the old one is not written again.
TEST(RegistryHooks, RepeatedNotesReachTheirCommunicatorOnly) {
  std::unique_ptr<NodeRegistry> registry;
  auto comms = [&] {
    std::map<std::string, RegistryEntry> out;
    for (auto& e : registry->liveEntries()) {
      if (e.pid == getpid() && e.kind == RegistryEntry::Kind::kCommunicator) out[e.name] = e;
    }
    return out;
  };
  int key = 0;
  registryNoteOp(&key, "repeat", 0, 2, 0, 5, "allreduce");
  ASSERT_OK(NodeRegistry::open(NodeRegistry::defaultPath(), false, &registry));
  for (std::uint64_t seq = 6; seq <= 9; ++seq) registryNoteOp(&key, "repeat", 0, 2, 0, seq, "allgather");
  auto listed = comms();
  ASSERT_EQ(listed.count("repeat"), 1u);
  EXPECT_EQ(listed["repeat"].lastSeq, 9u);
  EXPECT_EQ(listed["repeat"].lastOp, "allgather");
  registryForgetComm(&key);
  EXPECT_EQ(comms().count("repeat"), 0u);
  registryNoteOp(&key, "successor", 1, 2, 0, 3, "broadcast");
  registryNoteOp(&key, "successor", 1, 2, 0, 4, "reduce");
  listed = comms();
  EXPECT_EQ(listed.count("repeat"), 0u);
  ASSERT_EQ(listed.count("successor"), 1u);
  EXPECT_EQ(listed["successor"].rank, 1);
  EXPECT_EQ(listed["successor"].lastSeq, 4u);
  EXPECT_EQ(listed["successor"].lastOp, "reduce");
  registryForgetComm(&key);
  EXPECT_TRUE(comms().empty());
}

TEST(RegistryFile, AbsentForeignAndOtherLayoutsAreRefused) {
  std::unique_ptr<NodeRegistry> r;
  const std::string base = "/dev/shm/cohort-registry-test-" + std::to_string(getpid());
  EXPECT_ERROR(NodeRegistry::open(base + "-absent", false, &r), kUnavailable, "does not exist");
  const std::string link = base + "-link";
  unlink(link.c_str());
  ASSERT_EQ(symlink("/dev/null", link.c_str()), 0);
  EXPECT_ERROR(NodeRegistry::open(link, true, &r), kInvalidUsage, "symbolic link");
  unlink(link.c_str());
  // A table of another layout version.
  const std::string other = base + "-other";
  {
    const int fd = open(other.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    std::vector<char> bytes(256 + 1024 * 256, 0);
    const std::uint64_t magic = 0x434f484f52524547ull;
    const std::uint32_t header[5] = {2, 99, 1024, 256, 0};  // state ready, layout 99
    std::memcpy(bytes.data(), &magic, 8);
    std::memcpy(bytes.data() + 8, header, sizeof(header));
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
  }
  EXPECT_ERROR(NodeRegistry::open(other, false, &r), kVersionMismatch, "layout version 99");
  unlink(other.c_str());
}

TEST(RegistryFile, DefaultPathIsPerUser) {
  EXPECT_EQ(NodeRegistry::defaultPath(), "/dev/shm/cohort-registry-" + std::to_string(geteuid()));
  std::uint64_t start = 0;
  EXPECT_FALSE(processStartTime(0, &start));
  EXPECT_FALSE(processStartTime(0x3ffffff, &start));  // above any pid_max
}

}  // namespace
}  // namespace cohort::runtime
