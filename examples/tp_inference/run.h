// What every rank of the example does: load its shard, generate with and
// without overlap, and (rank 0) check against a single-device run.
#pragma once

#include <cohort/communicator.h>

#include <vector>

#include "tp_inference/engine.h"
#include "tp_inference/model.h"

namespace tp {

/// The example's options. A plain value.
struct Options {
  ModelConfig model;
  RunShape shape;
  int tp = 4;
  int tokens = 32;          ///< new tokens per sequence
  bool job = false;         ///< one process per rank (cohortrun, mpirun) instead of threads
  /// The type the activations are allreduced in: kFloat32, kBFloat16 or kFloat16.
  cohort::DataType commType = cohort::DataType::kFloat32;
  double tolerance = 1e-4;  ///< logits: max relative error against the single device
  /// Timed rounds of each tensor-parallel run, alternating (with, without; then the
  /// other way round): each run's figures are its median round, as one round on a
  /// busy machine swings more than overlap gains.
  int rounds = 5;
  /// Also run the overlapped generation with every decode step replayed from a
  /// captured model, and compare it with the eager one.
  bool graph = false;
};

/// The logits tolerance that fits a communication type (examples/README.md says why):
/// 1e-4 for fp32; for fp16 and bf16 about 8 of their unit roundoffs (2^-11, 2^-8), as
/// every allreduce rounds each partial sum once plus once per reduction step.
double defaultTolerance(cohort::DataType commType);

/// One measured generation, combined over the ranks: the slowest rank's wall
/// time, and the average rank's communication and hidden communication time.
struct PhaseResult {
  double seconds = 0;
  double commSeconds = 0;
  double hiddenSeconds = 0;
  /// The host's time to issue one decode step: the median step, the slowest rank.
  double issueSeconds = 0;
  double overlapShare() const { return commSeconds > 0 ? hiddenSeconds / commSeconds : 0.0; }
};

/// Rank 0's view of the whole run; the other ranks fill `passed` only.
struct Summary {
  PhaseResult serial;     ///< tensor parallel, compute waits for each collective
  PhaseResult overlap;    ///< tensor parallel, micro-batches overlap
  PhaseResult replayed;   ///< as overlap, each decode step a launch of a captured model
  PhaseResult reference;  ///< one device, no communication
  /// Per round, the speed with overlap over the speed without (the two runs of a
  /// round are back to back: a drift of the machine's speed cancels out).
  std::vector<double> roundSpeedups;
  /// Per round (with Options::graph), the speed replayed over the speed of overlap.
  std::vector<double> replaySpeedups;
  /// Tokens of the replayed generations equal to the eager (overlap) ones of their round.
  int replayTokensCompared = 0;
  int replayTokensEqual = 0;
  int tokensCompared = 0;    ///< of both generations, made from the same tokens so far
  int tokensEqual = 0;
  /// Sequences that took another token where the reference's top logits are within
  /// the tolerance (a tie the rounding tipped): compared up to there.
  int nearTies = 0;
  int firstMismatch = -1;    ///< index in [batch x tokens] of a real difference, -1 = none
  double maxLogitError = 0;  ///< max |tp - reference| / max |reference| over each row compared
  bool passed = false;
};

/// The model for options.tp ranks and the batch split; kInvalidArgument naming values.
cohort::Status checkOptions(const Options& options);

/// Every rank of `comm` calls it, from its own thread or process, with its
/// device current. Returns the first error; `passed` is the same on every rank.
cohort::Status runRank(cohort::Communicator* comm, const Options& options, Summary* out);

}  // namespace tp
