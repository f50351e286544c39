// cohort-smi: what `npu-smi info` shows for Ascend cards, for Cohort's emulated
// devices: versions, devices and their memory.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "cohort/runtime.h"

namespace rt = cohort::runtime;

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
    std::printf("cohort-smi %s\nlibrary version  : %s\napi version      : %d.%d\n"
                "protocol version : %d\n", v.library, v.library, v.apiVersion / 1000,
                v.apiVersion % 1000, v.protocolVersion);
  }
  return 0;
}

int printDevices(bool json) {
  int count = 0;
  cohort::Status s = rt::getDeviceCount(&count);
  if (!s.ok()) {
    std::fprintf(stderr, "cohort-smi: %s\n", s.toString().c_str());
    return 1;
  }
  nlohmann::json devices = nlohmann::json::array();
  for (int d = 0; d < count; ++d) {
    rt::DeviceInfo info;
    s = rt::getDeviceInfo(d, &info);
    if (!s.ok()) {
      std::fprintf(stderr, "cohort-smi: %s\n", s.toString().c_str());
      return 1;
    }
    devices.push_back({{"id", info.id},
                       {"physical_id", info.physicalId},
                       {"memory_total", info.memoryTotal},
                       {"memory_used", info.memoryTotal - info.memoryFree}});
  }
  if (json) {
    std::cout << nlohmann::json{{"devices", devices}}.dump(2) << "\n";
    return 0;
  }
  std::printf("+------+----------+------------------+------------------+\n");
  std::printf("| id   | physical | memory total MiB | memory used MiB  |\n");
  std::printf("+------+----------+------------------+------------------+\n");
  for (const auto& d : devices) {
    std::printf("| %-4d | %-8d | %16llu | %16llu |\n", d["id"].get<int>(),
                d["physical_id"].get<int>(),
                static_cast<unsigned long long>(d["memory_total"].get<std::size_t>() >> 20),
                static_cast<unsigned long long>(d["memory_used"].get<std::size_t>() >> 20));
  }
  std::printf("+------+----------+------------------+------------------+\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cohort-smi: emulated devices and Cohort versions"};
  bool version = false;
  bool json = false;
  app.add_flag("--version", version, "print library, API and protocol versions");
  app.add_flag("--json", json, "machine-readable output");
  CLI11_PARSE(app, argc, argv);
  return version ? printVersion(json) : printDevices(json);
}
