// The memory generation that cohort/runtime.h's memoryGeneration() reads: every
// change to what the runtime knows of memory (an allocation, a free, a
// registration, a reservation, a mapping, an access change, an import, a close,
// a device's reset) calls noteMemoryChange() once the change is made, so that a
// check made before it no longer matches. Private to runtime/.
#pragma once

namespace cohort::runtime {

/// Called after the change, never before it: a check that read the generation
/// first and then saw the old state must find the generation moved on.
void noteMemoryChange();

}  // namespace cohort::runtime
