#include "tools/linkcheck/report_text.h"

#include <fmt/format.h>

#include <cctype>
#include <functional>

namespace cohort::linkcheck {

std::string statusWord(LinkStatus status) {
  std::string out(statusName(status));
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

namespace {

constexpr int kCell = 9;

bool measured(const LinkVerdict& v) {
  return v.status == LinkStatus::kOk || v.status == LinkStatus::kSlow ||
         v.status == LinkStatus::kUnstable;
}

// A flagged link's figures carry a '*' in the matrices.
std::string mark(const LinkVerdict& v) { return v.status == LinkStatus::kOk ? "" : "*"; }

std::string statusCell(const LinkVerdict& v) {
  if (v.status == LinkStatus::kOk) return v.transport;
  return v.status == LinkStatus::kUnreachable ? "UNREACH" : statusWord(v.status);
}

// One N×N matrix; cell(v) gives the text of a link.
std::string matrix(const CheckReport& r, const std::string& title,
                   const std::function<std::string(const LinkVerdict&)>& cell) {
  std::string out = fmt::format("{:<{}}", title, kCell);
  for (int b = 0; b < r.size; ++b) out += fmt::format("{:>{}}", b, kCell);
  out += "\n";
  for (int a = 0; a < r.size; ++a) {
    out += fmt::format("{:>{}}", a, kCell);
    for (int b = 0; b < r.size; ++b) {
      const LinkVerdict* v = r.find(a, b);
      out += fmt::format("{:>{}}", a == b || v == nullptr ? "-" : cell(*v), kCell);
    }
    out += "\n";
  }
  return out;
}

std::string ends(const CheckReport& r, const LinkVerdict& v) {
  return fmt::format("rank {} ({}) <-> rank {} ({})", v.a, r.nameOf(v.a, v.transport), v.b,
                     r.nameOf(v.b, v.transport));
}

std::string figures(const CheckReport& r, const LinkVerdict& v) {
  std::string out = fmt::format("{}, {:.1f} us", v.transport, v.rttUs);
  if (r.bandwidthBytes > 0) {
    out += fmt::format(", {} GB/s ±{:.0f}% over {} samples", gbpsText(v.gbps), v.spread * 100,
                       v.samples.size());
    if (v.classLinks >= limits::kMinClassLinks && v.classMedianGbps > 0) {
      out += fmt::format(" ({:.2f} x the {} median)", v.gbps / v.classMedianGbps, v.transport);
    }
  }
  return out;
}

std::string rules(const CheckReport& r) {
  if (r.bandwidthBytes == 0) {
    return r.rules.maxRttUs > 0 ? fmt::format("flags latency over {:g} us", r.rules.maxRttUs)
                                : "flags failures only";
  }
  std::string out = "flags bandwidth under ";
  if (r.rules.minRatio > 0) out += fmt::format("{:.2f} x its class median", r.rules.minRatio);
  if (r.rules.minRatio > 0 && r.rules.minGbps > 0) out += " or ";
  if (r.rules.minGbps > 0) out += fmt::format("{:.2f} GB/s", r.rules.minGbps);
  if (r.rules.minRatio <= 0 && r.rules.minGbps <= 0) out = "flags failures only";
  if (r.rules.maxRttUs > 0) out += fmt::format(", latency over {:g} us", r.rules.maxRttUs);
  return out;
}

std::string header(const CheckReport& r) {
  std::string out = fmt::format(
      "cohort-linkcheck: {} ranks, {} links; {} pings, bandwidth probe {}, {} samples per link; "
      "{}; timeout {:g} s (each link {:g} s)\n",
      r.size, r.links.size(), r.pings,
      r.bandwidthBytes > 0 ? fmt::format("{} bytes", r.bandwidthBytes) : std::string("off"),
      r.repeat, rules(r), r.timeoutS, r.linkTimeoutS);
  for (const RankEntry& e : r.ranks) {
    const std::string used =
        !e.tableAddress.empty() && !e.address.empty() && e.address != e.tableAddress
            ? fmt::format(" (tcp on {})", e.address)
            : "";
    out += fmt::format("  rank {:<4} {:<40} {}\n", e.rank, r.nameOf(e.rank, "shm") + used,
                       e.reported ? e.hostname : std::string("(no results)"));
  }
  return out;
}

}  // namespace

std::string formatReport(const CheckReport& r) {
  std::string out = header(r);
  out += "\n" + matrix(r, "status", statusCell);
  out += "\n" + matrix(r, "rtt us", [](const LinkVerdict& v) {
           return measured(v) ? fmt::format("{:.1f}", v.rttUs) : std::string("-");
         });
  if (r.bandwidthBytes > 0) {
    out += "\n" + matrix(r, "GB/s", [](const LinkVerdict& v) {
             return measured(v) ? gbpsText(v.gbps) + mark(v) : std::string("-");
           });
    out +=
        "\n" + matrix(r, "spread", [](const LinkVerdict& v) {
          return measured(v) ? fmt::format("±{:.0f}%", v.spread * 100) + mark(v) : std::string("-");
        });
  }
  out += "\nlinks:\n";
  for (const LinkVerdict& v : r.links) {
    if (v.status == LinkStatus::kOk) {
      out += fmt::format("  ok {}: {}\n", ends(r, v), figures(r, v));
      continue;
    }
    out += fmt::format("  {} {}: {}\n", statusWord(v.status), ends(r, v), v.cause);
    if (!v.detail.empty() && v.detail != v.cause) out += fmt::format("    detail: {}\n", v.detail);
  }
  for (const std::string& p : r.problems) out += "  PROBLEM " + p + "\n";
  if (r.allGood()) return out + fmt::format("result: all {} links ok\n", r.links.size());
  return out + fmt::format("result: {} of {} links bad{}\n", r.badLinks(), r.links.size(),
                           r.problems.empty() ? "" : ", check incomplete");
}

std::vector<std::string> badLinkLines(const CheckReport& r, int onlyRank) {
  std::vector<std::string> lines;
  for (const LinkVerdict& v : r.links) {
    if (v.status == LinkStatus::kOk) continue;
    if (onlyRank >= 0 && v.a != onlyRank && v.b != onlyRank) continue;
    lines.push_back(fmt::format("{} {}: {}", statusWord(v.status), ends(r, v), v.cause));
  }
  return lines;
}

}  // namespace cohort::linkcheck
