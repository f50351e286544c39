// The example's transformer decoder: its shape and its weights, sharded the
// Megatron way for tensor parallelism.
//
// Weights are deterministic: every element is a counter-based hash of (tensor,
// index in the full matrix), so a rank generates just its shard and a
// single-device run generates the whole model, and both hold the same numbers.
#pragma once

#include <cohort/status.h>

#include <cstdint>
#include <vector>

/// Returns the Status of `expr` from the enclosing function unless it is ok.
#define TP_TRY(expr)                         \
  do {                                       \
    ::cohort::Status tp_status_ = (expr);    \
    if (!tp_status_.ok()) return tp_status_; \
  } while (0)

namespace tp {

/// The decoder's shape. A plain value.
struct ModelConfig {
  int layers = 4;
  int hidden = 512;
  int heads = 8;
  int vocab = 4096;
  int maxLen = 64;  ///< KV cache length: prompt + generated tokens
  int ffn() const { return 4 * hidden; }
  int headDim() const { return hidden / heads; }
};

/// splitmix64: a fixed-seed generator; also used as a hash of a counter.
std::uint64_t splitmix64(std::uint64_t x);

/// Uniform in [-scale, scale): element `index` of tensor `tensor`.
float weightValue(std::uint64_t tensor, std::uint64_t index, float scale);

/// Prompt token i of sequence b (deterministic, in [0, vocab)).
std::int32_t promptToken(int b, int i, int vocab);

/// One layer's shard. Column-parallel: wqkv [hidden x 3*localHeads*headDim] (this
/// rank's heads of Q, K and V), w1 [hidden x ffn/tp]. Row-parallel: wo
/// [localHeads*headDim x hidden], w2 [ffn/tp x hidden]. Norm gains are replicated.
struct LayerWeights {
  float* norm1 = nullptr;
  float* wqkv = nullptr;
  float* wo = nullptr;
  float* norm2 = nullptr;
  float* w1 = nullptr;
  float* w2 = nullptr;
};

/// One rank's weights in device memory of the device current when load() ran.
/// Owns the allocations (freed by the destructor). Not thread-safe; read-only
/// once loaded.
class ShardWeights {
 public:
  ShardWeights() = default;
  ~ShardWeights();
  ShardWeights(const ShardWeights&) = delete;
  ShardWeights& operator=(const ShardWeights&) = delete;

  /// Rank `rank` of `tp`: checks that heads and vocab divide by tp.
  cohort::Status load(const ModelConfig& config, int tp, int rank);

  std::vector<LayerWeights> layers;
  float* embed = nullptr;      ///< [vocab x hidden], replicated
  float* position = nullptr;   ///< [maxLen x hidden], replicated
  float* finalNorm = nullptr;  ///< [hidden]
  float* wout = nullptr;       ///< [hidden x vocab/tp], column-parallel (vocab-sharded)

 private:
  cohort::Status upload(const std::vector<float>& host, float** out);
  std::vector<void*> allocations_;
};

/// Checks a configuration for a tp-way split; kInvalidArgument naming the values.
cohort::Status checkConfig(const ModelConfig& config, int tp);

}  // namespace tp
