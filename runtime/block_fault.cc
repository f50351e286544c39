// A fault of a kernel's block (an invalid access, a bus error, a division by zero, an
// illegal instruction) is an AI Core exception on a device: the kernel fails, the
// process goes on. Here a signal handler turns such a signal, raised on a thread
// while it runs a block, into a jump back to the block's caller.
#include <fmt/format.h>

#include <csetjmp>
#include <csignal>
#include <mutex>

#include "common/error.h"
#include "runtime/core_pool.h"

namespace cohort::runtime {
namespace {

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

// The dispositions there were before ours, by signal; written once, before ours is
// installed.
struct sigaction gPreviousActions[NSIG];

// Set while this thread runs a block: where a fault returns to.
thread_local sigjmp_buf* tBlockJump = nullptr;
thread_local int tFaultSignal = 0;
thread_local const void* tFaultAddress = nullptr;

void onFault(int signal, siginfo_t* info, void* context) {
  if (sigjmp_buf* jump = tBlockJump) {
    tBlockJump = nullptr;
    tFaultSignal = signal;
    tFaultAddress = info != nullptr ? info->si_addr : nullptr;
    siglongjmp(*jump, 1);
  }
  // Not a block's fault: the disposition there was before takes it.
  const struct sigaction& previous = gPreviousActions[signal];
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
    return;
  }
  // Restored, it acts when the faulting instruction runs again; a signal that was
  // sent (no instruction to run again) is raised again.
  sigaction(signal, &previous, nullptr);
  if (info == nullptr || info->si_code <= 0) raise(signal);
}

void installFaultHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = onFault;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    for (int signal : kFaultSignals) sigaction(signal, &action, &gPreviousActions[signal]);
  });
}

const char* faultName(int signal) {
  switch (signal) {
    case SIGSEGV: return "an invalid memory access (SIGSEGV)";
    case SIGBUS: return "a bus error (SIGBUS)";
    case SIGFPE: return "an arithmetic fault (SIGFPE)";
    case SIGILL: return "an illegal instruction (SIGILL)";
    default: return "a fault";
  }
}

// Clears the jump when the block returns or throws (a fault clears it itself).
struct BlockJumpScope {
  explicit BlockJumpScope(sigjmp_buf* jump) { tBlockJump = jump; }
  ~BlockJumpScope() { tBlockJump = nullptr; }
  BlockJumpScope(const BlockJumpScope&) = delete;
  BlockJumpScope& operator=(const BlockJumpScope&) = delete;
};

}  // namespace

Status runBlockCatchingFaults(const BlockFunction& block, std::uint32_t index,
                              std::uint32_t blocks, const std::string& name) {
  installFaultHandlers();
  sigjmp_buf jump;
  if (sigsetjmp(jump, /*savemask=*/1) != 0) {
    return makeError(ErrorCode::kKernelFault,
                     "AI Core exception in kernel {} block {} of {}: {} at address {} (the "
                     "block's own cleanup did not run)",
                     name, index, blocks, faultName(tFaultSignal), fmt::ptr(tFaultAddress));
  }
  const BlockJumpScope scope(&jump);
  return block(index);
}

}  // namespace cohort::runtime
