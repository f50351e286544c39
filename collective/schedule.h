// Algorithms as data: an algorithm builds a Schedule (rounds of steps over byte
// ranges of the operation's buffers); the Executor runs it with connections.
// Schedules print, so tests check them without any I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cohort::collective {

enum class Buf : std::uint8_t { kInput, kOutput, kScratch };

/// A place in a buffer: this rank's own, or, in a schedule over ranks that map each
/// other's memory (Schedule::shared), group member `member`'s (a put or a get).
struct Range {
  std::size_t offset = 0;  // bytes
  int member = -1;         // -1: this rank's buffer
  Buf buf = Buf::kOutput;
  Range() = default;
  Range(Buf b, std::size_t off, int m = -1) : offset(off), member(m), buf(b) {}
};

struct Step {
  enum class Op : std::uint8_t {
    kSend,        // send `bytes` from src to peer
    kRecv,        // receive `bytes` from peer into dst
    kRecvReduce,  // dst = src (op) message from peer
    kCopy,        // dst = src (either may be a member's: get, put)
    kReduce,      // dst = dst (op) src
    kCombine,     // dst = src (op) src2: the first step of a reduction over members
    kAverage,     // dst /= the group's size (an average's last step)
    kSignal,      // this rank arrived at the group's next barrier, named `phase`
    kWait,        // every member arrived at this rank's last signal
  };
  Op op = Op::kCopy;
  int peer = -1;
  Range src;
  Range dst;
  std::size_t bytes = 0;
  Range src2;                   // kCombine's second operand
  const char* phase = nullptr;  // kSignal, kWait: the barrier's name, for errors and traces
  Step() = default;
  Step(Op o, int p, Range s, Range d, std::size_t b, Range s2 = {}, const char* ph = nullptr)
      : op(o), peer(p), src(s), dst(d), bytes(b), src2(s2), phase(ph) {}
};

/// Rounds run in order. In a round, local steps (copy, reduce) run first, then
/// every send and receive of the round is posted and the round completes when all
/// are done: the sends and receives of one round progress together.
/// A shared schedule (the direct algorithms among the ranks of one node, which
/// map each other's buffers) has no messages: its steps run in order, members'
/// buffers are read and written in place, and signal/wait pairs order them; its
/// first signal carries the call's fingerprint and this rank's buffers.
struct Schedule {
  std::string algorithm;
  std::vector<std::vector<Step>> rounds;
  std::size_t scratchBytes = 0;
  bool shared = false;
  /// Whether a shared schedule's steps name members' inputs, members' outputs
  /// (its first wait maps only those: each is a line of the member's slot).
  bool memberInputs = false;
  bool memberOutputs = false;
  /// Copies into a member's output use non-temporal stores (the operation's
  /// buffers outgrow the last-level cache).
  bool streaming = false;
  /// One line per step: "r0: send 1024B out+0 -> 1", for tests and COHORT_LOG.
  std::string toString() const;
  /// Appends a new round and returns it.
  std::vector<Step>& round() { return rounds.emplace_back(); }
};

/// Splits `total` elements into `parts` near-equal blocks (the first total % parts
/// get one more); returns the element offset and count of block i.
struct Block {
  std::size_t offset;
  std::size_t count;
};
Block blockOf(std::size_t total, int parts, int i);

// Builders. All sizes are in elements of `elem` bytes; rank/size are positions in
// the group the schedule runs over (peer numbers in steps are group ranks).
/// With `chunkBytes`, blocks larger than that are cut into chunks that move
/// through the ring one round apart (a pipeline); 0 moves whole blocks.
Schedule ringAllReduce(int rank, int size, std::size_t count, std::size_t elem, bool inPlace,
                       std::size_t chunkBytes = 0);
Schedule halvingDoublingAllReduce(int rank, int size, std::size_t count, std::size_t elem,
                                  bool inPlace);
/// Whole-vector exchanges (log2 rounds instead of 2 log2): for small vectors.
/// Scratch: two vectors with a power-of-two size (nothing the caller sees is
/// written before the last round), else one.
Schedule recursiveDoublingAllReduce(int rank, int size, std::size_t count, std::size_t elem,
                                    bool inPlace);
/// Block b of the output starts at b * strideBytes (0: packed, count * elem).
Schedule ringAllGather(int rank, int size, std::size_t count, std::size_t elem, bool inPlace,
                       std::size_t strideBytes = 0);
/// Input: size * count elements; output: count (this rank's block). The block
/// goes round the ring in pieces of at most `pieceBytes` (whole elements), so the
/// partial sums in flight take at most 2 * pieceBytes of scratch.
Schedule ringReduceScatter(int rank, int size, std::size_t count, std::size_t elem,
                           std::size_t pieceBytes = ~std::size_t(0));
Schedule treeBroadcast(int rank, int size, int root, std::size_t count, std::size_t elem);
/// Chain with pipelined chunks: for large broadcasts.
Schedule chainBroadcast(int rank, int size, int root, std::size_t count, std::size_t elem,
                        std::size_t chunkBytes);
/// The root's result lands in the output; others use scratch.
Schedule treeReduce(int rank, int size, int root, std::size_t count, std::size_t elem,
                    bool inPlace);
Schedule linearGather(int rank, int size, int root, std::size_t count, std::size_t elem);
Schedule linearScatter(int rank, int size, int root, std::size_t count, std::size_t elem);
/// One round: this rank's block to every peer, every peer's block received.
Schedule linearAllGather(int rank, int size, std::size_t count, std::size_t elem, bool inPlace);
Schedule linearAllToAll(int rank, int size, std::size_t count, std::size_t elem);
/// One round: the root's buffer to every rank.
Schedule linearBroadcast(int rank, int size, int root, std::size_t count, std::size_t elem);
/// One round: every block to its owner (into scratch), then a local sum.
Schedule linearReduceScatter(int rank, int size, std::size_t count, std::size_t elem);
Schedule pairwiseAllToAll(int rank, int size, std::size_t count, std::size_t elem);

}  // namespace cohort::collective

namespace cohort::collective {
/// Zero-byte messages in log2(size) rounds.
Schedule disseminationBarrier(int rank, int size);
}  // namespace cohort::collective
