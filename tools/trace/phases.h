// cohort-trace phases: where a rank's collectives spend their time, from the
// spans COHORT_TRACE records. Functions of the trace they are given, holding no
// state; callable from any thread while that json is not being changed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cohort::tracetool {

/// The collectives of one part of a rank's timeline (parts begin at each
/// enqueue span named `split`; part 0 is what comes before the first), with
/// their times summed, in microseconds:
/// - handoff: from the moment the calling stream began waiting for the
///   collective (its "event wait" span that encloses the collective's, on
///   another thread) to the collective's start: the time the communicator's
///   stream took to take the work up;
/// - arrival: the mesh's wait for the other ranks to arrive ("mesh arrival");
/// - work: the rest of the collective's span;
/// - back: from the collective's end to the calling stream's wait ending.
struct Part {
  int collectives = 0;
  double handoff = 0, arrival = 0, work = 0, back = 0;
};

/// The parts of one process's trace (a json with "traceEvents").
std::vector<Part> phasesOf(const nlohmann::json& trace, const std::string& split);

/// Prints the parts of every trace (ranks in order, as merge reads them) to
/// stdout; 0, or 1 with a message on stderr when DIR holds no trace.
int printPhases(const std::string& dir, const std::string& split);

}  // namespace cohort::tracetool
