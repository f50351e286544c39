// Loading files: the "initializing" re-read loop, unreadable files, format
// detection.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "tests/ranktable/ranktable_test_util.h"

namespace cohort::ranktable {
namespace {

using std::chrono::milliseconds;
using test::dataPath;
using Clock = std::chrono::steady_clock;

std::string readText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// A scratch file, removed at the end of the test.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name)
      : path_(::testing::TempDir() + "/" + std::to_string(::getpid()) + "_" + name) {}
  ~ScratchFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

long elapsedMs(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
}

LoadOptions waitingOptions(int timeoutMs) {
  LoadOptions options = test::quietOptions();
  options.timeoutMs = timeoutMs;
  options.pollIntervalMs = 20;
  return options;
}

TEST(Initializing, ParseSaysNotReady) {
  Diagnostics diagnostics;
  ClusterSpec spec;
  const Status status = parseRankTableJson(readText(dataPath("initializing.json")),
                                           test::quietOptions(), &spec, &diagnostics);
  EXPECT_EQ(status.code(), ErrorCode::kNotReady);
  const Diagnostic* d = diagnostics.findError(Rule::kStatusInitializing);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->location.pointer, "/status");
  EXPECT_EQ(d->found, "\"initializing\"");
}

// The controller replaces the file (write + rename) while the loader waits.
TEST(Initializing, LoaderWaitsUntilTheFileIsCompleted) {
  ScratchFile file("waits.json");
  ScratchFile next("waits.json.next");
  writeText(file.path(), readText(dataPath("initializing.json")));
  std::thread controller([&] {
    std::this_thread::sleep_for(milliseconds(300));
    writeText(next.path(), readText(dataPath("good_v1_0.json")));
    ASSERT_EQ(std::rename(next.path().c_str(), file.path().c_str()), 0);
  });
  const auto start = Clock::now();
  ClusterSpec spec;
  Diagnostics diagnostics;
  const Status status = loadClusterFile(file.path(), waitingOptions(20000), &spec, &diagnostics);
  controller.join();
  EXPECT_TRUE(status.ok()) << status.toString();
  EXPECT_GE(elapsedMs(start), 250);
  EXPECT_EQ(spec.rankCount(), 4);
}

// The controller rewrites the file in place, in two steps: a reader can see a
// half-written file (a JSON syntax error), which must be re-read, not rejected.
TEST(Initializing, HalfWrittenFileIsReadAgain) {
  ScratchFile file("inplace.json");
  writeText(file.path(), readText(dataPath("initializing.json")));
  const std::string full = readText(dataPath("good_v1_2.json"));
  std::thread controller([&] {
    std::this_thread::sleep_for(milliseconds(200));
    std::ofstream out(file.path(), std::ios::trunc);
    out << full.substr(0, full.size() / 2) << std::flush;
    std::this_thread::sleep_for(milliseconds(200));
    out << full.substr(full.size() / 2) << std::flush;
  });
  ClusterSpec spec;
  const Status status = loadClusterFile(file.path(), waitingOptions(20000), &spec);
  controller.join();
  EXPECT_TRUE(status.ok()) << status.toString();
  EXPECT_EQ(spec.rankCount(), 4);
}

TEST(Initializing, TimesOut) {
  const auto start = Clock::now();
  ClusterSpec spec;
  Diagnostics diagnostics;
  const Status status =
      loadClusterFile(dataPath("initializing.json"), waitingOptions(300), &spec, &diagnostics);
  EXPECT_EQ(status.code(), ErrorCode::kTimeout) << status.toString();
  EXPECT_NE(status.message().find("not completed after 300 ms"), std::string::npos);
  EXPECT_GE(elapsedMs(start), 300);
  EXPECT_LT(elapsedMs(start), 10000);
  EXPECT_NE(diagnostics.findError(Rule::kStatusInitializing), nullptr);
}

TEST(Initializing, ZeroTimeoutReadsOnce) {
  const auto start = Clock::now();
  ClusterSpec spec;
  const Status status = loadClusterFile(dataPath("initializing.json"), waitingOptions(0), &spec);
  EXPECT_EQ(status.code(), ErrorCode::kTimeout);
  EXPECT_LT(elapsedMs(start), 1000);
}

TEST(Loader, MissingFileIsInvalidArgument) {
  Diagnostics diagnostics;
  ClusterSpec spec;
  const Status status =
      loadClusterFile(dataPath("no_such_table.json"), test::quietOptions(), &spec, &diagnostics);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  const Diagnostic* d = diagnostics.findError(Rule::kUnreadable);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->found, "No such file or directory");
  EXPECT_NE(status.message().find("no_such_table.json"), std::string::npos);
}

TEST(Loader, DirectoryIsInvalidArgument) {
  Diagnostics diagnostics;
  ClusterSpec spec;
  EXPECT_EQ(loadClusterFile(dataPath(""), test::quietOptions(), &spec, &diagnostics).code(),
            ErrorCode::kInvalidArgument);
  ASSERT_NE(diagnostics.findError(Rule::kUnreadable), nullptr);
  EXPECT_EQ(diagnostics.findError(Rule::kUnreadable)->found, "not a regular file");
}

TEST(Loader, DetectsTheFormat) {
  EXPECT_EQ(detectFormat("a.yaml", "{"), Format::kYaml);
  EXPECT_EQ(detectFormat("a.yml", ""), Format::kYaml);
  EXPECT_EQ(detectFormat("a.json", "servers: []"), Format::kJson);
  EXPECT_EQ(detectFormat("table", "  \n {\"status\": 1}"), Format::kJson);
  EXPECT_EQ(detectFormat("table", "servers:\n"), Format::kYaml);
}

TEST(Loader, FormatOptionOverridesTheExtension) {
  ScratchFile file("actually_yaml.json");
  writeText(file.path(), readText(dataPath("good_implicit_ranks.yaml")));
  LoadOptions options = test::quietOptions();
  ClusterSpec spec;
  EXPECT_EQ(loadClusterFile(file.path(), options, &spec).code(), ErrorCode::kParseError);
  options.format = Format::kYaml;
  EXPECT_TRUE(loadClusterFile(file.path(), options, &spec).ok());
  EXPECT_EQ(spec.rankCount(), 4);
}

TEST(Loader, OwnRankInTheTableIsAccepted) {
  LoadOptions options = test::quietOptions();
  options.ownRank = 3;
  ClusterSpec spec;
  EXPECT_TRUE(loadClusterFile(dataPath("good_v1_0.json"), options, &spec).ok());
}

TEST(Loader, FailuresBecomeTheThreadsLastError) {
  (void)takeLastError();
  ClusterSpec spec;
  EXPECT_FALSE(parseRankTableJson("{", test::quietOptions(), &spec).ok());
  EXPECT_EQ(takeLastError().code(), ErrorCode::kParseError);
}

}  // namespace
}  // namespace cohort::ranktable
