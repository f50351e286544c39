// Peer process of ipc_test: imports the handle given in hex, checks the pattern
// the exporter wrote, writes its own. Exit code 0 = all good.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cohort/runtime.h"

int main(int argc, char** argv) {
  using namespace cohort::runtime;
  if (argc != 3) return 2;
  MemHandle h{};
  const std::string hex = argv[1];
  if (hex.size() != 2 * sizeof(h.bytes)) return 3;
  for (std::size_t i = 0; i < sizeof(h.bytes); ++i) {
    h.bytes[i] = static_cast<std::uint8_t>(std::strtoul(hex.substr(2 * i, 2).c_str(), nullptr, 16));
  }
  const std::size_t n = std::strtoull(argv[2], nullptr, 10);
  void* p = nullptr;
  cohort::Status s = memImport(h, &p);
  if (!s.ok()) {
    std::fprintf(stderr, "import failed: %s\n", s.toString().c_str());
    return 4;
  }
  auto* bytes = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) {
    if (bytes[i] != i % 251) {
      std::fprintf(stderr, "byte %zu is %d, expected %zu\n", i, bytes[i], i % 251);
      return 5;
    }
  }
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<unsigned char>((i * 3) % 253);
  return memClose(p).ok() ? 0 : 6;
}
