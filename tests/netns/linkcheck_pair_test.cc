// One link of the check on its own: the causes it records when the peer's end
// failed to set up, when no transport is common to both ends, and when the
// connect is refused. Rank 0 of a two-rank world on 127.0.0.1.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "test_util.h"
#include "tools/linkcheck/pair_link.h"

namespace cohort::linkcheck {
namespace {

transport::TransportContext context(long timeoutMs) {
  transport::TransportContext ctx;
  ctx.rank = 0;
  ctx.size = 2;
  ctx.self.rank = 0;
  ctx.self.hostId = "pair-test-a";
  ctx.self.address = "127.0.0.1";
  ctx.self.localIndex = 0;
  ctx.token = transport::JobToken::fromText("pair-test");
  ctx.connectDeadline = Deadline::afterMs(timeoutMs);
  return ctx;
}

transport::PeerInfo otherNode() {
  transport::PeerInfo peer;
  peer.rank = 1;
  peer.hostId = "pair-test-b";  // another node: shm declines, tcp is chosen
  peer.address = "127.0.0.1";
  peer.localIndex = 1;
  return peer;
}

// A link blob as pair_link.cc writes it: ok flag, then "name\0" + length + bytes.
transport::Bytes linkBlob(const std::string& name, const std::string& blob) {
  transport::Bytes out{1};
  out.insert(out.end(), name.begin(), name.end());
  out.push_back(0);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(blob.size() >> (8 * i)));
  out.insert(out.end(), blob.begin(), blob.end());
  return out;
}

// A port on 127.0.0.1 where nothing listens (bound, then closed).
int closedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

TEST(PairLink, APeerThatCouldNotSetUpIsTheCause) {
  PairLink link(context(1000), otherNode(), 1);
  EXPECT_FALSE(link.setup().empty());
  link.connect(transport::Bytes{0, 'o', 'o', 'p', 's'});
  EXPECT_TRUE(link.failed());
  EXPECT_FALSE(link.connected());
  EXPECT_EQ(link.view().stage, Stage::kSetup);
  EXPECT_EQ(link.view().cause, "rank 1 could not set up its end");
  EXPECT_EQ(link.view().detail, "oops");
}

TEST(PairLink, NoCommonTransportNamesEveryReason) {
  PairLink link(context(1000), otherNode(), 1);
  link.setup();
  link.connect(linkBlob("carrier-pigeon", "x"));
  EXPECT_EQ(link.view().stage, Stage::kConnect);
  EXPECT_EQ(link.view().cause, "no transport");
  EXPECT_NE(link.view().detail.find("no transport found for rank 0 -> rank 1"), std::string::npos)
      << link.view().detail;
  EXPECT_NE(link.view().detail.find("shm: peer is on another node"), std::string::npos)
      << link.view().detail;
  EXPECT_NE(link.view().detail.find("tcp: the peer has no tcp transport"), std::string::npos)
      << link.view().detail;
}

TEST(PairLink, ARefusedConnectIsConnectionRefused) {
  PairLink link(context(800), otherNode(), 0.8);
  link.setup();
  link.connect(linkBlob("tcp", "tcp1 127.0.0.1 " + std::to_string(closedPort()) + " 2 524288"));
  EXPECT_EQ(link.view().stage, Stage::kConnect);
  EXPECT_EQ(link.view().transport, "tcp");
  EXPECT_EQ(link.view().cause, "connection refused");
  EXPECT_NE(link.view().detail.find("rank 0 (127.0.0.1:"), std::string::npos) << link.view().detail;
  // The first failure stays: a later one does not replace it.
  link.fail(Stage::kProbe, Status(ErrorCode::kTimeout, "later"), "later");
  EXPECT_EQ(link.view().cause, "connection refused");
}

}  // namespace
}  // namespace cohort::linkcheck
