#include "tp_inference/model.h"

#include <cohort/runtime.h>
#include <fmt/format.h>

#include <cmath>

namespace tp {

namespace rt = cohort::runtime;
using cohort::ErrorCode;
using cohort::Status;

namespace {

constexpr std::uint64_t kSeed = 0x5eed2024;

// Tensor ids: global tensors below 256, layer l's at (l + 1) * 256 + kind.
enum Kind : std::uint64_t { kEmbed = 1, kPosition, kFinalNorm, kWout };
enum LayerKind : std::uint64_t { kNorm1 = 1, kQ, kK, kV, kWo, kNorm2, kW1, kW2 };
std::uint64_t layerTensor(int layer, LayerKind kind) {
  return (static_cast<std::uint64_t>(layer) + 1) * 256 + kind;
}

// rows x cols block of a full [fullRows x fullCols] tensor starting at (row0, col0).
std::vector<float> block(std::uint64_t tensor, int fullCols, int row0, int rows, int col0, int cols,
                         float scale) {
  std::vector<float> out(static_cast<std::size_t>(rows) * cols);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) {
      const auto index = static_cast<std::uint64_t>(row0 + i) * fullCols + (col0 + j);
      out[static_cast<std::size_t>(i) * cols + j] = weightValue(tensor, index, scale);
    }
  }
  return out;
}

// Norm gains near 1, so each layer's norm is a different function.
std::vector<float> gains(std::uint64_t tensor, int n) {
  std::vector<float> out = block(tensor, n, 0, 1, 0, n, 0.1f);
  for (float& g : out) g += 1.0f;
  return out;
}

// Uniform weights with variance 1 / fanIn keep activations near unit scale.
float initScale(int fanIn) { return std::sqrt(3.0f / static_cast<float>(fanIn)); }

}  // namespace

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float weightValue(std::uint64_t tensor, std::uint64_t index, float scale) {
  const std::uint64_t bits = splitmix64(splitmix64(kSeed ^ (tensor << 32)) + index);
  const float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  return (2.0f * unit - 1.0f) * scale;
}

std::int32_t promptToken(int b, int i, int vocab) {
  const std::uint64_t h = splitmix64(kSeed + 7919u * static_cast<std::uint64_t>(b) + i);
  return static_cast<std::int32_t>(h % static_cast<std::uint64_t>(vocab));
}

Status checkConfig(const ModelConfig& c, int tp) {
  if (c.layers < 1 || c.hidden < 1 || c.heads < 1 || c.vocab < 2 || c.maxLen < 2) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("model: layers {}, hidden {}, heads {}, vocab {}, length {}: each "
                              "must be positive (vocab and length at least 2)",
                              c.layers, c.hidden, c.heads, c.vocab, c.maxLen));
  }
  if (c.hidden % c.heads != 0) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("model: hidden {} is not a multiple of heads {}", c.hidden, c.heads));
  }
  if (c.heads % tp != 0 || c.vocab % tp != 0) {
    return Status(ErrorCode::kInvalidArgument,
                  fmt::format("model: heads {} and vocab {} must both divide by --tp {}", c.heads,
                              c.vocab, tp));
  }
  return Status::Ok();
}

ShardWeights::~ShardWeights() {
  for (void* p : allocations_) (void)rt::deviceFree(p);
}

Status ShardWeights::upload(const std::vector<float>& host, float** out) {
  void* dev = nullptr;
  const std::size_t bytes = host.size() * sizeof(float);
  Status s = rt::deviceMalloc(&dev, bytes);
  if (!s.ok()) return s;
  allocations_.push_back(dev);
  *out = static_cast<float*>(dev);
  return rt::memcpy(dev, bytes, host.data(), bytes, rt::MemcpyKind::kHostToDevice);
}

Status ShardWeights::load(const ModelConfig& c, int tp, int rank) {
  Status s = checkConfig(c, tp);
  if (!s.ok()) return s;
  const int h = c.hidden, local = c.hidden / tp, ffn = c.ffn() / tp, vocab = c.vocab / tp;
  layers.assign(static_cast<std::size_t>(c.layers), LayerWeights{});
  for (int l = 0; l < c.layers; ++l) {
    LayerWeights& w = layers[static_cast<std::size_t>(l)];
    // This rank's heads of Q, K and V side by side: [h x 3*local].
    std::vector<float> qkv(static_cast<std::size_t>(h) * 3 * local);
    const LayerKind parts[3] = {kQ, kK, kV};
    for (int p = 0; p < 3; ++p) {
      const std::vector<float> b =
          block(layerTensor(l, parts[p]), h, 0, h, rank * local, local, initScale(h));
      for (int i = 0; i < h; ++i) {
        for (int j = 0; j < local; ++j) {
          qkv[static_cast<std::size_t>(i) * 3 * local + p * local + j] =
              b[static_cast<std::size_t>(i) * local + j];
        }
      }
    }
    if (!(s = upload(gains(layerTensor(l, kNorm1), h), &w.norm1)).ok()) return s;
    if (!(s = upload(qkv, &w.wqkv)).ok()) return s;
    if (!(s = upload(block(layerTensor(l, kWo), h, rank * local, local, 0, h, initScale(h)), &w.wo))
             .ok())
      return s;
    if (!(s = upload(gains(layerTensor(l, kNorm2), h), &w.norm2)).ok()) return s;
    if (!(s = upload(block(layerTensor(l, kW1), c.ffn(), 0, h, rank * ffn, ffn, initScale(h)),
                     &w.w1))
             .ok())
      return s;
    if (!(s = upload(block(layerTensor(l, kW2), h, rank * ffn, ffn, 0, h, initScale(c.ffn())),
                     &w.w2))
             .ok())
      return s;
  }
  if (!(s = upload(block(kEmbed, h, 0, c.vocab, 0, h, 1.7f), &embed)).ok()) return s;
  if (!(s = upload(block(kPosition, h, 0, c.maxLen, 0, h, 0.8f), &position)).ok()) return s;
  if (!(s = upload(gains(kFinalNorm, h), &finalNorm)).ok()) return s;
  // Logits with a standard deviation near 3: a clear greedy choice most steps.
  return upload(block(kWout, c.vocab, 0, h, rank * vocab, vocab, 3.0f * initScale(h)), &wout);
}

}  // namespace tp
