#include "transport/peer_info.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "common/config.h"
#include "common/error.h"
#include "transport/little_endian.h"

namespace cohort::transport {

namespace {

void putString(Bytes& out, const std::string& s) {
  const auto n = static_cast<std::uint32_t>(s.size());
  appendLe(out, n, 4);
  out.insert(out.end(), s.begin(), s.end());
}
void putInt(Bytes& out, std::int64_t v) {
  appendLe(out, static_cast<std::uint64_t>(v), 8);
}

class Reader {
 public:
  explicit Reader(const Bytes& b) : b_(b) {}
  bool getInt(std::int64_t* v) {
    if (pos_ + 8 > b_.size()) return false;
    *v = static_cast<std::int64_t>(loadLe(b_.data() + pos_, 8));
    pos_ += 8;
    return true;
  }
  bool getString(std::string* s) {
    if (pos_ + 4 > b_.size()) return false;
    const auto n = static_cast<std::uint32_t>(loadLe(b_.data() + pos_, 4));
    pos_ += 4;
    if (n > 4096 || pos_ + n > b_.size()) return false;
    s->assign(b_.begin() + static_cast<long>(pos_), b_.begin() + static_cast<long>(pos_ + n));
    pos_ += n;
    return true;
  }

 private:
  const Bytes& b_;
  std::size_t pos_ = 0;
};

std::string readFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

Bytes PeerInfo::encode() const {
  Bytes out;
  putInt(out, rank);
  putString(out, hostId);
  putString(out, hostname);
  putInt(out, pid);
  putInt(out, device);
  putInt(out, physicalDevice);
  putString(out, address);
  putInt(out, libraryVersion);
  putInt(out, protocolVersion);
  putInt(out, standbyPort);
  return out;
}

Status PeerInfo::decode(const Bytes& bytes, PeerInfo* out) {
  Reader r(bytes);
  std::int64_t rank, pid, device, physical, lib, proto;
  PeerInfo p;
  if (!r.getInt(&rank) || !r.getString(&p.hostId) || !r.getString(&p.hostname) ||
      !r.getInt(&pid) || !r.getInt(&device) || !r.getInt(&physical) ||
      !r.getString(&p.address) || !r.getInt(&lib) || !r.getInt(&proto)) {
    return Status(ErrorCode::kConnectionError, "peer info: truncated or malformed");
  }
  p.rank = static_cast<int>(rank);
  p.pid = static_cast<std::int32_t>(pid);
  p.device = static_cast<int>(device);
  p.physicalDevice = static_cast<int>(physical);
  p.libraryVersion = static_cast<std::uint32_t>(lib);
  p.protocolVersion = static_cast<std::uint32_t>(proto);
  // Last, and optional: a rank of another version is still named as one.
  std::int64_t standby = 0;
  if (r.getInt(&standby)) p.standbyPort = static_cast<int>(standby);
  *out = p;
  return Status::Ok();
}

std::string endedProcessKey(const std::string& hostId, std::int32_t pid) {
  return "cohortrun/ended/" + hostId + "/" + std::to_string(pid);
}

const std::string& localHostId() {
  static const std::string id = [] {
    const std::string& forced = Config::global().hostId;
    if (!forced.empty()) return forced;
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    // Two network namespaces on one machine are two "machines": they cannot
    // share loopback addresses, and must not share memory by accident.
    struct stat st {};
    const unsigned long netns = stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
    return std::string(host) + "/" + readFirstLine("/proc/sys/kernel/random/boot_id") +
           "/net:" + std::to_string(netns);
  }();
  return id;
}

}  // namespace cohort::transport
