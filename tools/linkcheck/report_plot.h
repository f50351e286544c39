// The report as a picture: an SVG matrix of the links, each cell coloured by its
// bandwidth against the median of its class (or by its status without a
// bandwidth probe), flagged links outlined and lettered, a legend below. Text
// only, so it is written without any library and opens in any browser.
#pragma once

#include <string>

#include "tools/linkcheck/link_views.h"

namespace cohort::linkcheck {

/// The SVG document (cohort-linkcheck --plot FILE.svg).
std::string plotSvg(const CheckReport& report);

}  // namespace cohort::linkcheck
