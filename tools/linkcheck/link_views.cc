// JSON forms of the views and of the report. The report is written with one rank
// and one link per line so that shell scripts can check it with grep.
#include "tools/linkcheck/link_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace cohort::linkcheck {

using nlohmann::json;

const char* stageName(Stage stage) {
  switch (stage) {
    case Stage::kNone:
      return "none";
    case Stage::kJoin:
      return "join";
    case Stage::kSetup:
      return "setup";
    case Stage::kConnect:
      return "connect";
    case Stage::kProbe:
      return "probe";
    case Stage::kReport:
      return "report";
  }
  return "?";
}

const char* statusName(LinkStatus status) {
  switch (status) {
    case LinkStatus::kOk:
      return "ok";
    case LinkStatus::kSlow:
      return "slow";
    case LinkStatus::kLoss:
      return "loss";
    case LinkStatus::kBad:
      return "bad";
  }
  return "?";
}

namespace {

json linkViewJson(const LinkView& l) {
  return {{"peer", l.peer},
          {"ok", l.ok},
          {"stage", static_cast<int>(l.stage)},
          {"lost", l.lost},
          {"transport", l.transport},
          {"rttUs", l.rttUs},
          {"gbps", l.gbps},
          {"cause", l.cause},
          {"detail", l.detail}};
}

LinkView linkViewFrom(const json& j) {
  LinkView l;
  l.peer = j.at("peer").get<int>();
  l.ok = j.at("ok").get<bool>();
  l.stage = static_cast<Stage>(std::clamp(j.at("stage").get<int>(), 0, 5));
  l.lost = j.at("lost").get<bool>();
  l.transport = j.at("transport").get<std::string>();
  l.rttUs = j.at("rttUs").get<double>();
  l.gbps = j.at("gbps").get<double>();
  l.cause = j.at("cause").get<std::string>();
  l.detail = j.at("detail").get<std::string>();
  return l;
}

json verdictJson(const LinkVerdict& v, const CheckReport& r) {
  return {{"a", v.a},
          {"b", v.b},
          {"addressA", r.ranks.at(static_cast<std::size_t>(v.a)).address},
          {"addressB", r.ranks.at(static_cast<std::size_t>(v.b)).address},
          {"status", statusName(v.status)},
          {"transport", v.transport},
          {"rttUs", v.rttUs},
          {"gbps", v.gbps},
          {"cause", v.cause},
          {"detail", v.detail}};
}

LinkStatus statusFrom(const std::string& name) {
  for (LinkStatus s : {LinkStatus::kOk, LinkStatus::kSlow, LinkStatus::kLoss}) {
    if (name == statusName(s)) return s;
  }
  return LinkStatus::kBad;
}

// Parses and converts; any exception becomes kParseError naming `what`.
template <typename Convert>
Status parseJson(const std::string& text, const char* what, Convert&& convert) {
  try {
    convert(json::parse(text));
    return Status::Ok();
  } catch (const std::exception& e) {
    return makeError(ErrorCode::kParseError, "{} is not valid: {}", what, e.what());
  }
}

}  // namespace

std::string RankView::toJson() const {
  json links_ = json::array();
  for (const LinkView& l : links) links_.push_back(linkViewJson(l));
  return json{{"rank", rank},     {"address", address}, {"hostname", hostname},
              {"hostId", hostId}, {"pid", pid},         {"links", links_}}
      .dump();
}

Status RankView::fromJson(const std::string& text, RankView* out) {
  return parseJson(text, "a rank's link view", [&](const json& j) {
    RankView v;
    v.rank = j.at("rank").get<int>();
    v.address = j.at("address").get<std::string>();
    v.hostname = j.at("hostname").get<std::string>();
    v.hostId = j.at("hostId").get<std::string>();
    v.pid = j.at("pid").get<int>();
    for (const json& l : j.at("links")) v.links.push_back(linkViewFrom(l));
    *out = std::move(v);
  });
}

int CheckReport::badLinks() const {
  int n = 0;
  for (const LinkVerdict& l : links) n += l.status != LinkStatus::kOk;
  return n;
}

const LinkVerdict* CheckReport::find(int a, int b) const {
  if (a > b) std::swap(a, b);
  for (const LinkVerdict& l : links) {
    if (l.a == a && l.b == b) return &l;
  }
  return nullptr;
}

std::string CheckReport::addressOf(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(ranks.size()) ||
      ranks[static_cast<std::size_t>(rank)].address.empty()) {
    return "address unknown";
  }
  return ranks[static_cast<std::size_t>(rank)].address;
}

std::string CheckReport::toJson() const {
  std::string out = fmt::format(
      "{{\n\"ok\": {},\n\"size\": {},\n\"timeoutS\": {},\n\"linkTimeoutS\": {},\n"
      "\"minGbps\": {},\n\"bandwidthBytes\": {},\n\"pings\": {},\n\"badLinks\": {},\n"
      "\"problems\": {},\n\"ranks\": [",
      allGood() ? "true" : "false", size, json(timeoutS).dump(), json(linkTimeoutS).dump(),
      json(minGbps).dump(), bandwidthBytes, pings, badLinks(), json(problems).dump());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankEntry& e = ranks[i];
    out += (i == 0 ? "\n" : ",\n") + json{{"rank", e.rank},
                                          {"address", e.address},
                                          {"hostname", e.hostname},
                                          {"reported", e.reported}}
                                         .dump();
  }
  out += "\n],\n\"links\": [";
  for (std::size_t i = 0; i < links.size(); ++i) {
    out += (i == 0 ? "\n" : ",\n") + verdictJson(links[i], *this).dump();
  }
  return out + "\n]\n}\n";
}

Status CheckReport::fromJson(const std::string& text, CheckReport* out) {
  return parseJson(text, "the link check report", [&](const json& j) {
    CheckReport r;
    r.size = j.at("size").get<int>();
    r.timeoutS = j.at("timeoutS").get<double>();
    r.linkTimeoutS = j.at("linkTimeoutS").get<double>();
    r.minGbps = j.at("minGbps").get<double>();
    r.bandwidthBytes = j.at("bandwidthBytes").get<std::size_t>();
    r.pings = j.at("pings").get<int>();
    r.problems = j.at("problems").get<std::vector<std::string>>();
    for (const json& e : j.at("ranks")) {
      r.ranks.push_back({e.at("rank").get<int>(), e.at("address").get<std::string>(),
                         e.at("hostname").get<std::string>(), e.at("reported").get<bool>()});
    }
    for (const json& l : j.at("links")) {
      r.links.push_back({l.at("a").get<int>(), l.at("b").get<int>(),
                         statusFrom(l.at("status").get<std::string>()),
                         l.at("transport").get<std::string>(), l.at("rttUs").get<double>(),
                         l.at("gbps").get<double>(), l.at("cause").get<std::string>(),
                         l.at("detail").get<std::string>()});
    }
    *out = std::move(r);
  });
}

}  // namespace cohort::linkcheck
