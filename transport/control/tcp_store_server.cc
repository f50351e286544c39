// The store server: one I/O thread runs an acceptor and every session, so the
// store state and the pending waits need no locks; only the refusal counter
// is read from other threads.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <limits>
#include <map>
#include <thread>

#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "transport/control/store_session.h"
#include "transport/control/whitelist.h"
#include "transport/tcp_store.h"

namespace cohort::transport {

namespace asio = boost::asio;
namespace ip = asio::ip;  // not `using ip::tcp`: cohort::transport::tcp is a namespace
using boost::system::error_code;
using control::ServerState;
using control::StoreSession;

namespace {

std::string endpointText(const ip::tcp::endpoint& e) {
  const std::string host = e.address().to_string();
  return e.address().is_v6() ? fmt::format("[{}]:{}", host, e.port())
                             : fmt::format("{}:{}", host, e.port());
}

class ServerImpl : public TcpStoreServer {
 public:
  ServerImpl(const StoreServerOptions& options, control::Whitelist whitelist)
      : state_(
            io_, options.token,
            std::min<std::size_t>(options.maxValueBytes, std::numeric_limits<std::uint32_t>::max()),
            std::chrono::seconds(options.idleTimeoutS > 0 ? options.idleTimeoutS
                                                          : Config::global().connectTimeoutS)),
        whitelist_(std::move(whitelist)) {
    state_.onClosed = [this](std::uint64_t id) { sessions_.erase(id); };
  }

  ~ServerImpl() override {
    if (!thread_.joinable()) return;
    asio::post(io_, [this] {
      stopping_ = true;
      error_code ignored;
      acceptor_.close(ignored);
      retry_.cancel();
      const auto sessions = sessions_;  // close() erases from sessions_
      for (const auto& entry : sessions) entry.second->close();
      state_.waits.clear();
    });
    thread_.join();  // run() returns once every handler has seen the cancellation
  }

  Status listen(const StoreServerOptions& options) {
    error_code ec;
    const asio::ip::address address = asio::ip::make_address(options.bindAddress, ec);
    if (ec) {
      return makeError(ErrorCode::kInvalidArgument,
                       "store: bind address '{}' is not an IP "
                       "address",
                       options.bindAddress);
    }
    const ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
    acceptor_.open(endpoint.protocol(), ec);
    // SO_REUSEADDR lets a restarted root reuse its port past TIME_WAIT; two live
    // listeners on one port remain impossible on Linux.
    if (!ec) acceptor_.set_option(ip::tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return makeError(ErrorCode::kUnavailable, "store: cannot listen on {}: {}",
                       endpointText(endpoint), ec.message());
    }
    port_ = acceptor_.local_endpoint(ec).port();
    address_ = address.to_string();
    COHORT_LOG(kInfo, "store", "serving on {}:{} (handshake timeout {} s{})", address_, port_,
               state_.timeout.count(),
               whitelist_.enabled() ? ", whitelist " + whitelist_.source() : std::string());
    accept();
    thread_ = std::thread([this] {
      nameThisThread("cohort store");
      io_.run();
    });
    return Status::Ok();
  }

  int port() const override { return port_; }
  std::string address() const override { return address_; }
  int refusedCount() const override { return state_.refused.load(); }

 private:
  void accept() {
    acceptor_.async_accept([this](const error_code& ec, ip::tcp::socket socket) {
      if (ec == asio::error::operation_aborted || stopping_) return;
      if (ec) {
        // Out of descriptors and the like: log, back off, keep serving.
        COHORT_LOG(kWarn, "store", "accept on {}:{} failed: {}", address_, port_, ec.message());
        retry_.expires_after(std::chrono::milliseconds(100));
        retry_.async_wait([this](const error_code& e) {
          if (!e && !stopping_) accept();
        });
        return;
      }
      admit(std::move(socket));
      accept();
    });
  }

  void admit(ip::tcp::socket socket) {
    error_code ec;
    const ip::tcp::endpoint remote = socket.remote_endpoint(ec);
    if (ec) {  // reset before it could be checked
      state_.refused.fetch_add(1);
      COHORT_LOG(kWarn, "store", "refused a connection gone before admission: {}", ec.message());
      return;
    }
    socket.set_option(ip::tcp::no_delay(true), ec);
    const std::uint64_t id = nextId_++;
    auto session =
        std::make_shared<StoreSession>(state_, std::move(socket), id, endpointText(remote));
    sessions_.emplace(id, session);
    const std::string host = remote.address().to_string();
    if (!whitelist_.allows(host)) {
      session->refuse(ErrorCode::kConnectionError,
                      fmt::format("address {} is not in the whitelist (COHORT_WHITELIST_FILE={})",
                                  host, whitelist_.source()));
      return;
    }
    session->start();
  }

  asio::io_context io_;  // first: destroyed last
  ServerState state_;
  ip::tcp::acceptor acceptor_{io_};
  asio::steady_timer retry_{io_};
  control::Whitelist whitelist_;
  std::map<std::uint64_t, std::shared_ptr<StoreSession>> sessions_;
  std::uint64_t nextId_ = 1;
  bool stopping_ = false;  // I/O thread only
  int port_ = 0;
  std::string address_;
  std::thread thread_;
};

}  // namespace

Status TcpStoreServer::start(const StoreServerOptions& options,
                             std::shared_ptr<TcpStoreServer>* out) {
  control::Whitelist whitelist;
  const std::string& file = Config::global().whitelistFile;
  if (!file.empty()) COHORT_RETURN_IF_ERROR(control::Whitelist::load(file, &whitelist));
  auto server = std::make_shared<ServerImpl>(options, std::move(whitelist));
  COHORT_RETURN_IF_ERROR(server->listen(options));
  *out = std::move(server);
  return Status::Ok();
}

}  // namespace cohort::transport
