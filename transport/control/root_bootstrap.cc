// Rank 0 makes the root info and serves the store; the other ranks use it.
#include "cohort/version.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "transport/netif.h"
#include "transport/root_info.h"
#include "transport/tcp_store.h"

namespace cohort::transport {

namespace {
constexpr int kBasePortCount = 32;  // COHORT_IF_BASE_PORT .. +31, then ephemeral
}  // namespace

Status createRoot(RootInfo* info, std::shared_ptr<TcpStoreServer>* server) {
  const Config& config = Config::global();
  COHORT_RETURN_IF_ERROR(config.status());
  NetInterface iface;
  COHORT_RETURN_IF_ERROR(selectInterface(&iface));
  StoreServerOptions options;
  options.bindAddress = iface.address;
  options.token =
      config.jobToken.empty() ? JobToken::random() : JobToken::fromText(config.jobToken);
  Status s;
  std::shared_ptr<TcpStoreServer> started;
  for (int i = 0; i < kBasePortCount && !started; ++i) {
    options.port = config.ifBasePort + i;
    s = TcpStoreServer::start(options, &started);
    if (!s.ok() && s.code() != ErrorCode::kUnavailable) return s;
  }
  if (!started) {
    options.port = 0;
    const Status last = s;
    s = TcpStoreServer::start(options, &started);
    if (!s.ok()) {
      return makeError(ErrorCode::kUnavailable,
                       "root: no port on {} (ports {}-{} (COHORT_IF_BASE_PORT): {}; ephemeral: {})",
                       iface.address, config.ifBasePort, config.ifBasePort + kBasePortCount - 1,
                       last.message(), s.message());
    }
    COHORT_LOG(kWarn, "bootstrap", "ports {}-{} on {} are taken; the store uses port {}",
               config.ifBasePort, config.ifBasePort + kBasePortCount - 1, iface.address,
               started->port());
  }
  info->host = iface.address;
  info->port = static_cast<std::uint16_t>(started->port());
  info->token = options.token;
  info->protocolVersion = COHORT_PROTOCOL_VERSION;
  *server = std::move(started);
  return Status::Ok();
}

Status connectStore(const RootInfo& info, int rank, Deadline deadline,
                    std::shared_ptr<Store>* store) {
  if (info.protocolVersion != COHORT_PROTOCOL_VERSION) {
    return makeError(ErrorCode::kVersionMismatch,
                     "root info for {}:{} has protocol version {}, this library speaks protocol "
                     "version {}",
                     info.host, info.port, info.protocolVersion, COHORT_PROTOCOL_VERSION);
  }
  if (info.host.empty() || info.port == 0) {
    return makeError(ErrorCode::kInvalidArgument, "root info: bad store address '{}:{}'", info.host,
                     info.port);
  }
  return connectTcpStore(info.host, info.port, info.token, rank, deadline, store);
}

}  // namespace cohort::transport
