// Starting the peer programs of the multi-process ACL tests (acl_ipc_mem_peer,
// acl_vmm_share_peer) with pipes to their standard input and output.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

extern char** environ;

namespace cohort::acltest {

/// Starts argv[0] (a null-terminated argv) with its stdin reading from *toChild and its
/// stdout writing to *fromChild; the child inherits neither end. Returns the child's pid,
/// or -1 when it could not start (then *toChild and *fromChild stay -1 if even the pipes
/// failed). The caller closes both ends and waits for the child.
inline pid_t spawnWithPipes(char* const argv[], int* toChild, int* fromChild) {
  *toChild = *fromChild = -1;
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], &fa, nullptr, argv, environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(in[0]);
  close(out[1]);
  *toChild = in[1];
  *fromChild = out[0];
  return pid;
}

}  // namespace cohort::acltest
