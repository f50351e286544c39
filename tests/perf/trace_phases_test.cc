// cohort-trace phases on a made-up timeline whose times are known: which wait
// is the calling stream's, what counts as arrival, how parts split at barriers,
// and the errors for a folder without traces.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "perf/perf_job.h"

namespace cohort::perf::test {
namespace {

std::string freshDir(const std::string& name) {
  const std::string dir = "/tmp/cohort_phases_" + std::to_string(getpid()) + "_" + name;
  EXPECT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  return dir;
}

std::string span(const char* cat, const char* name, int tid, double ts, double dur) {
  std::ostringstream s;
  s << R"({"ph":"X","cat":")" << cat << R"(","name":")" << name << R"(","pid":7,"tid":)" << tid
    << R"(,"ts":)" << ts << R"(,"dur":)" << dur << "}";
  return s.str();
}

// The table row of `part` (its fields split at spaces), or empty.
std::vector<std::string> row(const std::string& out, const std::string& part) {
  for (const std::string& line : splitLines(out)) {
    std::istringstream in(line);
    std::vector<std::string> fields;
    for (std::string f; in >> f;) fields.push_back(f);
    if (fields.size() == 10 && fields[0] == part) return fields;
  }
  return {};
}

// Thread 10 runs the collectives, thread 20 is the calling stream, thread 30 a
// stream that waits for what the caller does next (its wait spans the second
// collective too, but ends later: not the caller's).
TEST(TracePhases, SumsHandOffArrivalWorkAndReturnPerPart) {
  const std::string dir = freshDir("sums");
  const std::vector<std::string> events = {
      R"({"ph":"M","name":"process_name","pid":7,"args":{"name":"rank 3"}})",
      // Part 0: a collective on the caller's own thread: all work, no hand-off.
      span("collective", "allreduce #1 (8 x float, sum)", 10, 1000, 1000),
      span("enqueue", "barrier", 99, 5000, 1),
      // Part 1: 1000 us hand-off, 2000 us arrival, 1000 us work, 500 us return.
      span("stream", "event wait", 20, 9000, 4500),
      span("stream", "event wait", 30, 9500, 10500),
      span("collective", "allreduce #2 (8 x float, sum)", 10, 10000, 3000),
      span("mesh", "arrival", 10, 10500, 2000),
      // 5000 us hand-off, 400 us work, 600 us return; the arrival after it is not its.
      span("stream", "event wait", 20, 25000, 6000),
      span("collective", "allgather #3 (8 x float)", 10, 30000, 400),
      span("mesh", "arrival", 10, 31000, 1000),
  };
  std::ofstream file(dir + "/cohort-trace-7.json");
  file << R"({"traceEvents":[)";
  for (std::size_t i = 0; i < events.size(); ++i) file << (i ? ",\n" : "") << events[i];
  file << "]}\n";
  file.close();
  std::ofstream(dir + "/cohort-trace-8.json") << "not json\n";

  const JobResult r = runShell(std::string(COHORT_TRACE_BIN) + " phases " + dir);
  ASSERT_EQ(r.exitCode(), 0) << r.allErrors();
  const std::string& out = r.out[0];
  EXPECT_NE(out.find("\nrank 3\n"), std::string::npos) << out;
  EXPECT_NE(r.err[0].find("cohort-trace-8.json is not a Cohort trace (skipped)"), std::string::npos)
      << r.err[0];
  // part, calls, then ms (us per call) for hand-off, arrival, work, return.
  EXPECT_EQ(row(out, "0"), (std::vector<std::string>{"0", "1", "0.0", "(0.0)", "0.0", "(0.0)",
                                                     "1.0", "(1000.0)", "0.0", "(0.0)"}))
      << out;
  EXPECT_EQ(row(out, "1"), (std::vector<std::string>{"1", "2", "6.0", "(3000.0)", "2.0", "(1000.0)",
                                                     "1.4", "(700.0)", "1.1", "(550.0)"}))
      << out;

  // --split "": one part for the whole timeline.
  const JobResult whole = runShell(std::string(COHORT_TRACE_BIN) + " phases --split '' " + dir);
  ASSERT_EQ(whole.exitCode(), 0) << whole.allErrors();
  EXPECT_EQ(row(whole.out[0], "0"),
            (std::vector<std::string>{"0", "3", "6.0", "(2000.0)", "2.0", "(666.7)", "2.4",
                                      "(800.0)", "1.1", "(366.7)"}))
      << whole.out[0];
  EXPECT_TRUE(row(whole.out[0], "1").empty()) << whole.out[0];
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

TEST(TracePhases, AFolderWithoutTracesIsAnErrorNamingIt) {
  const std::string dir = freshDir("empty");
  const JobResult r = runShell(std::string(COHORT_TRACE_BIN) + " phases " + dir);
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_NE(r.err[0].find("no cohort-trace-*.json in " + dir + " (was COHORT_TRACE set?)"),
            std::string::npos)
      << r.err[0];
  const JobResult missing = runShell(std::string(COHORT_TRACE_BIN) + " phases " + dir + "/none");
  EXPECT_EQ(missing.exitCode(), 1);
  EXPECT_NE(missing.err[0].find("cannot read " + dir + "/none"), std::string::npos)
      << missing.err[0];
  EXPECT_EQ(std::system(("rm -rf " + dir).c_str()), 0);
}

}  // namespace
}  // namespace cohort::perf::test
