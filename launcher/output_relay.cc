// One write() per prefixed line, so lines of different ranks never interleave
// inside a line (pipes keep writes up to PIPE_BUF whole; terminals in practice).
#include "launcher/output_relay.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cohort::launcher {

void writeAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void LineRelay::feed(const char* data, std::size_t size) {
  while (size > 0) {
    const void* nl = std::memchr(data, '\n', size);
    const std::size_t take =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - data) + 1 : size;
    pending_.append(data, take);
    data += take;
    size -= take;
    if (nl != nullptr) {
      emit(pending_.data(), pending_.size());
      pending_.clear();
    }
    while (pending_.size() >= kMaxLine) {
      std::string piece = pending_.substr(0, kMaxLine) + "\n";
      emit(piece.data(), piece.size());
      pending_.erase(0, kMaxLine);
    }
  }
}

void LineRelay::finish() {
  if (pending_.empty()) return;
  pending_ += '\n';
  emit(pending_.data(), pending_.size());
  pending_.clear();
}

void LineRelay::emit(const char* line, std::size_t size) {
  std::string out;
  out.reserve(prefix_.size() + size);
  out.append(prefix_).append(line, size);
  writeAll(outFd_, out);
  if (logFd_ >= 0) writeAll(logFd_, line, size);
}

}  // namespace cohort::launcher
