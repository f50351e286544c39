// One rank of a link-flap trial (bench/link_flap_trials.sh), under cohortrun:
//
//   flap_trial --bytes B --steps N
//
// Every rank allreduces (sums) B bytes N times, each time from fresh inputs, and
// checks every element of every result. While it runs, the script resets or cuts
// the link between the machines. Lines:
//   START rank=R t=NS                       the loop begins (CLOCK_MONOTONIC)
//   DONE rank=R steps=N median_ms=M max_ms=X max_step=K   every result was exact
//   FAILED rank=R step=K t=NS: <error>      an allreduce failed or was wrong
//   LEFT rank=R fds=+F threads=+T           after the communicator's destroy: what
//                                           is open beyond what the process had
//                                           before it (the same with or without a
//                                           break, or something leaked)

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

// Integers below 2^24 in every partial sum: exact in float, one right value.
float input(int rank, std::size_t i, int k) {
  return static_cast<float>((rank + 1) * 1024 + static_cast<int>(i % 4093) + k % 97);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("one rank of a link-flap trial");
  std::size_t bytes = 16u << 20;
  int steps = 40;
  app.add_option("--bytes", bytes);
  app.add_option("--steps", steps);
  CLI11_PARSE(app, argc, argv);

  const std::size_t count = bytes / sizeof(float);
  const char* device = std::getenv("COHORT_DEVICE_ID");
  void* buffer = nullptr;
  rt::Stream* stream = nullptr;
  std::unique_ptr<Communicator> comm;
  Status s = rt::setDevice(device != nullptr ? std::atoi(device) : 0);
  if (s.ok()) s = rt::deviceMalloc(&buffer, bytes);
  if (s.ok()) s = rt::streamCreate(&stream);
  const int fds0 = entries("/proc/self/fd"), threads0 = entries("/proc/self/task");
  if (s.ok()) s = Communicator::initFromEnvironment(&comm);
  if (!s.ok()) {
    std::printf("FAILED rank=-1 step=-1 t=%lld: set-up: %s\n", nowNs(), s.toString().c_str());
    return 1;
  }
  const int rank = comm->rank(), size = comm->size();
  auto left = [&] {
    std::printf("LEFT rank=%d fds=%+d threads=%+d\n", rank, entries("/proc/self/fd") - fds0,
                entries("/proc/self/task") - threads0);
    std::fflush(stdout);
  };
  auto* data = static_cast<float*>(buffer);
  std::vector<double> ms;
  std::printf("START rank=%d t=%lld\n", rank, nowNs());
  std::fflush(stdout);
  for (int k = 0; k < steps; ++k) {
    for (std::size_t i = 0; i < count; ++i) data[i] = input(rank, i, k);
    const long long t0 = nowNs();
    s = comm->allReduce(data, data, count, DataType::kFloat32, ReduceOp::kSum, stream);
    if (s.ok()) s = rt::streamSynchronize(stream);
    const long long t1 = nowNs();
    if (!s.ok()) {
      std::printf("FAILED rank=%d step=%d t=%lld: %s\n", rank, k, t1, s.toString().c_str());
      std::fflush(stdout);
      (void)Communicator::destroy(std::move(comm), /*abortPending=*/true);
      left();
      return 1;
    }
    ms.push_back(static_cast<double>(t1 - t0) / 1e6);
    for (std::size_t i = 0; i < count; ++i) {
      float want = 0;
      for (int r = 0; r < size; ++r) want += input(r, i, k);
      if (data[i] != want) {
        std::printf("FAILED rank=%d step=%d t=%lld: element %zu is %g, want %g\n", rank, k, t1, i,
                    static_cast<double>(data[i]), static_cast<double>(want));
        std::fflush(stdout);
        (void)Communicator::destroy(std::move(comm), /*abortPending=*/true);
        left();
        return 1;
      }
    }
  }
  const auto slowest = std::max_element(ms.begin(), ms.end());
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  std::printf("DONE rank=%d steps=%d median_ms=%.1f max_ms=%.1f max_step=%d\n", rank, steps,
              sorted[sorted.size() / 2], *slowest, static_cast<int>(slowest - ms.begin()));
  (void)Communicator::destroy(std::move(comm), false);
  left();
  (void)rt::streamDestroy(stream);
  (void)rt::deviceFree(buffer);
  return 0;
}
