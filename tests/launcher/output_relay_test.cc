// Line splitting, prefixes, partial and over-long lines, log copies.
#include "launcher/output_relay.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

namespace cohort::launcher {
namespace {

// A temporary file's descriptor and everything written to it.
class Sink {
 public:
  Sink() : file_(std::tmpfile()) {}
  ~Sink() { std::fclose(file_); }
  int fd() const { return ::fileno(file_); }
  std::string text() const {
    std::string out(static_cast<std::size_t>(::lseek(fd(), 0, SEEK_END)), '\0');
    ::pread(fd(), out.data(), out.size(), 0);
    return out;
  }

 private:
  FILE* file_;
};

void feed(LineRelay& relay, const std::string& s) { relay.feed(s.data(), s.size()); }

TEST(OutputRelayTest, PrefixesCompleteLinesAndKeepsTheRest) {
  Sink out, log;
  LineRelay relay("[3] ", out.fd(), log.fd());
  feed(relay, "hel");
  EXPECT_EQ(out.text(), "") << "no line before its newline";
  feed(relay, "lo\nwor");
  EXPECT_EQ(out.text(), "[3] hello\n");
  feed(relay, "ld\n\nx\ntail");
  relay.finish();
  EXPECT_EQ(out.text(), "[3] hello\n[3] world\n[3] \n[3] x\n[3] tail\n");
  EXPECT_EQ(log.text(), "hello\nworld\n\nx\ntail\n");
  relay.finish();
  EXPECT_EQ(out.text(), "[3] hello\n[3] world\n[3] \n[3] x\n[3] tail\n") << "nothing pending";
}

TEST(OutputRelayTest, WithoutLogFile) {
  Sink out;
  LineRelay relay("[0] ", out.fd(), -1);
  feed(relay, "a\nb");
  relay.finish();
  EXPECT_EQ(out.text(), "[0] a\n[0] b\n");
}

TEST(OutputRelayTest, OverLongLinesArePassedOnInPieces) {
  Sink out;
  LineRelay relay("[1] ", out.fd(), -1);
  const std::string big(LineRelay::kMaxLine * 2 + 10, 'z');
  feed(relay, big);
  const std::string piece = "[1] " + std::string(LineRelay::kMaxLine, 'z') + "\n";
  EXPECT_EQ(out.text(), piece + piece);
  feed(relay, "\n");
  EXPECT_EQ(out.text(), piece + piece + "[1] " + std::string(10, 'z') + "\n");
}

TEST(OutputRelayTest, WriteAllSurvivesAClosedPipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  ::signal(SIGPIPE, SIG_IGN);
  writeAll(fds[1], "lost\n");  // EPIPE: returns instead of looping or dying
  ::close(fds[1]);
  SUCCEED();
}

}  // namespace
}  // namespace cohort::launcher
