// cohort-ranktable: validate, generate and convert rank tables and cluster files.
//
//   cohort-ranktable validate FILE [--rank N] [--profile default|910] [--wait S]
//   cohort-ranktable generate --servers S --devices D [--ip-base A.B.C.D]
//                             [--format json|yaml] [--super-pod-size K] [-o FILE]
//   cohort-ranktable convert FILE --to json|yaml [-o FILE]
//
// Exit status: 0 success, 1 invalid table or failure, 2 bad command line.
#include <CLI/CLI.hpp>

#include "tools/ranktable/commands.h"

namespace {

using cohort::tools::ConvertArgs;
using cohort::tools::GenerateArgs;
using cohort::tools::ValidateArgs;

void addValidate(CLI::App* app, ValidateArgs* args) {
  auto* cmd = app->add_subcommand("validate", "Check a table; print a summary or every error");
  cmd->add_option("file", args->file, "Rank table (.json) or cluster file (.yaml)")->required();
  cmd->add_option("--rank", args->rank, "This process's rank: must be in the table")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--profile", args->profile, "Extra rules: default or 910")
      ->check(CLI::IsMember({"default", "910"}));
  cmd->add_option("--wait", args->waitS, "Seconds to re-read an \"initializing\" table")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_flag("-q,--quiet", args->quiet, "No summary, only the exit status and errors");
}

void addGenerate(CLI::App* app, GenerateArgs* args) {
  auto* cmd = app->add_subcommand("generate", "Write a valid table for a test cluster");
  auto& cluster = args->cluster;
  cmd->add_option("--servers", cluster.servers, "Number of servers")
      ->required()
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--devices", cluster.devicesPerServer, "Devices per server")
      ->required()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--ip-base", cluster.deviceIpBase, "First device IP (counts up)")
      ->capture_default_str();
  cmd->add_option("--host-ip-base", cluster.hostIpBase, "First host IP and server id")
      ->capture_default_str();
  cmd->add_option("--super-pod-size", cluster.serversPerSuperPod,
                  "Servers per super pod (> 0 writes version 1.2)")
      ->check(CLI::Range(0, 65536));
  cmd->add_option("--format", args->format, "json or yaml")
      ->check(CLI::IsMember({"json", "yaml"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "Output file (default: stdout)");
}

void addConvert(CLI::App* app, ConvertArgs* args) {
  auto* cmd = app->add_subcommand("convert", "Validate a table and write it in another format");
  cmd->add_option("file", args->file, "Rank table (.json) or cluster file (.yaml)")->required();
  cmd->add_option("--to", args->to, "json or yaml")
      ->required()
      ->check(CLI::IsMember({"json", "yaml"}));
  cmd->add_option("-o,--output", args->output, "Output file (default: stdout)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cohort-ranktable: validate, generate and convert Cohort/HCCL rank tables"};
  app.require_subcommand(1);
  ValidateArgs validate;
  GenerateArgs generate;
  ConvertArgs convert;
  addValidate(&app, &validate);
  addGenerate(&app, &generate);
  addConvert(&app, &convert);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (app.got_subcommand("validate")) return cohort::tools::runValidate(validate);
  if (app.got_subcommand("generate")) return cohort::tools::runGenerate(generate);
  return cohort::tools::runConvert(convert);
}
