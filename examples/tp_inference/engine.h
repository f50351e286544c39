// One rank's tensor-parallel decoder: buffers, KV cache, streams, and the
// schedule of kernels and collectives for a greedy generation.
//
// The batch is split into micro-batches. Kernels run on the compute stream; each
// collective is issued on a second ("link") stream that waits for the event
// recorded after the kernel producing its input, and the compute stream waits for
// the collective's completion event only where the result is consumed. So the
// allreduce of micro-batch m runs while micro-batch m+1 computes; no host wait
// sits anywhere inside a generation.
//
// With replay (`graph`), the decode step is captured once into a model (the
// runtime's stream capture, CANN's aclmdlRI) and every decode step launches it:
// one host call instead of the step's ~150. Its kernels read the step from
// device memory, where the last of them advances it.
#pragma once

#include <cohort/communicator.h>
#include <cohort/runtime.h>
#include <cohort/runtime_capture.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tp_inference/model.h"
#include "tp_inference/timeline.h"

namespace tp {

/// How a generation is batched. A plain value.
struct RunShape {
  int batch = 8;
  int promptLen = 16;
  int microbatches = 2;
};

/// Not thread-safe: one host thread drives it (the thread of its device). Owns
/// its buffers, streams and events; borrows the weights and the communicator,
/// which must outlive it. Destroy it on a thread whose current device is its own.
class TpEngine {
 public:
  /// On the calling thread's current device. `comm` null: a single device (the
  /// weights must be a 1-way shard) with no collectives. `commType`: the type the
  /// activations are allreduced in (kFloat32, kFloat16 or kBFloat16; computed in fp32,
  /// converted before the allreduce and back after). `keepLogits`: record every
  /// step's full logits for fetch().
  static cohort::Status create(const ModelConfig& model, const RunShape& shape,
                               const ShardWeights* weights, cohort::Communicator* comm,
                               cohort::DataType commType, bool keepLogits,
                               std::unique_ptr<TpEngine>* out);
  ~TpEngine();
  TpEngine(const TpEngine&) = delete;
  TpEngine& operator=(const TpEngine&) = delete;

  /// Enqueues a whole greedy generation of `tokens` tokens per sequence (prefill
  /// plus decode steps). `overlap` false: the compute stream waits for every
  /// collective as soon as it is issued (the comparison run). `replay`: each decode
  /// step is a launch of the captured step (captured at the first such call).
  cohort::Status enqueueGenerate(int tokens, bool overlap, bool replay = false);
  /// Waits for the generation; with `progress`, draws a bar on stderr.
  cohort::Status wait(const std::string& label, bool progress);
  /// After wait: tokens [batch x tokens]; logits [tokens x batch x vocab] if kept.
  cohort::Status fetch(std::vector<std::int32_t>* tokens, std::vector<float>* logits) const;
  /// Compute/communication overlap of the last generation.
  OverlapStats overlap() const { return measureOverlap(computeTimes_, commTimes_); }
  /// The host's time to issue each decode step of the last generation, in seconds.
  const std::vector<double>& issueTimes() const { return issueSeconds_; }

 private:
  // One micro-batch's sequences [seq0, seq0 + seqs): activations, KV cache
  // ([layer][seq][head][maxLen][headDim]), and the events ordering its collectives.
  struct MicroBatch {
    int seq0 = 0;
    int seqs = 0;
    float* x = nullptr;            // residual stream [rows x hidden]
    float* xn = nullptr;           // normalised [rows x hidden]
    float* qkv = nullptr;          // [rows x 3*local]
    float* attn = nullptr;         // attention output [rows x local]
    float* scores = nullptr;       // [prompt x maxLen] scratch
    float* part = nullptr;         // row-parallel partial sums, allreduced in place
    void* partComm = nullptr;      // part in the communication type, when not fp32
    float* ffn = nullptr;          // [rows x ffn/tp]
    float* logitsLocal = nullptr;  // [seqs x vocab/tp]
    float* logitsAll = nullptr;    // allgathered [tp x seqs x vocab/tp]
    float* logits = nullptr;       // [seqs x vocab] in vocabulary order
    float* kCache = nullptr;
    float* vCache = nullptr;
    cohort::runtime::Event* ready = nullptr;  // the collective's input is computed
    cohort::runtime::Event* done = nullptr;   // the collective finished
  };
  TpEngine(const ModelConfig& model, const RunShape& shape, const ShardWeights* weights,
           cohort::Communicator* comm, cohort::DataType commType, bool keepLogits);
  cohort::Status allocate();
  cohort::Status deviceAlloc(std::size_t floats, float** out);
  cohort::Status allReduceParts(MicroBatch& m, std::size_t count);
  cohort::Status launch(std::function<void()> body);
  cohort::Status communicate(MicroBatch& m, bool gather, std::size_t count);
  cohort::Status consume(MicroBatch& m);
  // The step a kernel computes: given when the step is issued directly, read from
  // device memory when it runs as part of a replayed model.
  struct StepRef {
    int fixed = 0;
    const std::int32_t* at = nullptr;
    int get() const { return at != nullptr ? *at : fixed; }
  };
  /// Step 0 is the prefill of the whole prompt; then one new token per step.
  int positionOf(int step) const { return step == 0 ? 0 : shape_.promptLen + step - 1; }
  /// Queues step `step` (T new positions per sequence: the prompt, or 1).
  cohort::Status enqueueStep(StepRef step, int T);
  /// Captures one decode step into replay_[overlap] (once).
  cohort::Status captureDecodeStep();
  void attentionBlock(MicroBatch& m, int layer, int T, int p0);
  void mlpBlock(MicroBatch& m, int layer, int T);
  void headBlock(MicroBatch& m, int T);
  void sample(MicroBatch& m, int step);

  const ModelConfig model_;
  const RunShape shape_;
  const ShardWeights* weights_;
  cohort::Communicator* comm_;
  const cohort::DataType commType_;
  const bool keepLogits_;
  const int tp_;
  cohort::runtime::Stream* compute_ = nullptr;
  cohort::runtime::Stream* link_ = nullptr;
  std::vector<std::unique_ptr<MicroBatch>> micro_;
  std::vector<void*> allocations_;
  std::int32_t* tokens_ = nullptr;  // [batch x maxLen]: prompts, then generated tokens
  float* history_ = nullptr;        // [maxSteps x batch x vocab] when keepLogits_
  std::vector<std::int32_t> prompts_;
  int tokensPerSeq_ = 0;
  bool overlapRun_ = true;
  std::int32_t* stepAt_ = nullptr;  // device: the step a replayed decode step runs
  cohort::runtime::Model* replay_[2] = {nullptr, nullptr};  // by overlapRun_
  std::vector<double> issueSeconds_;  // per decode step of the last generation
  std::atomic<int> stepsDone_{0};
  std::vector<Interval> computeTimes_;  // written by the compute stream only
  std::vector<Interval> commTimes_;     // written by the link stream only
  double commBegin_ = 0;
};

}  // namespace tp
