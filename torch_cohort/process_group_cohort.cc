// Construction and the common path of every operation: which device, which
// bootstrap, and how a Cohort call becomes a Work.
#include "torch_cohort/process_group_cohort.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace cohort::torch_cohort {

namespace {

// The key rank 0 puts Cohort's root info under, in the group's own prefix store.
constexpr const char* kRootInfoKey = "cohort/root_info";

std::string envText(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

int envInt(const char* name, int fallback) {
  const std::string v = envText(name);
  if (v.empty()) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  TORCH_CHECK(end != nullptr && *end == '\0' && x >= 0, "cohort: ", name, "=", v,
              " is not a non-negative integer");
  return static_cast<int>(x);
}

void check(const Status& s, const char* what) {
  TORCH_CHECK(s.ok(), "cohort ", what, ": ", s.toString());
}

// The device of a process that has none yet: COHORT_DEVICE_ID (what cohortrun
// sets), else the local rank torchrun sets, else the global rank, over the
// devices this process sees (COHORT_VISIBLE_DEVICES).
int chooseDevice(int groupRank) {
  int count = 0;
  check(runtime::getDeviceCount(&count), "getDeviceCount");
  TORCH_CHECK(count > 0, "cohort: this process sees no device (COHORT_VISIBLE_DEVICES)");
  const int explicitId = envInt("COHORT_DEVICE_ID", -1);
  if (explicitId >= 0) return explicitId;
  return envInt("LOCAL_RANK", envInt("RANK", groupRank)) % count;
}

// A thread's current device is the runtime's per-thread state; Cohort runs small
// operations on the calling thread and takes scratch memory from it.
void ensureDevice(int device) {
  thread_local int current = -1;
  if (current == device) return;
  int now = -1;
  if (!runtime::getDevice(&now).ok() || now != device) check(runtime::setDevice(device), "setDevice");
  current = device;
}

// Errors Cohort returns before it sends anything: the call is refused on this
// rank alone, so it raises at once rather than through the Work.
bool refusedBeforeSending(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kSizeOverflow:
    case ErrorCode::kInvalidPointer:
    case ErrorCode::kInvalidUsage:
    case ErrorCode::kInvalidHandle:
    case ErrorCode::kNotSupported:
    case ErrorCode::kCaptured:
    case ErrorCode::kAborted:
      return true;
    default:
      return false;
  }
}

}  // namespace

ProcessGroupCohort::ProcessGroupCohort(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                       int size, std::chrono::milliseconds timeout)
    : BackendBase(rank, size), timeout_(timeout) {
  CommOptions options;
  options.name = "torch";
  options.execTimeoutMs = static_cast<long>(timeout.count());
  // A rank table describes the whole job: it makes the first group (the default
  // one, which every rank creates first); later groups bootstrap through the store.
  static std::atomic<bool> tableTaken{false};
  std::string table = envText("COHORT_RANKTABLE");
  if (table.empty()) table = envText("RANK_TABLE_FILE");
  const bool useTable = !table.empty() && !tableTaken.exchange(true);
  int current = -1;
  if (!runtime::getDevice(&current).ok() && !useTable) {
    const int device = chooseDevice(rank);
    check(runtime::setDevice(device), "setDevice");
  }
  if (useTable) {
    check(Communicator::initFromRankTable(table, rank, &comm_, options), "initFromRankTable");
  } else {
    UniqueId id;
    if (rank == 0) {
      check(Communicator::getUniqueId(&id), "getUniqueId");
      store->set(kRootInfoKey, std::vector<uint8_t>(id.bytes, id.bytes + sizeof(id.bytes)));
    } else {
      const std::vector<uint8_t> bytes = store->get(kRootInfoKey);  // waits, store timeout
      TORCH_CHECK(bytes.size() == sizeof(id.bytes), "cohort: the store's root info has ",
                  bytes.size(), " bytes, not ", sizeof(id.bytes));
      std::memcpy(id.bytes, bytes.data(), bytes.size());
    }
    check(Communicator::initRank(id, size, rank, &comm_, options), "initRank");
  }
  device_ = comm_->device();
  ensureDevice(device_);
  check(runtime::streamCreate(&stream_), "streamCreate");
  init();
}

ProcessGroupCohort::ProcessGroupCohort(std::unique_ptr<Communicator> comm,
                                       std::chrono::milliseconds timeout)
    : BackendBase(comm->rank(), comm->size()), comm_(std::move(comm)), timeout_(timeout) {
  device_ = comm_->device();
  ensureDevice(device_);
  check(runtime::streamCreate(&stream_), "streamCreate");
  init();
}

std::vector<int64_t> ProcessGroupCohort::failedRanks() {
  std::lock_guard<std::mutex> lock(mu_);
  ensureDevice(device_);
  std::vector<int> failed;
  check(comm_->failedRanks(&failed), "failedRanks");
  return std::vector<int64_t>(failed.begin(), failed.end());
}

c10::intrusive_ptr<ProcessGroupCohort> ProcessGroupCohort::shrink() {
  std::unique_ptr<Communicator> survivors;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ensureDevice(device_);
    check(comm_->shrink(&survivors), "shrink");
  }
  return c10::make_intrusive<ProcessGroupCohort>(std::move(survivors), timeout_);
}

ProcessGroupCohort::~ProcessGroupCohort() {
  // Pending Works may still be waited on by their holders: they see the
  // stream's last state until it is destroyed (then a handle error).
  if (stream_ != nullptr) (void)runtime::streamSynchronize(stream_, timeout_.count());
  if (comm_ != nullptr) (void)Communicator::destroy(std::move(comm_), false);
  if (stream_ != nullptr) (void)runtime::streamDestroy(stream_);
}

std::string ProcessGroupCohort::lastChoice() const { return comm_->lastChoice(); }

void ProcessGroupCohort::checkRoot(int64_t root, const char* op) const {
  TORCH_CHECK(root >= 0 && root < getSize(), "cohort ", op, ": root rank ", root,
              " is not in this group of ", getSize());
}

void ProcessGroupCohort::checkPeer(int peer, const char* op) const {
  TORCH_CHECK(peer >= 0 && peer < getSize() && peer != getRank(), "cohort ", op, ": peer rank ",
              peer, " is not another rank of this group of ", getSize());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::launch(c10d::OpType type, std::string what,
                                                          std::vector<at::Tensor> outputs,
                                                          std::vector<at::Tensor> keep,
                                                          const Call& call,
                                                          std::function<void()> finishHost) {
  std::lock_guard<std::mutex> lock(mu_);
  ensureDevice(device_);
  const Status s = call(*comm_, stream_);
  if (!s.ok()) {
    TORCH_CHECK(!refusedBeforeSending(s.code()), "cohort ", what, ": ", s.toString());
    return CohortWork::failed(getRank(), type, std::move(what), s);
  }
  ++sequence_;
  auto work = c10::make_intrusive<CohortWork>(getRank(), type, std::move(what), stream_,
                                              std::move(outputs), std::move(keep),
                                              std::move(finishHost));
  if (coalescing_) {
    grouped_.push_back(work);
    return work;
  }
  check(work->setTargetHere(), "reading the stream's position");
  return work;
}

void ProcessGroupCohort::startCoalescing() {
  std::lock_guard<std::mutex> lock(mu_);
  TORCH_CHECK(!coalescing_, "cohort: a coalescing group is open already");
  check(Communicator::groupStart(), "groupStart");
  coalescing_ = true;
}

Status ProcessGroupCohort::launchGroup() {
  TORCH_CHECK(coalescing_, "cohort: endCoalescing without startCoalescing");
  coalescing_ = false;
  ensureDevice(device_);
  const Status s = Communicator::groupEnd();
  std::vector<c10::intrusive_ptr<CohortWork>> works;
  works.swap(grouped_);
  for (auto& w : works) {
    (void)w->setTargetHere();  // a failure: the Work ends with synchronize
    if (!s.ok()) w->concludeFromStream(s);
  }
  return s;
}

#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR == 0)
void ProcessGroupCohort::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) {
  std::lock_guard<std::mutex> lock(mu_);
  (void)launchGroup();  // a failure is every grouped Work's
  (void)reqs;           // the caller holds the Works the calls returned already
}
#else
c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::endCoalescing() {
  std::lock_guard<std::mutex> lock(mu_);
  const Status s = launchGroup();
  if (!s.ok()) return CohortWork::failed(getRank(), c10d::OpType::UNKNOWN, "coalesced group", s);
  auto work = c10::make_intrusive<CohortWork>(getRank(), c10d::OpType::UNKNOWN, "coalesced group",
                                              stream_, std::vector<at::Tensor>{},
                                              std::vector<at::Tensor>{}, nullptr);
  (void)work->setTargetHere();  // a failure: the Work ends with synchronize
  return work;
}
#endif

void ProcessGroupCohort::setSequenceNumberForGroup() {
  std::lock_guard<std::mutex> lock(mu_);
  sequence_ = 0;
}

uint64_t ProcessGroupCohort::getSequenceNumberForGroup() {
  std::lock_guard<std::mutex> lock(mu_);
  return sequence_;
}

at::Tensor deviceBytes(int64_t bytes) {
  TORCH_CHECK(bytes >= 0, "cohort: ", bytes, " bytes of device memory");
  int device = -1;
  TORCH_CHECK(runtime::getDevice(&device).ok(), "cohort: this thread has no device yet; create "
              "a cohort process group first (init_process_group or new_group)");
  void* p = nullptr;
  check(runtime::deviceMalloc(&p, static_cast<std::size_t>(std::max<int64_t>(bytes, 1))),
        "deviceMalloc");
  return at::from_blob(p, {bytes}, [](void* q) { (void)runtime::deviceFree(q); },
                       at::TensorOptions().dtype(at::kByte));
}

c10::intrusive_ptr<ProcessGroupCohort> createProcessGroup(
    const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
    std::chrono::milliseconds timeout) {
  return c10::make_intrusive<ProcessGroupCohort>(store, rank, size, timeout);
}

}  // namespace cohort::torch_cohort
