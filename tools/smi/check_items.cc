// The machine-level items of `cohort-smi check`: versions, configuration,
// /dev/shm, limits and ports. Each item measures, compares with what the job
// needs, and on failure says what to change.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <regex>

#include "cohort/version.h"
#include "common/config.h"
#include "common/version.h"
#include "tools/smi/self_check.h"

namespace cohort::smi {

namespace {

std::string mibText(std::uint64_t bytes) { return fmt::format("{} MiB", bytes >> 20); }

// Descriptors of one rank: the store, memory segments, logs and the like, plus
// the sockets to every peer (tcp to other machines; shm peers need none after
// setup, but a rank may not know which is which before it starts).
constexpr std::uint64_t kBaseFiles = 64;
// Threads of one rank: streams' workers, callback runners, the store and the
// transports' I/O threads.
constexpr std::uint64_t kThreadsPerRank = 32;

std::string limitText(rlim_t value) {
  return value == RLIM_INFINITY ? "unlimited" : std::to_string(value);
}

}  // namespace

CheckItem checkVersions() {
  const VersionInfo v = loadedVersion();
  const std::string detail = fmt::format("library {}, API {}, protocol {}", v.library,
                                         apiVersionString(v.apiVersion), v.protocolVersion);
  const Status s = checkApiVersion();
  if (!s.ok()) {
    return fail("versions", detail + ": " + s.message(),
                "install the Cohort runtime the programs were built against (every machine of "
                "a job needs the same library and protocol version)");
  }
  return ok("versions", detail + " (every rank of a job must run this same version)");
}

std::vector<CheckItem> checkConfiguration(const std::map<std::string, std::string>& env) {
  const Config config = Config::parse(env);
  std::vector<CheckItem> items;
  static const std::regex kVariable("environment variable ([A-Z0-9_]+)");
  for (const auto& error : config.errors) {
    std::smatch m;
    const std::string name = std::regex_search(error, m, kVariable) ? m[1].str() : "it";
    items.push_back(
        fail("configuration", error, fmt::format("set {} to a valid value, or unset it", name)));
  }
  for (const auto& warning : config.warnings) {
    items.push_back(CheckItem{"configuration", CheckStatus::kWarn, warning, ""});
  }
  if (config.errors.empty()) {
    items.insert(
        items.begin(),
        ok("configuration",
           fmt::format("{} COHORT_*/HCCL_*/ASCEND_* variable(s) set, all valid", env.size())));
  }
  return items;
}

CheckItem checkShm(const std::string& dir, std::uint64_t jobMemory) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0) {
    return fail(dir, fmt::format("{}: {}", dir, std::strerror(errno)),
                "mount a tmpfs there (mount -t tmpfs tmpfs " + dir + ")");
  }
  std::string probe = dir + "/cohort-check-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    return fail(dir, fmt::format("cannot create a file in {}: {}", dir, std::strerror(errno)),
                "make " + dir + " writable (mode 1777) for the job's user");
  }
  close(fd);
  unlink(probe.c_str());
  const std::uint64_t free = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  const std::uint64_t total = static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize;
  const std::string detail = fmt::format("{} free of {}", mibText(free), mibText(total));
  if (jobMemory == 0) return ok(dir, detail + " (give --job-memory to compare with the job)");
  if (free < jobMemory) {
    return fail(dir, fmt::format("{}, the job maps {}", detail, mibText(jobMemory)),
                fmt::format("enlarge it (mount -o remount,size={}M {}; containers: --shm-size) "
                            "or map less (COHORT_DEVICE_MEMORY, fewer ranks)",
                            (total + jobMemory - free + (1u << 20) - 1) >> 20, dir));
  }
  return ok(dir, fmt::format("{}, the job maps {}", detail, mibText(jobMemory)));
}

std::vector<CheckItem> checkLimits(int ranks, int localRanks, int socketsPerPeer) {
  std::vector<CheckItem> items;
  rlimit files{}, procs{};
  getrlimit(RLIMIT_NOFILE, &files);
  getrlimit(RLIMIT_NPROC, &procs);
  const std::uint64_t needFiles =
      kBaseFiles + static_cast<std::uint64_t>(std::max(ranks - 1, 0)) * (socketsPerPeer + 1);
  const std::string filesDetail =
      fmt::format("{} open files per process (need {} for {} ranks, {} socket(s) per peer)",
                  limitText(files.rlim_cur), needFiles, ranks, socketsPerPeer);
  if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur < needFiles) {
    items.push_back(fail("ulimit -n", filesDetail,
                         fmt::format("ulimit -n {} (or LimitNOFILE= in the service, nofile in "
                                     "/etc/security/limits.conf; hard limit {})",
                                     needFiles, limitText(files.rlim_max))));
  } else {
    items.push_back(ok("ulimit -n", filesDetail));
  }
  const std::uint64_t needProcs = kThreadsPerRank * static_cast<std::uint64_t>(localRanks) + 64;
  const std::string procsDetail =
      fmt::format("{} processes and threads per user (need {} for {} rank(s) here)",
                  limitText(procs.rlim_cur), needProcs, localRanks);
  if (procs.rlim_cur != RLIM_INFINITY && procs.rlim_cur < needProcs) {
    items.push_back(fail("ulimit -u", procsDetail,
                         fmt::format("ulimit -u {} (or nproc in /etc/security/limits.conf, "
                                     "TasksMax= for services)",
                                     needProcs)));
  } else {
    items.push_back(ok("ulimit -u", procsDetail));
  }
  return items;
}

CheckItem checkPorts(int basePort) {
  constexpr int kCount = 32;  // the range the rendezvous tries (transport/control)
  std::vector<int> taken;
  for (int port = basePort; port < basePort + kCount; ++port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) taken.push_back(port);
    close(fd);
  }
  const std::string range = fmt::format("{}-{}", basePort, basePort + kCount - 1);
  const std::string detail = fmt::format("{} of {} ports free in {} (COHORT_IF_BASE_PORT)",
                                         kCount - static_cast<int>(taken.size()), kCount, range);
  if (!taken.empty() && taken.front() == basePort) {
    return fail("ports",
                fmt::format("{}; port {} is in use, and rank tables rendezvous on it; in use: {}",
                            detail, basePort, fmt::join(taken, ",")),
                fmt::format("stop what listens there (ss -ltnp 'sport = :{}') or set "
                            "COHORT_IF_BASE_PORT to a free range",
                            basePort));
  }
  if (!taken.empty()) {
    return CheckItem{"ports", CheckStatus::kWarn,
                     fmt::format("{}; in use: {}", detail, fmt::join(taken, ",")), ""};
  }
  return ok("ports", detail);
}

}  // namespace cohort::smi
