// --plot: busbw against size as a small hand-written SVG (text: axes with ticks,
// one polyline and its points per block, a legend). Sizes on a log2 axis.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>

#include "common/error.h"
#include "common/xml.h"
#include "tools/perf/report_files.h"

namespace cohort::perf {

namespace {

constexpr double kWidth = 860, kHeight = 520;
constexpr double kLeft = 70, kRight = 220, kTop = 40, kBottom = 60;  // margins
const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string sizeLabel(double bytes) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:g}{}", bytes, units[u]);
}

// 1, 2 or 5 times a power of ten, about a fifth of `range`.
double niceStep(double range) {
  const double raw = range / 5;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

struct Axes {
  double x0, x1;  // log2 of the smallest and largest size
  double yMax;
  double x(double bytes) const {
    const double w = kWidth - kLeft - kRight;
    return kLeft + (x1 > x0 ? (std::log2(bytes) - x0) / (x1 - x0) * w : w / 2);
  }
  double y(double busbw) const {
    return kHeight - kBottom - busbw / yMax * (kHeight - kTop - kBottom);
  }
};

Axes makeAxes(const std::vector<BlockResult>& blocks) {
  double lo = 1e300, hi = 0, top = 0;
  for (const auto& b : blocks) {
    for (const auto& r : b.rows) {
      lo = std::min(lo, static_cast<double>(r.bytes));
      hi = std::max(hi, static_cast<double>(r.bytes));
      top = std::max(top, r.busbw);
    }
  }
  if (hi == 0) lo = hi = 1024;
  const double step = niceStep(top > 0 ? top * 1.05 : 1.0);
  return Axes{std::floor(std::log2(lo)), std::ceil(std::log2(hi)),
              std::max(step, std::ceil(top * 1.05 / step) * step)};
}

std::string axesSvg(const Axes& a) {
  std::string s;
  const double left = kLeft, right = kWidth - kRight, bottom = kHeight - kBottom;
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#444\"/>\n",
      left, kTop, right - left, bottom - kTop);
  const int span = static_cast<int>(a.x1 - a.x0);
  const int stride = std::max(1, (span + 9) / 10);
  for (int k = static_cast<int>(a.x0); k <= static_cast<int>(a.x1); k += stride) {
    const double x = a.x(std::ldexp(1.0, k));
    s += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x, kTop, bottom, bottom + 18, sizeLabel(std::ldexp(1.0, k)));
  }
  const double step = niceStep(a.yMax);
  for (double v = 0; v <= a.yMax * 1.0001; v += step) {
    s += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
        left, a.y(v), right, left - 6, a.y(v) + 4, v);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">message size (bytes)</text>\n",
                   (left + right) / 2, kHeight - 18);
  s += fmt::format(
      "<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 "
      "{0})\">bus bandwidth (GB/s)</text>\n",
      (kTop + bottom) / 2);
  return s;
}

std::string seriesSvg(const Axes& a, const BlockResult& b, int index) {
  const char* color = kColors[index % 10];
  std::string points, dots;
  for (const auto& r : b.rows) {
    const double x = a.x(static_cast<double>(r.bytes)), y = a.y(r.busbw);
    points += fmt::format("{:.1f},{:.1f} ", x, y);
    dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x, y, color);
  }
  const double ly = kTop + 10 + 20 * index, lx = kWidth - kRight + 15;
  return fmt::format(
      "<polyline fill=\"none\" stroke=\"{0}\" stroke-width=\"2\" points=\"{1}\">"
      "<title>{2}</title></polyline>\n{3}"
      "<line x1=\"{4}\" y1=\"{5}\" x2=\"{6}\" y2=\"{5}\" stroke=\"{0}\" "
      "stroke-width=\"2\"/>\n<text x=\"{7}\" y=\"{8}\">{2}</text>\n",
      color, points, xmlEscape(b.name), dots, lx, ly, lx + 20, lx + 26, ly + 4);
}

}  // namespace

std::string svgPlot(const RunInfo& info, const std::vector<BlockResult>& blocks) {
  const Axes a = makeAxes(blocks);
  std::string s = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"24\" font-size=\"15\">{3}</text>\n",
      kWidth, kHeight, kLeft,
      xmlEscape(fmt::format("cohort-perf {}: busbw vs size, {} ranks, {} node(s), transport {}",
                            info.libraryVersion, info.nranks, info.nodes, info.transport)));
  s += axesSvg(a);
  int index = 0;
  for (const auto& b : blocks) {
    if (!b.rows.empty()) s += seriesSvg(a, b, index++);
  }
  return s + "</svg>\n";
}

Status writeSvgPlot(const std::string& path, const RunInfo& info,
                    const std::vector<BlockResult>& blocks) {
  std::ofstream out(path);
  out << svgPlot(info, blocks);
  out.close();
  if (!out) return systemError(errno, "--plot: cannot write " + path);
  return Status::Ok();
}

}  // namespace cohort::perf
