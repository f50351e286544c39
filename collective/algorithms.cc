// The schedule builders: pure rank arithmetic, no I/O.
#include <fmt/format.h>

#include "collective/schedule.h"
#include "collective/steps.h"

namespace cohort::collective {

using namespace steps;

namespace {

// Power-of-two algorithms on any rank count: the first 2 * rem ranks pair up
// (rem = size - p, p the largest power of two <= size); each even one hands its
// vector to its odd neighbour and sits out until the unfold.
struct Fold {
  int p = 1, rem = 0;
  int vr = -1;  // this rank among the p that take part; -1 if it sits out
  int real(int v) const { return v < rem ? 2 * v + 1 : v + rem; }
};

Fold foldExtraRanks(Schedule* s, int rank, int size, std::size_t bytes) {
  Fold f;
  while (f.p * 2 <= size) f.p *= 2;
  f.rem = size - f.p;
  if (rank >= 2 * f.rem) {
    f.vr = rank - f.rem;
  } else if (rank % 2 == 0) {
    s->round().push_back(send(rank + 1, Buf::kOutput, 0, bytes));
  } else {
    s->round().push_back(recvReduce(rank - 1, {Buf::kOutput, 0}, {Buf::kOutput, 0}, bytes));
    f.vr = rank / 2;
  }
  return f;
}

// An out-of-place exchange schedule copies its input to the output in a round
// of its own only when it must: alone (size 1), or when a fold reads the
// output (a size that is not a power of two). Otherwise its first exchange
// reads the input, so the first round writes nothing the caller sees and can
// go with the argument check. Returns whether it added the copy.
bool copyInputFirst(Schedule* s, int size, bool inPlace, std::size_t bytes) {
  if (inPlace || (size != 1 && (size & (size - 1)) == 0)) return false;
  s->round().push_back(copy({Buf::kInput, 0}, {Buf::kOutput, 0}, bytes));
  return true;
}

// The folded ranks get the result back from their neighbours.
void unfoldExtraRanks(Schedule* s, int rank, int rem, std::size_t bytes) {
  if (rank >= 2 * rem) return;
  if (rank % 2 == 1) {
    s->round().push_back(send(rank - 1, Buf::kOutput, 0, bytes));
  } else {
    s->round().push_back(recv(rank + 1, Buf::kOutput, 0, bytes));
  }
}

const char* opName(Step::Op op) {
  switch (op) {
    case Step::Op::kSend: return "send";
    case Step::Op::kRecv: return "recv";
    case Step::Op::kRecvReduce: return "recvreduce";
    case Step::Op::kCopy: return "copy";
    case Step::Op::kReduce: return "reduce";
    case Step::Op::kCombine: return "combine";
    case Step::Op::kAverage: return "average";
    case Step::Op::kSignal: return "signal";
    case Step::Op::kWait: return "wait";
  }
  return "?";
}
const char* bufName(Buf b) { return b == Buf::kInput ? "in" : b == Buf::kOutput ? "out" : "tmp"; }
// "out+64", or "m2.out+64" for member 2's buffer.
std::string rangeName(const Range& r) {
  return r.member >= 0 ? fmt::format("m{}.{}+{}", r.member, bufName(r.buf), r.offset)
                       : fmt::format("{}+{}", bufName(r.buf), r.offset);
}

}  // namespace

std::string Schedule::toString() const {
  std::string out = algorithm + "\n";
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    for (const Step& s : rounds[r]) {
      if (s.op == Step::Op::kSignal || s.op == Step::Op::kWait) {
        out += fmt::format("r{}: {} {}\n", r, opName(s.op), s.phase != nullptr ? s.phase : "");
        continue;
      }
      out += fmt::format("r{}: {} {}B", r, opName(s.op), s.bytes);
      if (s.op != Step::Op::kRecv && s.op != Step::Op::kAverage) out += " " + rangeName(s.src);
      if (s.op == Step::Op::kCombine) out += ", " + rangeName(s.src2);
      if (s.op != Step::Op::kSend) out += " -> " + rangeName(s.dst);
      if (s.peer >= 0) out += fmt::format(" peer {}", s.peer);
      out += "\n";
    }
  }
  return out;
}

Block blockOf(std::size_t total, int parts, int i) {
  const auto p = static_cast<std::size_t>(parts);
  const auto k = static_cast<std::size_t>(i);
  const std::size_t base = total / p, extra = total % p;
  return Block{k * base + (k < extra ? k : extra), base + (k < extra ? 1 : 0)};
}

Schedule ringAllReduce(int rank, int size, std::size_t count, std::size_t elem, bool inPlace,
                       std::size_t chunkBytes) {
  Schedule s;
  s.algorithm = "ring";
  if (size == 1) {
    if (!inPlace) s.round().push_back(copy({Buf::kInput, 0}, {Buf::kOutput, 0}, count * elem));
    return s;
  }
  const int next = mod(rank + 1, size), prev = mod(rank - 1, size);
  // Every block is cut into the same number of chunks; chunk k of block b is
  // elements blockOf(length of b, chunks, k) of it.
  const std::size_t largest = blockOf(count, size, 0).count * elem;
  const std::size_t chunks =
      chunkBytes == 0 || largest <= chunkBytes ? 1 : (largest + chunkBytes - 1) / chunkBytes;
  auto piece = [&](int b, std::size_t k) {
    const Block block = blockOf(count, size, b);
    const Block c = blockOf(block.count, static_cast<int>(chunks), static_cast<int>(k));
    return Block{(block.offset + c.offset) * elem, c.count * elem};
  };
  // Step j < size - 1 is the reduce-scatter lap: a block is first sent straight
  // from the input; each arriving partial sum is reduced with this rank's input
  // into the output. The allgather lap follows (this rank owns block rank+1).
  // Chunk k takes step j in round k + j, so a chunk just reduced is sent on
  // while it is still in cache, and every round after the first few moves a
  // chunk of every step.
  const std::size_t steps = 2 * static_cast<std::size_t>(size - 1);
  for (std::size_t t = 0; t + 1 < chunks + steps; ++t) {
    auto& round = s.round();
    for (std::size_t k = t + 1 > steps ? t + 1 - steps : 0; k <= t && k < chunks; ++k) {
      const int j = static_cast<int>(t - k);
      if (j < size - 1) {
        const Block sb = piece(mod(rank - j, size), k), rb = piece(mod(rank - j - 1, size), k);
        round.push_back(send(next, j == 0 ? Buf::kInput : Buf::kOutput, sb.offset, sb.count));
        round.push_back(recvReduce(prev, {Buf::kInput, rb.offset}, {Buf::kOutput, rb.offset},
                                   rb.count));
      } else {
        const int g = j - (size - 1);
        const Block sb = piece(mod(rank + 1 - g, size), k), rb = piece(mod(rank - g, size), k);
        round.push_back(send(next, Buf::kOutput, sb.offset, sb.count));
        round.push_back(recv(prev, Buf::kOutput, rb.offset, rb.count));
      }
    }
  }
  return s;
}

// Latency first: log2(p) exchanges of the whole vector (plus a fold and an
// unfold for the ranks beyond the largest power of two p), each partner's
// vector received into scratch and added in the next round, so a send never
// reads what a receive writes. Both partners add the same two values: the
// result is the same on every rank (the ops commute).
//
// With a power-of-two size the partial sums stay in scratch until the last
// round: [0, bytes) holds this rank's running sum, [bytes, 2 bytes) the
// partner's vector. The caller's buffers are written in the last (local)
// round only, so every exchange can carry the argument check with its partner
// (the executor's progressive check: one message per partner and round).
static Schedule powerOfTwoRecursiveDoubling(int rank, int size, std::size_t bytes, bool inPlace) {
  Schedule s;
  s.algorithm = "recursive-doubling";
  const Buf mine = inPlace ? Buf::kOutput : Buf::kInput;
  const Range sum{Buf::kScratch, 0}, theirs{Buf::kScratch, bytes};
  s.scratchBytes = 2 * bytes;
  bool summing = false;  // whether `sum` holds this rank's running sum
  for (int mask = 1; mask < size; mask *= 2) {
    auto& round = s.round();
    if (mask > 1) {
      if (!summing) round.push_back(copy({mine, 0}, sum, bytes));
      round.push_back(reduceLocal(theirs, sum, bytes));
      summing = true;
    }
    round.push_back(send(rank ^ mask, summing ? Buf::kScratch : mine, 0, bytes));
    round.push_back(recv(rank ^ mask, Buf::kScratch, bytes, bytes));
  }
  auto& last = s.round();
  if (summing || !inPlace) last.push_back(copy(summing ? sum : Range{mine, 0}, {Buf::kOutput, 0}, bytes));
  last.push_back(reduceLocal(theirs, {Buf::kOutput, 0}, bytes));
  return s;
}

Schedule recursiveDoublingAllReduce(int rank, int size, std::size_t count, std::size_t elem,
                                    bool inPlace) {
  const std::size_t bytes = count * elem;
  if (size > 1 && (size & (size - 1)) == 0) {
    return powerOfTwoRecursiveDoubling(rank, size, bytes, inPlace);
  }
  Schedule s;
  s.algorithm = "recursive-doubling";
  // Without the copy first, the output is made when the first partner's
  // vector is added.
  const bool copyFirst = copyInputFirst(&s, size, inPlace, bytes);
  if (size == 1) return s;
  s.scratchBytes = bytes;
  const Fold f = foldExtraRanks(&s, rank, size, bytes);
  const int p = f.p, vr = f.vr;
  if (vr >= 0) {
    bool copyLater = !inPlace && !copyFirst;
    auto addPartner = [&](std::vector<Step>& round) {  // the vector waiting in scratch
      if (copyLater) round.push_back(copy({Buf::kInput, 0}, {Buf::kOutput, 0}, bytes));
      copyLater = false;
      round.push_back(reduceLocal({Buf::kScratch, 0}, {Buf::kOutput, 0}, bytes));
    };
    bool pending = false;
    for (int mask = 1; mask < p; mask *= 2) {
      auto& round = s.round();
      if (pending) addPartner(round);
      round.push_back(send(f.real(vr ^ mask), copyLater ? Buf::kInput : Buf::kOutput, 0, bytes));
      round.push_back(recv(f.real(vr ^ mask), Buf::kScratch, 0, bytes));
      pending = true;
    }
    if (pending) addPartner(s.round());
  }
  unfoldExtraRanks(&s, rank, f.rem, bytes);
  return s;
}

Schedule halvingDoublingAllReduce(int rank, int size, std::size_t count, std::size_t elem,
                                  bool inPlace) {
  Schedule s;
  s.algorithm = "halving-doubling";
  const std::size_t bytes = count * elem;
  // Without the copy first, the first exchange reads the input.
  const bool copyFirst = copyInputFirst(&s, size, inPlace, bytes);
  if (size == 1) return s;
  const Fold f = foldExtraRanks(&s, rank, size, bytes);
  const int p = f.p, vr = f.vr;
  if (vr >= 0) {
    std::vector<std::pair<std::size_t, std::size_t>> kept;  // element ranges, outermost first
    std::size_t lo = 0, hi = count;
    Buf from = inPlace || copyFirst ? Buf::kOutput : Buf::kInput;
    for (int mask = p / 2; mask >= 1; mask /= 2) {
      const int partner = f.real(vr ^ mask);
      const std::size_t mid = lo + (hi - lo) / 2;
      const bool lower = (vr & mask) == 0;
      const std::size_t keepLo = lower ? lo : mid, keepHi = lower ? mid : hi;
      const std::size_t giveLo = lower ? mid : lo, giveHi = lower ? hi : mid;
      auto& round = s.round();
      round.push_back(send(partner, from, giveLo * elem, (giveHi - giveLo) * elem));
      round.push_back(recvReduce(partner, {from, keepLo * elem}, {Buf::kOutput, keepLo * elem},
                                 (keepHi - keepLo) * elem));
      from = Buf::kOutput;
      kept.emplace_back(lo, hi);
      lo = keepLo;
      hi = keepHi;
    }
    for (int mask = 1, level = static_cast<int>(kept.size()) - 1; mask < p; mask *= 2, --level) {
      const int partner = f.real(vr ^ mask);
      const auto [plo, phi] = kept[static_cast<std::size_t>(level)];
      const std::size_t mid = plo + (phi - plo) / 2;
      const bool lower = (vr & mask) == 0;
      const std::size_t otherLo = lower ? mid : plo, otherHi = lower ? phi : mid;
      auto& round = s.round();
      round.push_back(send(partner, Buf::kOutput, lo * elem, (hi - lo) * elem));
      round.push_back(recv(partner, Buf::kOutput, otherLo * elem, (otherHi - otherLo) * elem));
      lo = plo;
      hi = phi;
    }
  }
  unfoldExtraRanks(&s, rank, f.rem, bytes);
  return s;
}

Schedule ringAllGather(int rank, int size, std::size_t count, std::size_t elem, bool inPlace,
                       std::size_t strideBytes) {
  Schedule s;
  s.algorithm = "ring";
  const std::size_t bytes = count * elem;
  const std::size_t stride = strideBytes == 0 ? bytes : strideBytes;
  if (!inPlace) {
    s.round().push_back(copy({Buf::kInput, 0}, {Buf::kOutput, stride * static_cast<std::size_t>(rank)}, bytes));
  }
  const int next = mod(rank + 1, size), prev = mod(rank - 1, size);
  for (int step = 0; step < size - 1; ++step) {
    const auto sb = static_cast<std::size_t>(mod(rank - step, size));
    const auto rb = static_cast<std::size_t>(mod(rank - step - 1, size));
    auto& round = s.round();
    round.push_back(send(next, Buf::kOutput, sb * stride, bytes));
    round.push_back(recv(prev, Buf::kOutput, rb * stride, bytes));
  }
  return s;
}

Schedule ringReduceScatter(int rank, int size, std::size_t count, std::size_t elem,
                           std::size_t pieceBytes) {
  Schedule s;
  s.algorithm = "ring";
  const std::size_t bytes = count * elem;
  if (size == 1) {
    s.round().push_back(copy({Buf::kInput, 0}, {Buf::kOutput, 0}, bytes));
    return s;
  }
  const std::size_t piece = std::min(bytes, std::max(elem, pieceBytes / elem * elem));
  s.scratchBytes = 2 * piece;  // the partial sums in flight, alternating
  const int next = mod(rank + 1, size), prev = mod(rank - 1, size);
  for (std::size_t at = 0; at < bytes || (bytes == 0 && at == 0); at += std::max(piece, elem)) {
    const std::size_t len = std::min(piece, bytes - at);
    for (int step = 0; step < size - 1; ++step) {
      const auto sb = static_cast<std::size_t>(mod(rank - step - 1, size));
      const auto rb = static_cast<std::size_t>(mod(rank - step - 2, size));
      const bool last = step == size - 2;
      const std::size_t mine = static_cast<std::size_t>(step % 2) * piece;
      const std::size_t theirs = static_cast<std::size_t>((step + 1) % 2) * piece;
      auto& round = s.round();
      round.push_back(step == 0 ? send(next, Buf::kInput, sb * bytes + at, len)
                                : send(next, Buf::kScratch, theirs, len));
      const Range dst = last ? Range{Buf::kOutput, at} : Range{Buf::kScratch, mine};
      round.push_back(recvReduce(prev, {Buf::kInput, rb * bytes + at}, dst, len));
    }
  }
  return s;
}

Schedule treeBroadcast(int rank, int size, int root, std::size_t count, std::size_t elem) {
  Schedule s;
  s.algorithm = "tree";
  const int vr = mod(rank - root, size);
  auto real = [&](int v) { return mod(v + root, size); };
  for (int mask = 1; mask < size; mask *= 2) {
    std::vector<Step> round;
    if (vr < mask && vr + mask < size) round.push_back(send(real(vr + mask), Buf::kOutput, 0, count * elem));
    if (vr >= mask && vr < 2 * mask) round.push_back(recv(real(vr - mask), Buf::kOutput, 0, count * elem));
    if (!round.empty()) s.rounds.push_back(std::move(round));
  }
  return s;
}

Schedule chainBroadcast(int rank, int size, int root, std::size_t count, std::size_t elem,
                        std::size_t chunkBytes) {
  Schedule s;
  s.algorithm = "chain";
  const int vr = mod(rank - root, size);
  const std::size_t bytes = count * elem;
  const std::size_t chunk = std::max<std::size_t>(elem, chunkBytes / elem * elem);
  const std::size_t chunks = bytes == 0 ? 0 : (bytes + chunk - 1) / chunk;
  auto piece = [&](std::size_t k) { return std::min(chunk, bytes - k * chunk); };
  const int next = mod(rank + 1, size), prev = mod(rank - 1, size);
  const bool hasPrev = vr > 0, hasNext = vr < size - 1;
  for (std::size_t k = 0; k <= chunks; ++k) {
    std::vector<Step> round;
    if (hasPrev && k < chunks) round.push_back(recv(prev, Buf::kOutput, k * chunk, piece(k)));
    if (hasNext) {
      // The root sends chunk k at once; the others forward what arrived last round.
      if (!hasPrev && k < chunks) round.push_back(send(next, Buf::kOutput, k * chunk, piece(k)));
      if (hasPrev && k >= 1) round.push_back(send(next, Buf::kOutput, (k - 1) * chunk, piece(k - 1)));
    }
    if (!round.empty()) s.rounds.push_back(std::move(round));
  }
  return s;
}

Schedule treeReduce(int rank, int size, int root, std::size_t count, std::size_t elem,
                    bool inPlace) {
  Schedule s;
  s.algorithm = "tree";
  const std::size_t bytes = count * elem;
  const int vr = mod(rank - root, size);
  auto real = [&](int v) { return mod(v + root, size); };
  const Buf acc = rank == root ? Buf::kOutput : Buf::kScratch;
  if (rank != root) s.scratchBytes = bytes;
  if (!(rank == root && inPlace)) s.round().push_back(copy({Buf::kInput, 0}, {acc, 0}, bytes));
  for (int mask = 1; mask < size; mask *= 2) {
    if (vr & mask) {
      s.round().push_back(send(real(vr - mask), acc, 0, bytes));
      break;
    }
    if (vr + mask < size) s.round().push_back(recvReduce(real(vr + mask), {acc, 0}, {acc, 0}, bytes));
  }
  return s;
}

}  // namespace cohort::collective
