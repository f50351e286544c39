// One rank of a shrink trial (bench/shrink_trials.sh), under cohortrun --keep-going:
//
//   shrink_trial --bytes B --victim R --at S --delay-us D [--mode kill|abort] [--after N]
//
// Every rank allreduces B bytes in a loop. At step S rank R queues its allreduce,
// lets it run D us, then dies (SIGKILL) or aborts and destroys its communicator
// (staying alive 3 s). The others agree on the failed ranks, shrink, destroy the old
// communicator and check every element of N allreduces among themselves. Lines:
//   KILL rank=R t=NS                      the victim, just before it dies or aborts
//   SURVIVED rank=R failed=[..] new=K/M t_first=NS   after the first correct allreduce
//   CHECKED rank=R allreduces=N fds=+F threads=+T     at the end: what is left open
//                                         beyond what the process had before its
//                                         first communicator (once per process: the
//                                         history report's thread and pipe, +2 +1;
//                                         --victim -1 runs --at steps without a
//                                         failure and prints the same line)
// t values are CLOCK_MONOTONIC nanoseconds (one clock for the whole machine).
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cohort/communicator.h"
#include "cohort/runtime.h"
#include "trial_util.h"

using cohort::Communicator;
using cohort::DataType;
using cohort::ReduceOp;
using cohort::Status;
namespace rt = cohort::runtime;
using cohort::bench::entries;
using cohort::bench::nowNs;

namespace {

[[noreturn]] void die(int rank, const char* what, const Status& s) {
  std::printf("FAILED rank=%d %s: %s\n", rank, what, s.toString().c_str());
  std::fflush(stdout);
  std::exit(1);
}

float input(int rank, std::size_t i, int k) {
  return static_cast<float>((rank + 1) * 4096 + static_cast<int>(i % 2039) + k);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("one rank of a shrink trial");
  std::size_t bytes = 16u << 20;
  int victim = 0, at = 2, delayUs = 0, after = 100;
  std::string mode = "kill";
  app.add_option("--bytes", bytes);
  app.add_option("--victim", victim);
  app.add_option("--at", at);
  app.add_option("--delay-us", delayUs);
  app.add_option("--after", after);
  app.add_option("--mode", mode)->check(CLI::IsMember({"kill", "abort"}));
  CLI11_PARSE(app, argc, argv);

  const std::size_t count = bytes / sizeof(float);
  void* buffer = nullptr;
  rt::Stream* stream = nullptr;
  // The device, its memory and a stream first: what is open beyond them at the end
  // is the communicators'.
  const char* device = std::getenv("COHORT_DEVICE_ID");
  if (Status s = rt::setDevice(device != nullptr ? std::atoi(device) : 0); !s.ok()) {
    die(-1, "setDevice", s);
  }
  if (Status s = rt::deviceMalloc(&buffer, bytes); !s.ok()) die(-1, "malloc", s);
  if (Status s = rt::streamCreate(&stream); !s.ok()) die(-1, "stream", s);
  const int fds0 = entries("/proc/self/fd"), threads0 = entries("/proc/self/task");
  std::unique_ptr<Communicator> comm;
  if (Status s = Communicator::initFromEnvironment(&comm); !s.ok()) die(-1, "init", s);
  const int rank = comm->rank(), size = comm->size();
  auto* data = static_cast<float*>(buffer);
  std::fill(data, data + count, 1.0f);

  for (int step = 0;; ++step) {
    Status s = comm->allReduce(data, data, count, DataType::kFloat32, ReduceOp::kMax, stream);
    if (rank == victim && step == at) {
      ::usleep(static_cast<useconds_t>(delayUs));
      std::printf("KILL rank=%d t=%lld\n", rank, nowNs());
      std::fflush(stdout);
      if (mode == "kill") ::raise(SIGKILL);
      (void)Communicator::destroy(std::move(comm), /*abortPending=*/true);
      ::sleep(3);
      return 0;
    }
    if (s.ok()) s = rt::streamSynchronize(stream);
    if (!s.ok()) break;
    if (victim < 0 && step == at) {  // no failure: what one communicator leaves open
      (void)Communicator::destroy(std::move(comm), false);
      std::printf("CHECKED rank=%d allreduces=0 fds=%+d threads=%+d\n", rank,
                  entries("/proc/self/fd") - fds0, entries("/proc/self/task") - threads0);
      return 0;
    }
  }

  std::vector<int> failed;
  std::unique_ptr<Communicator> survivors;
  if (Status s = comm->failedRanks(&failed); !s.ok()) die(rank, "failedRanks", s);
  if (Status s = comm->shrink(&survivors); !s.ok()) die(rank, "shrink", s);
  (void)Communicator::destroy(std::move(comm), /*abortPending=*/true);
  (void)rt::streamDestroy(stream);  // it keeps the failure
  if (Status s = rt::streamCreate(&stream); !s.ok()) die(rank, "stream", s);
  std::vector<int> alive;
  for (int r = 0; r < size; ++r) {
    if (std::find(failed.begin(), failed.end(), r) == failed.end()) alive.push_back(r);
  }
  // The sum of input(r, i, k) over the survivors r, spelled out.
  float rankPart = 0;
  for (int r : alive) rankPart += static_cast<float>((r + 1) * 4096);
  const auto n = static_cast<float>(alive.size());
  for (int k = 0; k < after; ++k) {
    for (std::size_t i = 0; i < count; ++i) data[i] = input(rank, i, k);
    Status s = survivors->allReduce(data, data, count, DataType::kFloat32, ReduceOp::kSum, stream);
    if (s.ok()) s = rt::streamSynchronize(stream);
    if (!s.ok()) die(rank, "allreduce after the shrink", s);
    for (std::size_t i = 0; i < count; ++i) {
      const float want = rankPart + n * static_cast<float>(static_cast<int>(i % 2039) + k);
      if (data[i] != want) {
        std::printf("FAILED rank=%d allreduce %d element %zu: %g, want %g\n", rank, k, i, data[i],
                    want);
        return 1;
      }
    }
    if (k == 0) {
      std::string list;
      for (int r : failed) list += (list.empty() ? "" : ",") + std::to_string(r);
      std::printf("SURVIVED rank=%d failed=[%s] new=%d/%d t_first=%lld\n", rank, list.c_str(),
                  survivors->rank(), survivors->size(), nowNs());
      std::fflush(stdout);
    }
  }
  (void)Communicator::destroy(std::move(survivors), false);
  std::printf("CHECKED rank=%d allreduces=%d fds=%+d threads=%+d\n", rank, after,
              entries("/proc/self/fd") - fds0, entries("/proc/self/task") - threads0);
  (void)rt::streamDestroy(stream);
  (void)rt::deviceFree(buffer);
  return 0;
}
