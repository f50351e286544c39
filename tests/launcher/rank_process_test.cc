// Starting one rank: program lookup, environment merge, pipes, process group,
// closed descriptors, exec failures.
#include "launcher/rank_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "test_util.h"

namespace cohort::launcher {
namespace {

// Reads both streams to EOF, then reaps; returns the wait status.
int collect(const RankProcess& p, std::string* out, std::string* err) {
  int fds[2] = {p.stdoutFd, p.stderrFd};
  std::string* sinks[2] = {out, err};
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd pfd[2] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}};
    ::poll(pfd, 2, 5000);
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0 || pfd[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i], buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EAGAIN) {
        ::close(fds[i]);
        fds[i] = -1;
      }
    }
  }
  int status = 0;
  ::waitpid(p.pid, &status, 0);
  return status;
}

TEST(RankProcessTest, ResolvesProgramsLikeExecvp) {
  std::string path;
  ASSERT_OK(resolveProgram("sh", "/nonexistent-dir:/bin:/usr/bin", &path));
  EXPECT_EQ(path, "/bin/sh");
  ASSERT_OK(resolveProgram("/bin/sh", "", &path));
  EXPECT_EQ(path, "/bin/sh");
  EXPECT_ERROR(resolveProgram("no-such-program-xyz", "/bin:/usr/bin", &path), kInvalidArgument,
               "'no-such-program-xyz': command not found (searched PATH)");
  const std::string plain = ::testing::TempDir() + "rank_process_plain_file";
  std::ofstream(plain) << "data";
  ::chmod(plain.c_str(), 0644);
  EXPECT_ERROR(resolveProgram(plain, "", &path), kInvalidArgument,
               "'" + plain + "' is not an executable file");
  EXPECT_ERROR(resolveProgram("/tmp", "", &path), kInvalidArgument, "not an executable file");
  EXPECT_ERROR(resolveProgram("", "/bin", &path), kInvalidArgument, "empty program name");
}

TEST(RankProcessTest, MergesTheEnvironment) {
  std::string a = "A=1", b = "B=2", c = "C";
  char* base[] = {a.data(), b.data(), c.data(), nullptr};
  EXPECT_EQ(mergeEnvironment(base, {{"B", "3"}, {"D", "4"}}),
            (std::vector<std::string>{"A=1", "C", "B=3", "D=4"}));
}

TEST(RankProcessTest, RunsWithPipesItsOwnGroupAndOnlyStandardDescriptors) {
  const int leaked = ::open("/dev/null", O_RDONLY);  // not close-on-exec: must not leak
  ASSERT_GE(leaked, 3);
  const std::string script =
      "echo out $FOO; echo err >&2; cat; test -e /proc/$$/fd/" + std::to_string(leaked) +
      " && echo leaked || echo closed; ps -o pgid= -p $$ 2>/dev/null || cut -d' ' -f5 "
      "/proc/$$/stat; exit 5";
  RankProcess p;
  ASSERT_OK(spawnRank("/bin/sh", {"sh", "-c", script}, {"FOO=bar", "PATH=/usr/bin:/bin"}, &p));
  ::close(leaked);
  std::string out, err;
  const int status = collect(p, &out, &err);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 5);
  EXPECT_EQ(out.rfind("out bar\nclosed\n", 0), 0u) << out;  // stdin is /dev/null: cat ends
  EXPECT_NE(out.find(std::to_string(p.pid)), std::string::npos) << "pgid = pid: " << out;
  EXPECT_EQ(err, "err\n");
}

TEST(RankProcessTest, AProgramThatCannotBeExecutedIsAnError) {
  const std::string path = ::testing::TempDir() + "rank_process_not_a_program";
  std::ofstream(path) << "\x7f"
                         "ELF garbage";
  ::chmod(path.c_str(), 0755);
  RankProcess p;
  EXPECT_ERROR(spawnRank(path, {path}, {}, &p), kSystemError, "cannot execute '" + path + "'");
  EXPECT_EQ(p.pid, -1);
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "the failed child was reaped";
}

}  // namespace
}  // namespace cohort::launcher
