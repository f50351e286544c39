// Faults at the start of a job and mismatched calls, with real processes over shm
// and over tcp: a rank with a wrong job token, a rank of another Cohort version,
// a rank-table rank that never starts, mismatched allreduce counts, and a device
// too small for the communicator's scratch memory; the mismatched calls with every
// launch mode. Every rank concerned fails with the right code and names the rank
// at fault, within a bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <tuple>

#include "cohort/version.h"
#include "reliability/rank_processes.h"

namespace cohort::testing {
namespace {

using namespace std::chrono_literals;

// Rank 0 serves the job's store: if it exited at once after failing, the others
// would lose the store before finding their own error. A failed rank stays up a
// while, as one that reports and waits for its launcher to stop the job.
const char* kLinger = "FAULT_WORKER_LINGER_MS=1500";

class StartFault : public ::testing::TestWithParam<std::string> {};
// The mismatched calls, per transport.
class MismatchFault : public ::testing::TestWithParam<std::string> {
 protected:
  static JobSpec spec(const char* mode) {
    JobSpec spec;
    spec.ranks = 3;
    spec.args = {mode};
    spec.transport = GetParam();
    return spec;
  }
};

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The store refuses the rank with another token; the others time out at the
// bootstrap (COHORT_CONNECT_TIMEOUT=3) naming it.
TEST_P(StartFault, WrongJobTokenIsRefusedAndNamedByTheOthers) {
  JobSpec spec;
  spec.ranks = 3;
  spec.args = {"loop", "4096"};
  spec.transport = GetParam();
  spec.env = {"COHORT_CONNECT_TIMEOUT=3", kLinger};
  spec.rankEnv[2] = {"COHORT_JOB_TOKEN=not-the-job-token"};
  const auto started = Clock::now();
  Job job(COHORT_FAULT_WORKER, spec);
  EXPECT_EQ(job.wait(2, 10s), 4) << job.log(2);
  const std::string refused = failureLine(job.log(2));
  EXPECT_TRUE(has(refused, "refused") || has(refused, "token")) << refused;
  for (int r : {0, 1}) {
    ASSERT_TRUE(job.waitFor(r, "FAILED code=", 10s)) << job.log(r);
    const double secs = Seconds(Clock::now() - started).count();
    EXPECT_EQ(job.wait(r, 10s), 4) << job.log(r);
    const std::string line = failureLine(job.log(r));
    EXPECT_EQ(failureCode(line), kTimeout) << line;
    EXPECT_TRUE(has(line, "rank(s) 2 never arrived")) << line;
    EXPECT_GT(secs, 2.5) << line;
    EXPECT_LT(secs, 6.0) << line;
  }
  EXPECT_EQ(job.leftBehind(), "");
}

// Rank 2 presents Cohort 0.(minor+1) with protocol +1 at the bootstrap: every
// real rank fails at connect naming both versions and both ranks.
TEST_P(StartFault, VersionSkewFailsEveryRankAtConnect) {
  JobSpec spec;
  spec.ranks = 3;
  spec.args = {"loop", "4096"};
  spec.rankArgs[2] = {"skew"};
  spec.transport = GetParam();
  spec.env = {kLinger};
  Job job(COHORT_FAULT_WORKER, spec);
  EXPECT_EQ(job.wait(2, 20s), 0) << job.log(2);
  const std::string mine = std::to_string(COHORT_VERSION_MAJOR) + "." +
                           std::to_string(COHORT_VERSION_MINOR) + "." +
                           std::to_string(COHORT_VERSION_PATCH);
  const std::string theirs = std::to_string(COHORT_VERSION_MAJOR) + "." +
                             std::to_string(COHORT_VERSION_MINOR + 1) + "." +
                             std::to_string(COHORT_VERSION_PATCH);
  for (int r : {0, 1}) {
    EXPECT_EQ(job.wait(r, 20s), 4) << job.log(r);
    const std::string line = failureLine(job.log(r));
    EXPECT_EQ(failureCode(line), kVersionMismatch) << line;
    EXPECT_TRUE(has(line, "rank " + std::to_string(r) + " runs Cohort " + mine)) << line;
    EXPECT_TRUE(has(line, "rank 2 runs Cohort " + theirs)) << line;
    EXPECT_TRUE(has(line, "protocol " + std::to_string(COHORT_PROTOCOL_VERSION) + ")")) << line;
    EXPECT_TRUE(has(line, "protocol " + std::to_string(COHORT_PROTOCOL_VERSION + 1) + ")")) << line;
  }
  EXPECT_EQ(job.leftBehind(), "");
}

// A rank table of 3 whose rank 2 never starts: ranks 0 and 1 fail after
// COHORT_CONNECT_TIMEOUT=3 naming rank 2 and where the table expects it.
TEST_P(StartFault, RankTableRankThatNeverStartsIsNamedWithItsAddress) {
  const std::string table = std::string(::testing::TempDir()) + "reliability_table_" +
                            std::to_string(getpid()) + "_" + GetParam() + ".json";
  {
    std::ofstream out(table);
    out << R"({"version": "1.0", "status": "completed", "server_count": "1", "server_list": [
      {"server_id": "node0", "host_ip": "127.0.0.1", "device": [
        {"device_id": "0", "device_ip": "192.168.100.1", "rank_id": "0"},
        {"device_id": "1", "device_ip": "192.168.100.2", "rank_id": "1"},
        {"device_id": "2", "device_ip": "192.168.100.3", "rank_id": "2"}]}]})";
  }
  JobSpec spec;
  spec.ranks = 3;
  spec.args = {"table", table};
  spec.rankArgument = true;
  spec.notStarted = {2};
  spec.transport = GetParam();
  spec.env = {"COHORT_CONNECT_TIMEOUT=3", kLinger};
  const auto started = Clock::now();
  Job job(COHORT_FAULT_WORKER, spec);
  for (int r : {0, 1}) {
    ASSERT_TRUE(job.waitFor(r, "FAILED code=", 10s)) << job.log(r);
    const double secs = Seconds(Clock::now() - started).count();
    EXPECT_EQ(job.wait(r, 10s), 4) << job.log(r);
    const std::string line = failureLine(job.log(r));
    EXPECT_EQ(failureCode(line), kTimeout) << line;
    EXPECT_TRUE(has(line, "rank 2 never joined")) << line;
    EXPECT_FALSE(has(line, "rank 0 never joined") || has(line, "rank 1 never joined")) << line;
    EXPECT_TRUE(has(line, "server 'node0', host_ip 127.0.0.1, device 2, device_ip 192.168.100.3"))
        << line;
    EXPECT_GT(secs, 2.5) << line;
    EXPECT_LT(secs, 6.0) << line;
  }
  EXPECT_EQ(job.leftBehind(), "");
  std::remove(table.c_str());
}

// Rank 2 passes a larger count: every rank fails with the parameter and both
// values, and no rank's buffer (or the guard after it) is written.
TEST_P(MismatchFault, MismatchedCountsFailEveryRankAndWriteNothing) {
  const auto started = Clock::now();
  Job job(COHORT_FAULT_WORKER, spec("mismatch"));
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(job.wait(r, 20s), 7) << job.log(r);
    const std::string log = job.log(r), line = failureLine(log);
    EXPECT_EQ(failureCode(line), kMismatch) << line;
    EXPECT_TRUE(has(line, "mismatched collective between rank " + std::to_string(r))) << line;
    EXPECT_TRUE(has(line, r == 2 ? "count: 1048832 vs 1048576" : "count: 1048576 vs 1048832"))
        << line;
    EXPECT_TRUE(has(log, "buffer and guard untouched")) << log;
    EXPECT_LT(secondsSince(job.rank(r), started), 15.0) << line;
  }
  EXPECT_EQ(job.leftBehind(), "");
}

// Runs fault_worker MODE on 3 ranks, rank 2 the odd one: every rank fails
// naming the difference (`one` or `other`) and writes nothing. Rank 2 fails
// with kMismatch; a rank that never exchanges arguments with it may fail with a
// remote error whose explanation (a peer's note, or its report over the
// connection) carries the difference.
void expectEveryRankNamesTheDifference(const JobSpec& spec, const std::string& one,
                                       const std::string& other) {
  Job job(COHORT_FAULT_WORKER, spec);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(job.wait(r, 20s), 7) << job.log(r);
    const std::string log = job.log(r), line = failureLine(log);
    const int code = failureCode(line);
    // (The explanation comes from the store's note or over the connection.)
    EXPECT_TRUE(code == kMismatch ||
                (code == kRemoteError &&
                 (has(line, "had failed first") || has(line, " reported: "))))
        << line;
    if (r == 2) {
      EXPECT_EQ(code, kMismatch) << line;
    }
    EXPECT_TRUE(has(line, "mismatched collective between rank ")) << line;
    EXPECT_TRUE(has(line, one) || has(line, other)) << line;
    EXPECT_TRUE(has(log, "buffer and guard untouched")) << log;
  }
  EXPECT_EQ(job.leftBehind(), "");
}

// The same with 400 bytes (rank 2: 656), where the first round travels with
// the argument check: the transfers fail on their sizes too, but every rank
// that exchanges arguments with rank 2 names the count; a rank that does not
// (recursive doubling over tcp pairs rank 2 with rank 1 only) fails with a
// remote error whose explanation carries it.
TEST_P(MismatchFault, SmallMismatchedCountsFailEveryRankWithTheCountAndWriteNothing) {
  expectEveryRankNamesTheDifference(spec("mismatch-small"), "count: 164 vs 100",
                                    "count: 100 vs 164");
}

// The same with 400 bytes, rank 2 passing int32 for float: the messages have the
// sizes every rank expects, so only the argument check keeps the data out of the
// buffers. The ranks that exchange arguments with rank 2 fail with the
// difference; a rank that does not (recursive doubling over tcp pairs rank 2 with
// rank 1 only) fails with a remote error whose explanation carries it.
TEST_P(MismatchFault, MismatchedTypesOfTheSameSizeFailEveryRankAndWriteNothing) {
  expectEveryRankNamesTheDifference(spec("mismatch-type"), "data type: int32 vs float",
                                    "data type: float vs int32");
}

// Rank 1's device holds 1 MiB: the communicator's scratch for a 4 MiB
// reduce-scatter from host memory cannot be allocated. Rank 1 fails with
// kOutOfMemory naming its device; its peers fail naming rank 1.
TEST_P(StartFault, TinyDeviceFailsWithOutOfMemoryAndPeersNameIt) {
  JobSpec spec;
  spec.ranks = 3;
  spec.args = {"oom"};
  spec.transport = GetParam();
  spec.env = {kLinger};  // rank 0 serves the store that explains a peer's departure
  spec.rankEnv[1] = {"COHORT_DEVICE_MEMORY=1M"};
  Job job(COHORT_FAULT_WORKER, spec);
  EXPECT_EQ(job.wait(1, 20s), 7) << job.log(1);
  const std::string victim = failureLine(job.log(1));
  EXPECT_EQ(failureCode(victim), kOutOfMemory) << victim;
  EXPECT_TRUE(has(victim, "rank 1: reducescatter #1")) << victim;
  EXPECT_TRUE(has(victim, "communicator scratch memory")) << victim;
  EXPECT_TRUE(has(victim, "device 1: cannot allocate")) << victim;
  const auto failedAt = job.rank(1).exitedAt;
  int namingRank1 = 0;
  std::string lines;
  for (int r : {0, 2}) {
    EXPECT_EQ(job.wait(r, 10s), 7) << job.log(r);
    const std::string line = failureLine(job.log(r));
    EXPECT_EQ(failureCode(line), kRemoteError) << line;
    EXPECT_LT(secondsSince(job.rank(r), failedAt), 5.5) << line;
    // "connection to rank 1 (...)", "remote rank 1 (process N) left", "rank 1 died".
    if (has(line, "rank 1 died") || has(line, "rank 1 (")) ++namingRank1;
    lines += "\n  rank " + std::to_string(r) + ": " + line;
  }
  // shm names the peer that died or left; over tcp a survivor that saw another one leave
  // names rank 1 through the note it left (see RunningJobFault.KilledRank...).
  EXPECT_EQ(namingRank1, 2) << lines;
  EXPECT_EQ(job.leftBehind(), "");
}

INSTANTIATE_TEST_SUITE_P(Transports, StartFault, ::testing::Values("shm", "tcp"));
INSTANTIATE_TEST_SUITE_P(Transports, MismatchFault, ::testing::Values("shm", "tcp"));

}  // namespace
}  // namespace cohort::testing
