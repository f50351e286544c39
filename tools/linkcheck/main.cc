// cohort-linkcheck: checks every link between the ranks of a job before it is
// trusted with training. One process per rank:
//
//   cohortrun -n 8 cohort-linkcheck
//   mpirun -np 16 -x MASTER_ADDR=10.0.0.1 -x MASTER_PORT=29500 cohort-linkcheck --min-gbps 1
//   cohort-linkcheck --ranktable cluster.json --rank 3      (on each machine, by hand)
//
// Rank 0 prints N×N matrices of status, latency, bandwidth and spread and one
// line per link; every rank prints its own flagged links. Exit status: 0 every
// link ok, 1 a link is flagged (or the check is incomplete), 2 the check could
// not run here.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "common/config.h"
#include "common/log.h"
#include "tools/linkcheck/job_join.h"
#include "tools/linkcheck/link_check.h"
#include "tools/linkcheck/report_plot.h"
#include "tools/linkcheck/report_text.h"
#include "transport/netif.h"

namespace {

using namespace cohort::linkcheck;  // NOLINT(build/namespaces): the tool's own namespace
namespace ct = cohort::transport;

struct Options {
  JoinRequest join;
  CheckOptions check;
  std::string bandwidth = "4M";
  std::string json;
  std::string plot;
};

// The time bound, as --help states it (from limits::defaultTimeoutS).
std::string timeBoundText() {
  using cohort::linkcheck::limits::defaultTimeoutS;
  const int k = cohort::linkcheck::limits::kDefaultRepeat;
  return fmt::format(
      "Time bound: the verdict is printed within --timeout, and every rank exits within "
      "--timeout plus one link timeout. Without --timeout it grows linearly with the ranks: "
      "{:g} s + {:g} s x --repeat x (ranks - 1); with --repeat {}: {:g} s for 8 ranks, {:g} s for "
      "64, {:g} s for 1024. Probes run in rounds of disjoint pairs, never more at once on a node "
      "than its processors (COHORT_PROCESSORS, else the online ones) allow.",
      cohort::linkcheck::limits::kBaseTimeoutS, cohort::linkcheck::limits::kStepBudgetS, k,
      defaultTimeoutS(8, k), defaultTimeoutS(64, k), defaultTimeoutS(1024, k));
}

int usage(const std::string& what) {
  std::fprintf(stderr, "cohort-linkcheck: %s\n", what.c_str());
  return 2;
}

ct::PeerInfo selfInfo(const ct::JobToken& token, int rank) {
  ct::PeerInfo self;
  self.rank = rank;
  self.hostId = ct::localHostId();
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  self.hostname = host;
  self.pid = static_cast<std::int32_t>(::getpid());
  ct::NetInterface nic;
  if (ct::selectInterface(&nic).ok()) self.address = nic.address;
  const ct::Handshake local = ct::Handshake::local(ct::ChannelKind::kLinkCheck, token);
  self.libraryVersion = local.libraryVersion;
  self.protocolVersion = local.protocolVersion;
  return self;
}

int writeFile(const char* option, const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) return usage(fmt::format("cannot write {} {}", option, path));
  return 0;
}

// Rank 0 prints the whole report; the others only their own bad links.
int printReport(const Options& o, int rank, const CheckReport& report) {
  if (rank == 0) {
    std::fputs(formatReport(report).c_str(), stdout);
    std::fflush(stdout);
    if (!o.json.empty() && writeFile("--json", o.json, report.toJson()) != 0) return 2;
    if (!o.plot.empty() && writeFile("--plot", o.plot, plotSvg(report)) != 0) return 2;
  } else {
    for (const std::string& line : badLinkLines(report, rank)) {
      std::printf("cohort-linkcheck: %s\n", line.c_str());
    }
    for (const std::string& p : report.problems) std::printf("cohort-linkcheck: %s\n", p.c_str());
    if (!report.allGood()) {
      std::printf(
          "cohort-linkcheck: rank %d: %d of %zu links flagged in the job (rank 0 prints all)\n",
          rank, report.badLinks(), report.links.size());
    }
    std::fflush(stdout);  // before awaitVerdictReaders says so: a launcher may stop us then
  }
  return report.allGood() ? 0 : 1;
}

int run(const Options& o) {
  const cohort::Status config = cohort::Config::global().status();
  if (!config.ok()) return usage(config.toString());
  const cohort::Deadline joinBy =
      cohort::Deadline::after(std::chrono::duration_cast<cohort::Clock::duration>(
          std::chrono::duration<double>(o.check.effectiveLinkTimeoutS())));
  JobMembership job;
  cohort::Status s = joinJob(o.join, joinBy, &job);
  if (!s.ok()) return usage(s.toString());
  cohort::log::setRank(job.rank);
  CheckMember me;
  me.rank = job.rank;
  me.size = job.size;
  me.token = job.token;
  me.self = selfInfo(job.token, job.rank);
  me.table = job.table;
  CheckReport report;
  int code = 0;
  s = runLinkCheck(o.check, job.store, me, &report,
                   [&](const CheckReport& verdict) { code = printReport(o, 0, verdict); });
  if (!s.ok()) return usage(s.toString());
  if (job.rank != 0) code = printReport(o, job.rank, report);
  awaitVerdictReaders(job.store, report, job.rank, 5);
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "cohort-linkcheck: checks every link between the ranks of a job (run one process "
      "per rank, under cohortrun or mpirun, or with --ranktable FILE --rank N)"};
  app.add_option("--ranktable", o.join.ranktable,
                 "rank table (JSON or YAML) of ranks started by hand");
  app.add_option("--rank", o.join.rank, "this process's rank in --ranktable");
  app.add_option("--timeout", o.check.timeoutS,
                 "seconds for the whole check (default: grows with the ranks, see below)")
      ->check(CLI::PositiveNumber);
  app.add_option("--link-timeout", o.check.linkTimeoutS,
                 "seconds to join, and for each link to connect and answer a probe (at most a "
                 "third of --timeout)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--bandwidth", o.bandwidth, "bytes of the bandwidth probe, e.g. 4M (0 = off)")
      ->capture_default_str();
  app.add_option("--pings", o.check.pings, "pings per sample (its median round trip counts)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--repeat", o.check.repeat,
                 "samples per link, each in a pass of its own over every pair; the median and "
                 "spread are reported")
      ->capture_default_str()
      ->check(CLI::Range(1, cohort::linkcheck::limits::kMaxRepeat));
  app.add_option("--min-ratio", o.check.rules.minRatio,
                 "flag links slower than this share of their class (every shm, tcp or rdma "
                 "link), each sample against the class's links probed in the same pass; a "
                 "flagged link is probed again and flagged only if the retry confirms it; 0 = off")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-gbps", o.check.rules.minGbps, "flag links slower than this (GB/s)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-rtt-us", o.check.rules.maxRttUs,
                 "flag links whose median round trip is longer (microseconds; 0 = off)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--json", o.json, "rank 0 writes the report there as JSON, every sample in it");
  app.add_option("--plot", o.plot,
                 "rank 0 draws the link matrix there as SVG, flagged links outlined");
  app.footer(timeBoundText());
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::uint64_t bytes = 0;
  if (!cohort::parseByteSize(o.bandwidth, &bytes)) {
    return usage("--bandwidth " + o.bandwidth + ": expected a size such as 4M, 512K or 0");
  }
  o.check.bandwidthBytes = bytes;
  return run(o);
}
