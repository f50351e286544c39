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
    case LinkStatus::kUnstable:
      return "unstable";
    case LinkStatus::kUnreachable:
      return "unreachable";
    case LinkStatus::kBad:
      return "bad";
  }
  return "?";
}

namespace {

// Samples as [[rttUs, gbps, lost, round, pass], ...]: every one, compactly.
json samplesJson(const std::vector<LinkSample>& samples) {
  json out = json::array();
  for (const LinkSample& s : samples) {
    out.push_back({s.rttUs, s.gbps, s.lost, s.round, s.pass});
  }
  return out;
}

std::vector<LinkSample> samplesFrom(const json& j) {
  std::vector<LinkSample> out;
  for (const json& s : j) {
    out.push_back({s.at(0).get<double>(), s.at(1).get<double>(), s.at(2).get<double>(),
                   s.at(3).get<int>(), s.at(4).get<int>()});
  }
  return out;
}

json linkViewJson(const LinkView& l) {
  return {{"peer", l.peer},
          {"ok", l.ok},
          {"stage", static_cast<int>(l.stage)},
          {"unreachable", l.unreachable},
          {"transport", l.transport},
          {"samples", samplesJson(l.samples)},
          {"cause", l.cause},
          {"detail", l.detail}};
}

LinkView linkViewFrom(const json& j) {
  LinkView l;
  l.peer = j.at("peer").get<int>();
  l.ok = j.at("ok").get<bool>();
  l.stage = static_cast<Stage>(std::clamp(j.at("stage").get<int>(), 0, 5));
  l.unreachable = j.at("unreachable").get<bool>();
  l.transport = j.at("transport").get<std::string>();
  l.samples = samplesFrom(j.at("samples"));
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
          {"spread", v.spread},
          {"classMedianGbps", v.classMedianGbps},
          {"classLinks", v.classLinks},
          {"disturbed", v.disturbed},
          {"samples", samplesJson(v.samples)},
          {"cause", v.cause},
          {"detail", v.detail}};
}

LinkVerdict verdictFrom(const json& l) {
  LinkVerdict v;
  v.a = l.at("a").get<int>();
  v.b = l.at("b").get<int>();
  v.status = LinkStatus::kBad;
  for (LinkStatus s :
       {LinkStatus::kOk, LinkStatus::kSlow, LinkStatus::kUnstable, LinkStatus::kUnreachable}) {
    if (l.at("status").get<std::string>() == statusName(s)) v.status = s;
  }
  v.transport = l.at("transport").get<std::string>();
  v.rttUs = l.at("rttUs").get<double>();
  v.gbps = l.at("gbps").get<double>();
  v.spread = l.at("spread").get<double>();
  v.classMedianGbps = l.at("classMedianGbps").get<double>();
  v.classLinks = l.at("classLinks").get<int>();
  v.disturbed = l.at("disturbed").get<bool>();
  v.samples = samplesFrom(l.at("samples"));
  v.cause = l.at("cause").get<std::string>();
  v.detail = l.at("detail").get<std::string>();
  return v;
}

json rankJson(const RankEntry& e) {
  return {{"rank", e.rank},         {"address", e.address},   {"tableAddress", e.tableAddress},
          {"serverId", e.serverId}, {"hostname", e.hostname}, {"reported", e.reported}};
}

RankEntry rankFrom(const json& e) {
  return {e.at("rank").get<int>(),
          e.at("address").get<std::string>(),
          e.at("tableAddress").get<std::string>(),
          e.at("serverId").get<std::string>(),
          e.at("hostname").get<std::string>(),
          e.at("reported").get<bool>()};
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

std::string CheckReport::nameOf(int rank, const std::string& transport) const {
  if (rank < 0 || rank >= static_cast<int>(ranks.size())) return "address unknown";
  const RankEntry& e = ranks[static_cast<std::size_t>(rank)];
  if (e.tableAddress.empty()) return e.address.empty() ? "address unknown" : e.address;
  std::string name = e.tableAddress;
  // shm links use no address: the one the tcp links used would only mislead.
  if (transport != "shm" && !e.address.empty() && e.address != e.tableAddress) {
    name += " via " + e.address;
  }
  if (!e.serverId.empty() && e.serverId != e.tableAddress) name += ", server " + e.serverId;
  return name;
}

std::string CheckReport::toJson() const {
  std::string out = fmt::format(
      "{{\n\"ok\": {},\n\"size\": {},\n\"timeoutS\": {},\n\"linkTimeoutS\": {},\n"
      "\"rules\": {},\n\"bandwidthBytes\": {},\n\"pings\": {},\n\"repeat\": {},\n"
      "\"badLinks\": {},\n\"problems\": {},\n\"ranks\": [",
      allGood() ? "true" : "false", size, json(timeoutS).dump(), json(linkTimeoutS).dump(),
      json{{"minGbps", rules.minGbps}, {"maxRttUs", rules.maxRttUs}, {"minRatio", rules.minRatio}}
          .dump(),
      bandwidthBytes, pings, repeat, badLinks(), json(problems).dump());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out += (i == 0 ? "\n" : ",\n") + rankJson(ranks[i]).dump();
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
    const json& rules = j.at("rules");
    r.rules.minGbps = rules.at("minGbps").get<double>();
    r.rules.maxRttUs = rules.at("maxRttUs").get<double>();
    r.rules.minRatio = rules.at("minRatio").get<double>();
    r.bandwidthBytes = j.at("bandwidthBytes").get<std::size_t>();
    r.pings = j.at("pings").get<int>();
    r.repeat = j.at("repeat").get<int>();
    r.problems = j.at("problems").get<std::vector<std::string>>();
    for (const json& e : j.at("ranks")) r.ranks.push_back(rankFrom(e));
    for (const json& l : j.at("links")) r.links.push_back(verdictFrom(l));
    *out = std::move(r);
  });
}

}  // namespace cohort::linkcheck
