// Operation histories and the SIGUSR1 report. The signal handler only writes a
// byte to a pipe (async-signal-safe) and chains to the handler it replaced; a
// reporter thread reads the pipe and prints, so formatting and locking never
// happen inside the handler.
#include "collective/op_history.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <thread>
#include <utility>

#include "common/log.h"
#include "common/thread_name.h"

namespace cohort::collective {

namespace {

using std::chrono::system_clock;

// The records' clock: the wall clock as of the last timer tick (CLOCK_REALTIME_COARSE,
// 6 ns here against 25 ns for system_clock::now(); two readings per operation
// were a tenth of a small shm operation). The history explains slow and stuck
// operations; a span shorter than one tick prints as "under" it.
OpRecord::Time wallNow() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
  return OpRecord::Time(std::chrono::duration_cast<system_clock::duration>(
      std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec)));
}

system_clock::duration tick() {
  static const system_clock::duration resolution = [] {
    timespec r{};
    ::clock_getres(CLOCK_REALTIME_COARSE, &r);
    return std::chrono::duration_cast<system_clock::duration>(std::chrono::nanoseconds(r.tv_nsec));
  }();
  return resolution;
}

struct Registry {
  std::mutex mu;
  std::vector<const OpHistory*> live;
};
// Leaked on purpose: the detached reporter thread may use it during exit.
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

// The operation running on this thread (RunScope). One variable: each thread-
// local of a shared library costs a __tls_get_addr call per use.
struct Running {
  OpHistory* history = nullptr;
  std::uint64_t id = 0;
};
thread_local Running tRunning;

std::atomic<int> gWakeFd{-1};     // write end of the report pipe (lock-free)
struct sigaction gPrevious = {};  // the SIGUSR1 action we replaced

void onReportSignal(int sig, siginfo_t* info, void* context) {
  const int saved = errno;
  const char byte = 1;
  const int fd = gWakeFd.load();
  if (fd >= 0) {
    const ssize_t ignored = ::write(fd, &byte, 1);  // full pipe: a report is pending
    (void)ignored;
  }
  errno = saved;
  if ((gPrevious.sa_flags & SA_SIGINFO) != 0) {
    if (gPrevious.sa_sigaction != nullptr) gPrevious.sa_sigaction(sig, info, context);
  } else if (gPrevious.sa_handler != SIG_DFL && gPrevious.sa_handler != SIG_IGN) {
    gPrevious.sa_handler(sig);
  }
}

void reportLoop(int fd) {
  char bytes[64];
  for (;;) {
    const ssize_t n = ::read(fd, bytes, sizeof(bytes));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    const std::string text = formatAllHistories();
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  }
}

void installReportSignal() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    COHORT_LOG(kWarn, "collective", "no SIGUSR1 operation reports: pipe2 failed (errno {})", errno);
    return;
  }
  (void)::fcntl(fds[1], F_SETFL, O_NONBLOCK);
  gWakeFd = fds[1];
  std::thread([fd = fds[0]] {
    nameThisThread("cohort report");
    reportLoop(fd);
  }).detach();
  struct sigaction action = {};
  action.sa_sigaction = onReportSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (::sigaction(SIGUSR1, &action, &gPrevious) != 0) {
    COHORT_LOG(kWarn, "collective", "no SIGUSR1 operation reports: sigaction failed (errno {})",
               errno);
  }
}

std::string clockTime(OpRecord::Time t) {
  const std::time_t secs = system_clock::to_time_t(t);
  std::tm tm = {};
  localtime_r(&secs, &tm);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  return fmt::format("{:02}:{:02}:{:02}.{:03}", tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

std::string span(system_clock::duration d) {
  if (d < tick()) {
    return fmt::format("under {:.0f} ms", std::chrono::duration<double, std::milli>(tick()).count());
  }
  const double s = std::chrono::duration<double>(d).count();
  if (s >= 1) return fmt::format("{:.1f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.0f} us", s * 1e6);
}

std::string describeOp(const OpDesc& op) {
  if (op.coll != Coll::kSendRecv) return op.describe();
  std::string text = fmt::format("send/recv of {} item(s):", op.items.size());
  for (std::size_t i = 0; i < op.items.size() && i < 4; ++i) {
    const SendRecvItem& it = op.items[i];
    text += fmt::format(" {} {} x {} {} rank {}", it.isSend ? "send" : "recv", it.count,
                        dataTypeName(it.type), it.isSend ? "to" : "from", it.peer);
  }
  return op.items.size() > 4 ? text + " ..." : text;
}

std::string formatRecord(const OpRecord& r, OpRecord::Time now) {
  const std::string head = fmt::format("  [{}] {}", r.id, describeOp(r.op));
  switch (r.state) {
    case OpState::kQueued:
      return fmt::format("{} | queued at {}, not started after {}", head, clockTime(r.queued),
                         span(now - r.queued));
    case OpState::kRunning:
      return fmt::format("{} | running {} since {}, for {}; {}", head, r.algorithm,
                         clockTime(r.started), span(now - r.started),
                         r.waitingFor.empty() ? "no slow wait so far" : r.waitingFor);
    case OpState::kDone:
      return fmt::format("{} | done {} in {}, started {}", head, r.algorithm,
                         span(r.ended - r.started), clockTime(r.started));
    case OpState::kFailed:
      return fmt::format("{} | failed {} after {}, started {}{}: {}", head, r.algorithm,
                         span(r.ended - r.started), clockTime(r.started),
                         r.waitingFor.empty() ? "" : ", last wait: " + r.waitingFor, r.error);
  }
  return head;
}

}  // namespace

const char* opStateName(OpState state) {
  switch (state) {
    case OpState::kQueued:
      return "queued";
    case OpState::kRunning:
      return "running";
    case OpState::kDone:
      return "done";
    case OpState::kFailed:
      return "failed";
  }
  return "unknown";
}

OpHistory::OpHistory(std::string label, std::size_t capacity)
    : label_(std::move(label)), capacity_(std::max<std::size_t>(capacity, 2)) {
  records_.reserve(capacity_);
  keys_.reserve(capacity_);
  static std::once_flag installed;
  std::call_once(installed, installReportSignal);
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().live.push_back(this);
}

OpHistory::~OpHistory() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  reg.live.erase(std::remove(reg.live.begin(), reg.live.end(), this), reg.live.end());
}

namespace {
constexpr int kClassShift = 62;
constexpr std::uint64_t kIdMask = (std::uint64_t(1) << kClassShift) - 1;
}  // namespace

void OpHistory::setState(std::size_t index, OpState state) {
  records_[index].state = state;
  // Finished before queued, older before newer.
  const std::uint64_t cls = state == OpState::kRunning ? 2 : state == OpState::kQueued ? 1 : 0;
  keys_[index] = (cls << kClassShift) | (records_[index].id & kIdMask);
}

// Records go round the slots in id order (id 1 in slot 0) while every id is
// recorded and the oldest is finished when its slot comes round.
std::size_t OpHistory::homeOf(std::uint64_t id) const {
  // A division costs 20-40 cycles; the default capacity is a power of two.
  return (capacity_ & (capacity_ - 1)) == 0 ? (id - 1) & (capacity_ - 1) : (id - 1) % capacity_;
}

// A fresh record for `id`: a new slot while there is room, else the victim the
// class comment describes (storage of the victim is reused).
std::size_t OpHistory::slotFor(std::uint64_t id, const OpDesc& op, OpRecord::Time now) {
  std::size_t victim = records_.size();
  if (victim < capacity_) {
    records_.emplace_back();
    keys_.push_back(0);
  } else if (const std::size_t home = homeOf(id); keys_[home] == ((id - capacity_) & kIdMask)) {
    // The usual case, without a scan: the record capacity_ ids back is in the
    // slot this id maps to and finished (class 0). Operations finish in id
    // order, so no older finished record is left beside it, save one that was
    // evicted while queued and came back (it goes at the next scan).
    victim = home;
  } else {
    // At most one record is running and capacity_ >= 2, so it is never the smallest.
    victim = static_cast<std::size_t>(std::min_element(keys_.begin(), keys_.end()) -
                                      keys_.begin());
  }
  OpRecord& r = records_[victim];
  r.id = id;
  newest_ = std::max(newest_, id);
  r.op.assign(op);
  r.algorithm.clear();
  r.queued = now;
  r.started = r.ended = OpRecord::Time{};
  r.waitingFor.clear();
  r.error.clear();
  setState(victim, OpState::kQueued);
  return victim;
}

std::uint64_t OpHistory::queued(const OpDesc& op) {
  const auto now = wallNow();
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t id = reserve();
  slotFor(id, op, now);
  return id;
}

std::size_t OpHistory::indexOf(std::uint64_t id) const {
  if (id > newest_) return records_.size();  // reserved, not recorded yet: no scan
  if (records_.size() == capacity_ && (keys_[homeOf(id)] & kIdMask) == (id & kIdMask)) {
    return homeOf(id);
  }
  std::size_t i = 0;
  while (i < keys_.size() && (keys_[i] & kIdMask) != (id & kIdMask)) ++i;
  return i;
}

void OpHistory::started(std::uint64_t id, const OpDesc& op, const std::string& algorithm) {
  const auto now = wallNow();
  std::lock_guard<std::mutex> lock(mu_);
  std::size_t i = indexOf(id);
  if (i == records_.size()) i = slotFor(id, op, now);  // evicted while queued, or reserved
  OpRecord& r = records_[i];
  setState(i, OpState::kRunning);
  r.algorithm = algorithm;
  r.started = now;
}

void OpHistory::waiting(std::uint64_t id, std::string what) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::size_t i = indexOf(id);
  if (i < records_.size()) records_[i].waitingFor = std::move(what);
}

void OpHistory::finished(std::uint64_t id, const Status& status) {
  const auto now = wallNow();
  std::lock_guard<std::mutex> lock(mu_);
  const std::size_t i = indexOf(id);
  if (i == records_.size()) return;
  OpRecord& r = records_[i];
  if (r.state == OpState::kQueued) r.started = now;  // failed before it ran
  setState(i, status.ok() ? OpState::kDone : OpState::kFailed);
  r.ended = now;
  if (status.ok())
    r.waitingFor.clear();
  else
    r.error = status.toString();
}

std::vector<OpRecord> OpHistory::snapshot() const {
  std::vector<OpRecord> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out = records_;
  }
  std::sort(out.begin(), out.end(),
            [](const OpRecord& a, const OpRecord& b) { return a.id < b.id; });
  return out;
}

std::string OpHistory::format() const {
  const std::vector<OpRecord> records = snapshot();
  const auto now = wallNow();
  std::string text = fmt::format("{} (pid {}): last {} operation(s), oldest first:\n", label_,
                                 ::getpid(), records.size());
  for (const OpRecord& r : records) text += formatRecord(r, now) + "\n";
  if (records.empty()) text += "  (none yet)\n";
  return text;
}

OpHistory::RunScope::RunScope(OpHistory* history, std::uint64_t id) {
  tRunning = Running{history, id};
}

OpHistory::RunScope::~RunScope() {
  tRunning = Running{};
}

void noteWait(std::string what) {
  const Running running = tRunning;
  if (running.history != nullptr) running.history->waiting(running.id, std::move(what));
}

std::string formatAllHistories() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  if (reg.live.empty()) {
    return fmt::format("cohort (pid {}): no live communicator in this process\n", ::getpid());
  }
  std::string text;
  for (const OpHistory* h : reg.live) text += h->format();
  return text;
}

}  // namespace cohort::collective
