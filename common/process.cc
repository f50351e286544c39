#include "common/process.h"

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cohort {

bool processEnded(pid_t pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  // /proc/PID/stat: "PID (COMM) STATE ...", COMM may hold spaces and parentheses.
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return errno == ENOENT;
  char line[512];
  const std::size_t n = std::fread(line, 1, sizeof(line) - 1, f);
  std::fclose(f);
  line[n] = '\0';
  const char* end = std::strrchr(line, ')');
  if (end == nullptr || end[1] != ' ') return false;
  return end[2] == 'Z' || end[2] == 'X';
}

}  // namespace cohort
