// libFuzzer target for the bootstrap control plane's parsers: random bytes are
// fed, without sockets, to exactly the code that reads a store connection
// (handshake, frame headers, request bodies, key lists), to the client's reply
// parsing, to the root info blob and text, and to the whitelist file parser.
// Any crash, hang, leak or sanitizer report is a bug; refusals are expected.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "transport/control/store_protocol.h"
#include "transport/control/whitelist.h"
#include "transport/root_info.h"

namespace {

using namespace cohort::transport;

const JobToken kToken = JobToken::fromText("00112233445566778899aabbccddeeff");

// The server's view: one connection's bytes. Half the inputs get a valid
// handshake in front, so the frame parser is reached often.
void serverStream(const std::uint8_t* data, std::size_t size) {
  std::vector<control::Request> requests;
  (void)control::parseServerStream(data, size, kToken, 1 << 16, &requests);
  Handshake h = Handshake::local(ChannelKind::kStore, kToken);
  std::vector<std::uint8_t> stream(Handshake::kWireSize);
  h.encode(stream.data());
  stream.insert(stream.end(), data, data + size);
  requests.clear();
  (void)control::parseServerStream(stream.data(), stream.size(), kToken, 1 << 16, &requests);
}

// The client's view: a reply header and its value.
void clientReply(const std::uint8_t* data, std::size_t size) {
  if (size < control::kFrameHeaderSize) return;
  control::FrameHeader header;
  if (!control::FrameHeader::decode(data, control::kReplyMagic, 1 << 16, &header).ok()) return;
  const std::size_t rest = size - control::kFrameHeaderSize;
  const std::size_t n = header.valueLen < rest ? header.valueLen : rest;
  const Bytes value(data + control::kFrameHeaderSize, data + control::kFrameHeaderSize + n);
  (void)control::replyStatus(header, value);
  std::vector<std::string> keys;
  (void)control::decodeKeyList(value.data(), value.size(), &keys);
}

void rootInfo(const std::uint8_t* data, std::size_t size) {
  std::uint8_t blob[RootInfo::kSize] = {};
  std::memcpy(blob, data, size < RootInfo::kSize ? size : RootInfo::kSize);
  RootInfo info;
  if (RootInfo::fromBytes(blob, &info).ok()) {
    std::uint8_t again[RootInfo::kSize];
    info.toBytes(again);
    if (std::memcmp(blob, again, RootInfo::kSize) != 0) __builtin_trap();  // must round-trip
  }
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (RootInfo::fromText(text, &info).ok()) {
    RootInfo back;
    if (!RootInfo::fromText(info.toText(), &back).ok() || back.port != info.port ||
        back.host != info.host || back.token != info.token) {
      __builtin_trap();
    }
  }
  control::Whitelist whitelist;
  (void)control::Whitelist::parse(text, "fuzz", &whitelist);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  serverStream(data, size);
  clientReply(data, size);
  rootInfo(data, size);
  return 0;
}
