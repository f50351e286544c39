// Rank output, line by line: each complete line goes to cohortrun's stdout or
// stderr with the rank's prefix ("[3] "), and unprefixed to the rank's log file.
#pragma once

#include <cstddef>
#include <string>

namespace cohort::launcher {

/// Writes all of `data` to `fd`, retrying short writes; gives up silently on an
/// error (a closed terminal or pipe must not stop the job).
void writeAll(int fd, const char* data, std::size_t size);
inline void writeAll(int fd, const std::string& text) { writeAll(fd, text.data(), text.size()); }

/// One stream of one rank. Does not own the descriptors. Not thread-safe.
class LineRelay {
 public:
  /// A line longer than this is passed on in pieces of this size.
  static constexpr std::size_t kMaxLine = 64 * 1024;

  /// `logFd` < 0: no log file.
  LineRelay(std::string prefix, int outFd, int logFd)
      : prefix_(std::move(prefix)), outFd_(outFd), logFd_(logFd) {}

  /// Passes on every complete line in `data` (and keeps the rest).
  void feed(const char* data, std::size_t size);
  /// Passes on a last line without its newline, ending it with one.
  void finish();

 private:
  void emit(const char* line, std::size_t size);

  std::string prefix_;
  int outFd_;
  int logFd_;
  std::string pending_;
};

}  // namespace cohort::launcher
