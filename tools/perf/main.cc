// cohort-perf: nccl-tests/hccl_test-style benchmark of Cohort's collectives, in the
// format of ../shared/peers/ so that its lines compare one to one with OpenMPI's and
// Gloo's. One process per rank:
//
//   cohortrun -n 4 cohort-perf allreduce -b 1K -e 64M -f 4
//   mpirun -np 4 -x MASTER_ADDR=127.0.0.1 -x MASTER_PORT=29500 cohort-perf all -d all
//   cohortrun -n 8 cohort-perf allreduce --hccl -b 8K -e 64M -f 2 -d fp32 -o sum
//
// Exit status: 0 all checks passed, 3 wrong elements, 2 bad command line, 1 failure.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "cohort/communicator.h"
#include "tools/perf/options.h"
#include "tools/perf/report_files.h"
#include "tools/perf/report_text.h"
#include "tools/perf/sweep.h"

namespace cohort::perf {
namespace {

namespace rt = cohort::runtime;

int fail(const Communicator* comm, const Status& s) {
  std::fprintf(stderr, "cohort-perf: rank %d: %s\n", comm != nullptr ? comm->rank() : -1,
               s.toString().c_str());
  return 1;
}

// Errors of the command line that only the communicator's size reveals.
int checkAgainstJob(const PerfOptions& o, Communicator* comm) {
  const bool print = comm->rank() == 0;
  if (o.root >= comm->size()) {
    if (print)
      std::fprintf(stderr, "cohort-perf: -r %d: root must be below %d ranks\n", o.root,
                   comm->size());
    return 2;
  }
  const bool sendrecv =
      std::find(o.collectives.begin(), o.collectives.end(), Coll::kSendRecv) != o.collectives.end();
  if (!o.allCollectives && sendrecv && comm->size() < 2) {
    if (print) std::fprintf(stderr, "cohort-perf: sendrecv needs at least 2 ranks\n");
    return 2;
  }
  int devices = 0;
  if (o.npus > 0 && rt::getDeviceCount(&devices).ok() && o.npus > devices) {
    if (print)
      std::fprintf(stderr, "cohort-perf: -p %d: this node has %d devices\n", o.npus, devices);
    return 2;
  }
  // -A NAME with several collectives is set per block (it may not apply to all).
  std::string spec = o.algorithm;
  const bool perBlock = o.collectives.size() > 1 && spec.find('=') == std::string::npos;
  if (!spec.empty() && !perBlock) {
    if (spec.find('=') == std::string::npos) spec = cliName(o.collectives[0]) + ("=" + spec);
    Status s = comm->setAlgorithm(spec);
    if (!s.ok()) {
      if (print)
        std::fprintf(stderr, "cohort-perf: -A %s: %s\n", o.algorithm.c_str(), s.message().c_str());
      return 2;
    }
  }
  return -1;
}

RunInfo makeRunInfo(const PerfOptions& o, const Communicator& comm, const std::string& choice) {
  const VersionInfo v = loadedVersion();
  RunInfo info;
  info.libraryVersion = v.library;
  info.apiVersion = v.apiVersion;
  info.protocolVersion = v.protocolVersion;
  info.nranks = comm.size();
  info.nodes = comm.nodeCount();
  info.localRanks = comm.localSize();
  info.device = comm.device();
  info.choice = choice;
  // "allreduce=mesh shm" -> "shm"; -L overrides (the peers' label flag).
  const auto space = choice.rfind(' ');
  info.transport = !o.label.empty()             ? o.label
                   : space == std::string::npos ? "-"
                                                : choice.substr(space + 1);
  return info;
}

int runBenchmark(const PerfOptions& o, Communicator* comm, rt::Stream* stream) {
  Sweep sweep(comm, stream, o);
  Status s = sweep.prepare();
  std::string choice;
  if (s.ok()) s = sweep.probe(&choice);
  if (!s.ok()) return fail(comm, s);
  const RunInfo info = makeRunInfo(o, *comm, choice);
  const bool rank0 = comm->rank() == 0;
  TextReport report(o, rank0, isatty(STDERR_FILENO) == 1 && o.jsonPath.empty());
  report.header(info);
  std::vector<BlockResult> blocks = sweep.plan();
  long long wrong = 0;
  for (auto& block : blocks) {
    s = sweep.runBlock(&block, &report);
    if (!s.ok()) return fail(comm, s);
    wrong += block.wrong;
  }
  std::optional<StreamOverhead> overhead;
  if (o.streamOverhead) {
    overhead.emplace();
    s = sweep.measureStreamOverhead(&*overhead);
    if (!s.ok()) return fail(comm, s);
    report.streamOverhead(*overhead);
  }
  if (rank0 && !o.jsonPath.empty()) s = writeJson(o.jsonPath, o, info, blocks, overhead);
  if (s.ok() && rank0 && !o.plotPath.empty()) s = writeSvgPlot(o.plotPath, info, blocks);
  if (!s.ok()) return fail(comm, s);
  // No rank frees its buffers while a peer may still read them.
  s = sweep.barrier();
  if (!s.ok()) return fail(comm, s);
  return wrong > 0 ? 3 : 0;
}

// Joins the job, then benchmarks. Returns the exit status.
int run(int argc, char** argv) {
  PerfOptions options;
  const int parsed = parseOptions(argc, argv, &options);
  if (parsed >= 0) return parsed;
  // Before the first Cohort call: the configuration is read once.
  if (!options.transport.empty()) setenv("COHORT_TRANSPORT", options.transport.c_str(), 1);
  if (!options.traceDir.empty()) setenv("COHORT_TRACE", options.traceDir.c_str(), 1);
  std::unique_ptr<Communicator> comm;
  Status s = Communicator::initFromEnvironment(&comm);
  if (!s.ok()) {
    std::fprintf(stderr, "cohort-perf: cannot join the job: %s\n", s.toString().c_str());
    return 1;
  }
  int rc = checkAgainstJob(options, comm.get());
  if (rc >= 0) return rc;
  rt::Stream* stream = nullptr;
  s = rt::streamCreate(&stream);
  if (!s.ok()) return fail(comm.get(), s);
  rc = runBenchmark(options, comm.get(), stream);
  (void)rt::streamDestroy(stream);
  return rc;
}

}  // namespace
}  // namespace cohort::perf

int main(int argc, char** argv) { return cohort::perf::run(argc, argv); }
