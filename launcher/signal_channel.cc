#include "launcher/signal_channel.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include "common/error.h"

namespace cohort::launcher {

Status SignalChannel::open(std::unique_ptr<SignalChannel>* out) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return systemError(errno, "sigprocmask");
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, nullptr);
  const int fd = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return systemError(errno, "signalfd");
  out->reset(new SignalChannel(fd));
  return Status::Ok();
}

SignalChannel::~SignalChannel() { ::close(fd_); }

int SignalChannel::next() {
  signalfd_siginfo info;
  ssize_t n;
  do {
    n = ::read(fd_, &info, sizeof(info));
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(info)) ? static_cast<int>(info.ssi_signo) : 0;
}

}  // namespace cohort::launcher
