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
  // Fields 3-9: state, ppid, pgrp, session, tty_nr, tpgid, flags. A process that
  // exits (killed or not) closes its sockets before it turns zombie, but after the
  // kernel marks it exiting: a peer that saw the sockets close must see it ended.
  char state = 0;
  int ppid = 0, pgrp = 0, session = 0, tty = 0, tpgid = 0;
  unsigned flags = 0;
  if (std::sscanf(end + 2, "%c %d %d %d %d %d %u", &state, &ppid, &pgrp, &session, &tty, &tpgid,
                  &flags) != 7) {
    return false;
  }
  constexpr unsigned kExiting = 0x4;  // PF_EXITING
  return state == 'Z' || state == 'X' || (flags & kExiting) != 0;
}

}  // namespace cohort
