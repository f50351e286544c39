// cohort-smi: what `npu-smi info` shows for Ascend cards, for Cohort's emulated
// devices.
//
//   cohort-smi [--json] [--registry PATH]   devices, processes, memory, communicators
//   cohort-smi --version [--json]           library, API and protocol versions
//   cohort-smi check [--job-memory BYTES] [--ranktable FILE] [--ranks N] [--json]
//
// Exit status: 0 success (check: every item OK or WARN), 1 failure (check: an
// item FAILed), 2 bad command line.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cohort/runtime.h"
#include "common/config.h"
#include "runtime/node_registry.h"
#include "tools/smi/node_view.h"
#include "tools/smi/self_check.h"

namespace {

int printVersion(bool json) {
  const cohort::VersionInfo v = cohort::loadedVersion();
  if (json) {
    nlohmann::json j = {{"library_version", v.library},
                        {"api_version", std::to_string(v.apiVersion / 1000) + "." +
                                            std::to_string(v.apiVersion % 1000)},
                        {"protocol_version", v.protocolVersion}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf(
        "cohort-smi %s\nlibrary version  : %s\napi version      : %d.%d\n"
        "protocol version : %d\n",
        v.library, v.library, v.apiVersion / 1000, v.apiVersion % 1000, v.protocolVersion);
  }
  return 0;
}

int printNode(const std::string& registry, bool json) {
  cohort::smi::NodeView view;
  const cohort::Status s = cohort::smi::readNode(registry, &view);
  if (!s.ok()) {
    std::fprintf(stderr, "cohort-smi: %s\n", s.toString().c_str());
    return 1;
  }
  if (json) {
    std::cout << cohort::smi::nodeJson(view).dump(2) << "\n";
  } else {
    std::cout << cohort::smi::nodeText(view);
  }
  return 0;
}

int runCheck(const cohort::smi::CheckOptions& options, bool json) {
  const auto items = cohort::smi::runSelfCheck(options);
  if (json) {
    std::cout << cohort::smi::checkJson(items).dump(2) << "\n";
  } else {
    std::cout << cohort::smi::checkText(items);
  }
  return cohort::smi::anyFailed(items) ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cohort-smi: emulated devices, their processes and memory, communicators"};
  bool version = false;
  bool json = false;
  std::string registry = cohort::runtime::NodeRegistry::defaultPath();
  app.add_flag("--version", version, "print library, API and protocol versions");
  app.add_flag("--json", json, "machine-readable output");
  app.add_option("--registry", registry, "node registry to read")->capture_default_str();

  cohort::smi::CheckOptions check;
  std::string jobMemory;
  auto* cmd = app.add_subcommand("check", "pre-deployment self-check of this machine");
  cmd->add_option("--job-memory", jobMemory,
                  "bytes the job maps in /dev/shm (16G, 512M, 1048576): compared with free space");
  cmd->add_option("--ranktable", check.ranktable, "rank table: valid, and naming this host");
  cmd->add_option("--ranks", check.ranks,
                  "ranks of the job (default: the table, the launcher's "
                  "variables, or one per visible device)")
      ->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--json", json, "machine-readable output");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!jobMemory.empty() && !cohort::parseByteSize(jobMemory, &check.jobMemory)) {
    std::fprintf(stderr, "cohort-smi: --job-memory '%s' is not a byte size (16G, 512M, 1048576)\n",
                 jobMemory.c_str());
    return 2;
  }
  if (version) return printVersion(json);
  if (app.got_subcommand("check")) return runCheck(check, json);
  return printNode(registry, json);
}
