// The other process of acl_vmm_share_test: runs one command per line from stdin on
// device 1 and answers each with one line on stdout, so that the test drives both sides
// of a physical allocation shared between processes step by step.
//
//   pid                      -> "pid <aclrtDeviceGetBareTgid>"
//   import <handle> <device> -> "import <aclError>"     (V1; the handle in decimal)
//   importv2 <handle>        -> "import <aclError>"     (V2, DEFAULT, the current device)
//   export                   -> "export <aclError>"     (the imported handle, again)
//   props                    -> "props <aclError> <handleType> <allocationType> <memAttr>
//                                <location.id> <location.type>"
//   map <bytes>              -> "map <aclError>"        (reserves, then aclrtMapMem)
//   read <offset> <n> <seed> -> "read <aclError> <1 if byte i is (seed + i) % 256>"
//   write <offset> <n> <seed> -> "write <aclError>"
//   unmap / free             -> "unmap <aclError>" / "free <aclError>"
//   msg                      -> "msg <aclGetRecentErrMsg>"
//   quit                     -> exits at once (whatever is still imported)
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"

namespace {

aclrtDrvMemHandle gHandle = nullptr;
char* gVa = nullptr;
size_t gBytes = 0;

void answer(const char* format, ...) __attribute__((format(printf, 1, 2)));
void answer(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::printf("\n");
  std::fflush(stdout);
}

void run(const std::string& command, const char* rest) {
  if (command == "pid") {
    int32_t pid = 0;
    aclrtDeviceGetBareTgid(&pid);
    answer("pid %d", pid);
  } else if (command == "import") {
    unsigned long long handle = 0;
    int device = 0;
    std::sscanf(rest, "%llu %d", &handle, &device);
    answer("import %d", aclrtMemImportFromShareableHandle(handle, device, &gHandle));
  } else if (command == "importv2") {
    uint64_t handle = std::strtoull(rest, nullptr, 10);
    answer("import %d", aclrtMemImportFromShareableHandleV2(
                            &handle, ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 0, &gHandle));
  } else if (command == "export") {
    uint64_t again = 0;
    answer("export %d", aclrtMemExportToShareableHandle(gHandle, ACL_MEM_HANDLE_TYPE_NONE, 1,
                                                        &again));
  } else if (command == "props") {
    aclrtPhysicalMemProp p{};
    const aclError e = aclrtMemGetAllocationPropertiesFromHandle(gHandle, &p);
    answer("props %d %d %d %d %u %d", e, p.handleType, p.allocationType, p.memAttr,
           p.location.id, p.location.type);
  } else if (command == "map") {
    gBytes = std::strtoull(rest, nullptr, 10);
    void* va = nullptr;
    aclError e = aclrtReserveMemAddress(&va, gBytes, 0, nullptr, 0);
    if (e == ACL_SUCCESS) e = aclrtMapMem(va, gBytes, 0, gHandle, 0);
    gVa = static_cast<char*>(va);
    answer("map %d", e);
  } else if (command == "read" || command == "write") {
    size_t offset = 0, n = 0;
    int seed = 0;
    std::sscanf(rest, "%zu %zu %d", &offset, &n, &seed);
    std::vector<unsigned char> data(n);
    if (command == "write") {
      for (size_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>(seed + i);
      answer("write %d", aclrtMemcpy(gVa + offset, n, data.data(), n, ACL_MEMCPY_HOST_TO_DEVICE));
      return;
    }
    const aclError e = aclrtMemcpy(data.data(), n, gVa + offset, n, ACL_MEMCPY_DEVICE_TO_HOST);
    bool same = e == ACL_SUCCESS;
    for (size_t i = 0; i < n && same; ++i) same = data[i] == static_cast<unsigned char>(seed + i);
    answer("read %d %d", e, same ? 1 : 0);
  } else if (command == "unmap") {
    aclError e = aclrtUnmapMem(gVa);
    if (e == ACL_SUCCESS) e = aclrtReleaseMemAddress(gVa);
    answer("unmap %d", e);
  } else if (command == "free") {
    answer("free %d", aclrtFreePhysical(gHandle));
  } else if (command == "msg") {
    const char* m = aclGetRecentErrMsg();
    answer("msg %s", m != nullptr ? m : "");
  } else {
    answer("unknown %s", command.c_str());
  }
}

}  // namespace

int main() {
  if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(1) != ACL_SUCCESS) return 4;
  answer("ready");
  char line[256];
  while (std::fgets(line, sizeof(line), stdin) != nullptr) {
    line[std::strcspn(line, "\n")] = '\0';
    const char* space = std::strchr(line, ' ');
    const std::string command =
        space != nullptr ? std::string(line, static_cast<std::size_t>(space - line)) : line;
    if (command == "quit") std::_Exit(0);  // no cleanup: as if the process died
    run(command, space != nullptr ? space + 1 : "");
  }
  aclrtResetDevice(1);
  aclFinalize();
  return 0;
}
