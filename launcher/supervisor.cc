// A single-threaded poll loop over the signalfd and every rank's pipes. A rank's
// process group is SIGKILLed as soon as the rank has ended (while its zombie
// still pins the group id), so nothing it started outlives it; its pipes are
// drained before the failure message, so the message comes after its last words.
#include "launcher/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "common/log.h"

namespace cohort::launcher {

namespace {
constexpr auto kDrainTime = std::chrono::seconds(1);  // output after the last rank ended
}  // namespace

Supervisor::Supervisor(const SupervisorOptions& options, SignalChannel* signals)
    : options_(options), signals_(signals), start_(Clock::now()) {
  outcome_.keepGoing(options.keepGoing);
}

Supervisor::~Supervisor() {
  for (auto& rank : ranks_) {
    for (auto& stream : rank->streams) closeStream(stream);
    if (rank->logFd >= 0) ::close(rank->logFd);
  }
}

void Supervisor::addRank(int rank, const RankProcess& process, int logFd) {
  const std::string prefix = "[" + std::to_string(rank) + "] ";
  auto r = std::make_unique<Rank>(Rank{rank, process.pid, true, logFd, {}});
  r->streams.push_back({process.stdoutFd, LineRelay(prefix, STDOUT_FILENO, logFd)});
  r->streams.push_back({process.stderrFd, LineRelay(prefix, STDERR_FILENO, logFd)});
  ranks_.push_back(std::move(r));
}

void Supervisor::spawnFailed(int rank, const std::string& why) {
  apply(outcome_.spawnFailed(rank, why, static_cast<int>(runningRanks().size())));
}

int Supervisor::run() {
  std::vector<pollfd> fds;
  std::vector<Stream*> streams;
  for (;;) {
    if (std::exchange(childEvent_, false)) reap();
    checkTimers();
    if (runningRanks().empty()) {
      if (!drainUntil_) drainUntil_ = Clock::now() + kDrainTime;
      if (!anyStreamOpen() || Clock::now() >= *drainUntil_) break;
    }
    fds.assign(1, pollfd{signals_->fd(), POLLIN, 0});
    streams.clear();
    for (auto& rank : ranks_) {
      for (auto& stream : rank->streams) {
        if (stream.fd < 0) continue;
        fds.push_back({stream.fd, POLLIN, 0});
        streams.push_back(&stream);
      }
    }
    if (::poll(fds.data(), fds.size(), pollTimeoutMs()) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) handleSignals();
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0 && streams[i - 1]->fd == fds[i].fd)
        readStream(*streams[i - 1], false);
    }
  }
  for (auto& rank : ranks_) {
    for (auto& stream : rank->streams) closeStream(stream);
  }
  return outcome_.exitCode();
}

void Supervisor::handleSignals() {
  for (int sig = signals_->next(); sig != 0; sig = signals_->next()) {
    if (sig == SIGCHLD) {
      childEvent_ = true;
    } else {
      apply(outcome_.signalReceived(sig));
    }
  }
}

void Supervisor::reap() {
  for (auto& rank : ranks_) {
    if (!rank->running) continue;
    siginfo_t info{};
    if (::waitid(P_PID, rank->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) continue;
    if (info.si_pid != rank->pid) continue;
    ::kill(-rank->pid, SIGKILL);  // whatever the rank left behind in its group
    int status = 0;
    while (::waitpid(rank->pid, &status, 0) < 0 && errno == EINTR) {
    }
    onExit(*rank, status);
  }
}

void Supervisor::onExit(Rank& rank, int waitStatus) {
  rank.running = false;
  for (auto& stream : rank.streams) readStream(stream, true);
  COHORT_LOG(kInfo, "launcher", "rank {} (pid {}) {}", rank.rank, rank.pid,
             describeWaitStatus(waitStatus));
  const bool success = WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0;
  if (!success && options_.onRankFailed) options_.onRankFailed(rank.rank, rank.pid, waitStatus);
  apply(
      outcome_.rankEnded(rank.rank, rank.pid, waitStatus, static_cast<int>(runningRanks().size())));
}

void Supervisor::readStream(Stream& stream, bool drain) {
  char buffer[64 * 1024];
  while (stream.fd >= 0) {
    const ssize_t n = ::read(stream.fd, buffer, sizeof(buffer));
    if (n > 0) {
      stream.relay.feed(buffer, static_cast<std::size_t>(n));
      if (!drain) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    closeStream(stream);  // EOF or a read error
  }
}

void Supervisor::closeStream(Stream& stream) {
  if (stream.fd < 0) return;
  stream.relay.finish();
  ::close(stream.fd);
  stream.fd = -1;
}

void Supervisor::apply(const JobOutcome::Decision& decision) {
  if (!decision.message.empty()) writeAll(STDERR_FILENO, decision.message + "\n");
  if (decision.action == JobOutcome::Action::kNone) return;
  signalRunning(decision.signal);
  if (decision.action == JobOutcome::Action::kSignal) {
    killAt_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(options_.graceS));
  } else {
    killAt_.reset();
  }
}

void Supervisor::signalRunning(int sig) {
  for (auto& rank : ranks_) {
    if (rank->running && ::kill(-rank->pid, sig) != 0) ::kill(rank->pid, sig);
  }
}

void Supervisor::checkTimers() {
  const auto now = Clock::now();
  if (options_.timeoutS > 0 && !outcome_.stopping() &&
      now - start_ >= std::chrono::duration<double>(options_.timeoutS)) {
    apply(outcome_.timedOut(options_.timeoutS));
  }
  if (killAt_ && now >= *killAt_) {
    killAt_.reset();
    apply(outcome_.graceExpired(runningRanks(), options_.graceS));
  }
}

int Supervisor::pollTimeoutMs() const {
  std::optional<Clock::time_point> next = killAt_;
  if (options_.timeoutS > 0 && !outcome_.stopping()) {
    const auto at = start_ + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(options_.timeoutS));
    if (!next || at < *next) next = at;
  }
  if (drainUntil_ && (!next || *drainUntil_ < *next)) next = drainUntil_;
  if (!next) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 60'000));
}

std::vector<int> Supervisor::runningRanks() const {
  std::vector<int> out;
  for (const auto& rank : ranks_) {
    if (rank->running) out.push_back(rank->rank);
  }
  return out;
}

bool Supervisor::anyStreamOpen() const {
  for (const auto& rank : ranks_) {
    for (const auto& stream : rank->streams) {
      if (stream.fd >= 0) return true;
    }
  }
  return false;
}

}  // namespace cohort::launcher
