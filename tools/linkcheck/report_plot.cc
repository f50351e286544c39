// Cell sizes shrink with the job so that the matrix stays about 640 px wide;
// letters and per-cell tooltips are left out where they would not fit or would
// make the file large (1,024 ranks: half a million cells).
#include "tools/linkcheck/report_plot.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/xml.h"
#include "tools/linkcheck/report_text.h"

namespace cohort::linkcheck {

namespace {

constexpr int kMatrixPx = 640;
constexpr int kMaxCellPx = 48;
constexpr int kMinCellPx = 2;
constexpr int kMargin = 40;
constexpr int kTooltipRanks = 128;  // above: no <title> per cell

struct Swatch {
  const char* fill;
  const char* label;
};

// The colour scale, best first, then the flagged statuses.
constexpr Swatch kNear{"#1a9850", ">= 0.9 x class median"};
constexpr Swatch kClose{"#91cf60", ">= 0.75 x"};
constexpr Swatch kLow{"#fee08b", "below 0.75 x, not flagged"};
constexpr Swatch kOk{"#1a9850", "ok"};
constexpr Swatch kSlow{"#d73027", "SLOW"};
constexpr Swatch kUnstable{"#f46d43", "UNSTABLE"};
constexpr Swatch kUnreachable{"#4d4d4d", "UNREACHABLE"};
constexpr Swatch kBad{"#000000", "BAD"};

Swatch swatch(const CheckReport& r, const LinkVerdict& v) {
  switch (v.status) {
    case LinkStatus::kSlow:
      return kSlow;
    case LinkStatus::kUnstable:
      return kUnstable;
    case LinkStatus::kUnreachable:
      return kUnreachable;
    case LinkStatus::kBad:
      return kBad;
    case LinkStatus::kOk:
      break;
  }
  if (r.bandwidthBytes == 0 || v.classMedianGbps <= 0) return kOk;
  const double ratio = v.gbps / v.classMedianGbps;
  return ratio >= 0.9 ? kNear : ratio >= 0.75 ? kClose : kLow;
}

const char* letter(LinkStatus s) {
  switch (s) {
    case LinkStatus::kSlow:
      return "S";
    case LinkStatus::kUnstable:
      return "U";
    case LinkStatus::kUnreachable:
      return "X";
    case LinkStatus::kBad:
      return "B";
    case LinkStatus::kOk:
      break;
  }
  return "";
}

std::string cell(const CheckReport& r, const LinkVerdict& v, int x, int y, int c) {
  const Swatch s = swatch(r, v);
  const bool flagged = v.status != LinkStatus::kOk;
  std::string out =
      fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}")", x, y, c, c, s.fill);
  if (flagged) {
    out += fmt::format(R"( stroke="#000000" stroke-width="{}")", std::max(1, c / 8));
  }
  if (r.size <= kTooltipRanks) {
    const std::string what =
        flagged ? statusWord(v.status) + ": " + v.cause
                : fmt::format("{} {} GB/s, {:.1f} us", v.transport, gbpsText(v.gbps), v.rttUs);
    out += fmt::format("><title>rank {} &lt;-&gt; rank {}: {}</title></rect>\n", v.a, v.b,
                       xmlEscape(what));
  } else {
    out += "/>\n";
  }
  if (flagged && c >= 14) {
    out += fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="middle" fill="#ffffff" )"
                       R"(font-family="sans-serif" font-weight="bold">{}</text>)"
                       "\n",
                       x + c / 2, y + c * 2 / 3, c / 2, letter(v.status));
  }
  return out;
}

std::string legend(int x, int y) {
  std::string out;
  int dy = 0;
  for (const Swatch& s : {kNear, kClose, kLow, kSlow, kUnstable, kUnreachable, kBad}) {
    out +=
        fmt::format(R"(<rect x="{}" y="{}" width="12" height="12" fill="{}"/>)", x, y + dy, s.fill);
    out += fmt::format(R"(<text x="{}" y="{}" font-size="12" font-family="sans-serif">{}</text>)"
                       "\n",
                       x + 18, y + dy + 11, xmlEscape(s.label));
    dy += 18;
  }
  return out + fmt::format(R"(<text x="{}" y="{}" font-size="12" font-family="sans-serif">)"
                           R"(black outline: flagged link (letter S/U/X/B where it fits)</text>)"
                           "\n",
                           x, y + dy + 11);
}

}  // namespace

std::string plotSvg(const CheckReport& r) {
  const int c = std::clamp(kMatrixPx / std::max(1, r.size), kMinCellPx, kMaxCellPx);
  const int side = c * r.size;
  const int width = std::max(side, 420) + 2 * kMargin;
  const int height = side + 2 * kMargin + 160;
  std::string out = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">)"
      "\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
      width, height, width, height);
  out += fmt::format(
      R"(<text x="{}" y="24" font-size="14" font-family="sans-serif">cohort-linkcheck: )"
      R"({} ranks, {} of {} links flagged</text>)"
      "\n",
      kMargin, r.size, r.badLinks(), r.links.size());
  for (int i = 0; i < r.size && c >= 12; ++i) {
    out += fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="middle" )"
                       R"(font-family="sans-serif">{}</text>)"
                       "\n",
                       kMargin + i * c + c / 2, kMargin - 4, std::min(12, c - 2), i);
    out += fmt::format(R"(<text x="{}" y="{}" font-size="{}" text-anchor="end" )"
                       R"(font-family="sans-serif">{}</text>)"
                       "\n",
                       kMargin - 4, kMargin + i * c + c * 2 / 3, std::min(12, c - 2), i);
  }
  for (int a = 0; a < r.size; ++a) {
    out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#dddddd"/>)"
                       "\n",
                       kMargin + a * c, kMargin + a * c, c, c);
  }
  for (const LinkVerdict& v : r.links) {
    out += cell(r, v, kMargin + v.b * c, kMargin + v.a * c, c);
    out += cell(r, v, kMargin + v.a * c, kMargin + v.b * c, c);
  }
  return out + legend(kMargin, kMargin + side + 20) + "</svg>\n";
}

}  // namespace cohort::linkcheck
