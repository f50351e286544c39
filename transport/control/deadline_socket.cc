#include "transport/control/deadline_socket.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <optional>
#include <vector>

#include "common/error.h"

namespace cohort::transport::control {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

struct DeadlineSocket::Impl {
  asio::io_context io;
  tcp::socket socket{io};

  // Starts an operation with `start(handler)` and drives the io_context until
  // the handler ran or the deadline passed; on the deadline the socket is closed
  // and the (aborted) handler is still run before returning.
  template <typename Start>
  error_code run(Deadline deadline, bool* timedOut, std::size_t* transferred, Start start) {
    std::optional<error_code> result;
    start([&](const error_code& ec, std::size_t n) {
      result = ec;
      if (transferred != nullptr) *transferred = n;
    });
    io.restart();
    while (!result) {
      const std::size_t ran = deadline.isNever() ? io.run_one() : io.run_one_until(deadline.at());
      if (ran == 0 && !result) break;
    }
    *timedOut = !result.has_value();
    if (!result) {
      error_code ignored;
      socket.close(ignored);
      io.restart();
      while (!result && io.run_one() > 0) {
      }
    }
    return result.value_or(asio::error::timed_out);
  }
};

DeadlineSocket::DeadlineSocket() : impl_(std::make_unique<Impl>()) {}
DeadlineSocket::~DeadlineSocket() = default;

namespace {
Status ioError(const error_code& ec, bool timedOut, const char* what) {
  if (timedOut) return makeError(ErrorCode::kTimeout, "{} timed out", what);
  return makeError(ErrorCode::kConnectionError, "{} failed: {}", what, ec.message());
}
}  // namespace

Status DeadlineSocket::connect(const std::string& host, int port, Deadline deadline) {
  close();
  std::vector<tcp::endpoint> endpoints;
  error_code ec;
  bool timedOut = false;
  const asio::ip::address literal = asio::ip::make_address(host, ec);
  if (!ec) {
    endpoints.emplace_back(literal, static_cast<unsigned short>(port));
  } else {
    // A host name: the resolver's own timeout bounds this (getaddrinfo cannot be cut short).
    tcp::resolver resolver(impl_->io);
    ec = impl_->run(deadline, &timedOut, nullptr, [&](auto done) {
      resolver.async_resolve(host, std::to_string(port), tcp::resolver::numeric_service,
                             [&, done](const error_code& e, tcp::resolver::results_type r) {
                               for (const auto& entry : r) endpoints.push_back(entry.endpoint());
                               done(e, 0);
                             });
    });
    if (ec || timedOut) return ioError(ec, timedOut, "resolving the host name");
  }
  ec = impl_->run(deadline, &timedOut, nullptr, [&](auto done) {
    asio::async_connect(impl_->socket, endpoints,
                        [done](const error_code& e, const tcp::endpoint&) { done(e, 0); });
  });
  if (ec || timedOut) {
    close();
    return ioError(ec, timedOut, "connect");
  }
  impl_->socket.set_option(tcp::no_delay(true), ec);
  return Status::Ok();
}

Status DeadlineSocket::write(const void* data, std::size_t size, Deadline deadline) {
  if (!isOpen()) return makeError(ErrorCode::kConnectionError, "write on a closed connection");
  bool timedOut = false;
  const error_code ec = impl_->run(deadline, &timedOut, nullptr, [&](auto done) {
    asio::async_write(impl_->socket, asio::buffer(data, size), done);
  });
  if (ec || timedOut) {
    close();
    return ioError(ec, timedOut, "write");
  }
  return Status::Ok();
}

Status DeadlineSocket::read(void* data, std::size_t size, Deadline deadline, std::size_t* got) {
  if (!isOpen()) return makeError(ErrorCode::kConnectionError, "read on a closed connection");
  bool timedOut = false;
  std::size_t n = 0;
  const error_code ec = impl_->run(deadline, &timedOut, &n, [&](auto done) {
    asio::async_read(impl_->socket, asio::buffer(data, size), done);
  });
  if (got != nullptr) *got = n;
  if (ec == asio::error::eof || ec == asio::error::connection_reset) {
    close();
    return makeError(ErrorCode::kConnectionError,
                     "connection closed by the peer after {} of {} "
                     "bytes ({})",
                     n, size, ec.message());
  }
  if (ec || timedOut) {
    close();
    return ioError(ec, timedOut, "read");
  }
  return Status::Ok();
}

void DeadlineSocket::close() {
  error_code ignored;
  impl_->socket.close(ignored);
}

bool DeadlineSocket::isOpen() const { return impl_->socket.is_open(); }

}  // namespace cohort::transport::control
