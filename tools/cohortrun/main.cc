// cohortrun: start the ranks of a Cohort job on this machine.
//
//   cohortrun -n N [options] -- PROG ARGS...
//   cohortrun --ranktable FILE --server-id ID [options] -- PROG ARGS...
//   cohortrun -n N --nnodes K --node-rank R --master ADDR:PORT -- PROG ARGS...
//
// Exit status: 0 when every rank exited 0; else the first failed rank's code
// (128 + signal), 124 on --timeout, 127 when PROG cannot run, 1 for a bad rank
// table or setup failure, 2 for a bad command line.
#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>

#include "launcher/launcher.h"

namespace {

constexpr const char* kFooter =
    R"(Each rank gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, COHORT_DEVICE_ID,
COHORT_ROOT_INFO and COHORT_JOB_TOKEN (plus MASTER_ADDR/MASTER_PORT with --master and
COHORT_RANKTABLE with --ranktable). Output lines are prefixed with "[rank] ". If a rank
fails, the others get SIGTERM, then SIGKILL after --grace seconds (with --keep-going
they go on: survivors that shrink their communicators past it).
Exit status: 0 on success; the first failed rank's code (128+signal); 124 on --timeout;
128+signal when cohortrun is signalled; 127 when PROG cannot run; 1 for setup errors;
2 for a bad command line.)";

void addOptions(CLI::App* app, cohort::launcher::LaunchOptions* o) {
  app->add_option("-n,--nproc-per-node", o->ranksPerNode, "Ranks to start on this machine")
      ->check(CLI::Range(1, 1024));
  app->add_option("--nnodes", o->nnodes, "Machines in the job (each runs its own cohortrun)")
      ->check(CLI::Range(1, 65536));
  app->add_option("--node-rank", o->nodeRank, "This machine's index, 0..nnodes-1")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--master", o->master,
                  "ADDR:PORT where node 0's cohortrun serves the job's store");
  app->add_option("--ranktable", o->ranktable,
                  "HCCL rank table (.json) or cluster file (.yaml): ranks and devices");
  app->add_option("--server-id", o->serverId, "This machine's server_id in the rank table");
  app->add_option("--log-dir", o->logDir, "Also write each rank's output to DIR/rank-R.log");
  app->add_option("--grace", o->graceS, "Seconds between SIGTERM and SIGKILL when stopping")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app->add_flag("--keep-going", o->keepGoing,
               "A rank that fails does not stop the others; the job ends when every rank has");
  app->add_option("--timeout", o->timeoutS, "Stop a job running longer (seconds, 0 = never)")
      ->check(CLI::Range(0.0, 1e7));
  app->add_option_function<std::string>(
         "--bind-to", [o](const std::string& v) { o->bindCores = v == "core"; },
         "core (default): local rank i runs on the i-th processor cohortrun may use (round "
         "robin when there are more ranks); none: the scheduler places them")
      ->check(CLI::IsMember({"core", "none"}));
}

}  // namespace

int main(int argc, char** argv) {
  int optionArgs = argc;  // arguments before "--" are cohortrun's
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      optionArgs = i;
      break;
    }
  }
  CLI::App app{"cohortrun: start the ranks of a Cohort job on this machine"};
  app.footer(kFooter);
  app.prefix_command();  // without "--", the first positional starts PROG ARGS...
  cohort::launcher::LaunchOptions options;
  addOptions(&app, &options);
  try {
    app.parse(optionArgs, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (optionArgs < argc) {
    if (!app.remaining().empty()) {
      std::cerr << "cohortrun: unexpected argument '" << app.remaining().front()
                << "' before '--'\n";
      return 2;
    }
    options.command.assign(argv + optionArgs + 1, argv + argc);
  } else {
    options.command = app.remaining();
    if (!options.command.empty() && options.command.front().rfind("-", 0) == 0) {
      std::cerr << "cohortrun: unknown option '" << options.command.front() << "'\n";
      return 2;
    }
  }
  return cohort::launcher::runJob(options);
}
