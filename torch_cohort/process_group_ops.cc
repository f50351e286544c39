// The c10d operations, each checked first (nothing is sent for a bad call), then
// one Cohort call. Lists of tensors go through one flat tensor per call: Cohort
// takes one buffer per rank, and the copy into or out of it is what Gloo does too.
#include <c10/util/Exception.h>

#include <numeric>

#include "torch_cohort/process_group_cohort.h"
#include "torch_cohort/tensor_args.h"

namespace cohort::torch_cohort {

namespace {

// One contiguous 1-D tensor holding `list` one after the other.
at::Tensor flatten(const std::vector<at::Tensor>& list) {
  std::vector<at::Tensor> views;
  views.reserve(list.size());
  for (const auto& t : list) views.push_back(t.reshape({-1}));
  return at::cat(views);
}

// Copies `flat` back into `list` (the inverse of flatten).
void unflatten(const at::Tensor& flat, const std::vector<at::Tensor>& list) {
  int64_t offset = 0;
  for (const auto& t : list) {
    t.view({-1}).copy_(flat.narrow(0, offset, t.numel()));
    offset += t.numel();
  }
}

// Elements of Cohort's type per tensor element (2 for complex).
std::size_t perElement(const at::Tensor& t) {
  return t.numel() == 0 ? 1 : bufferOf(t).count / static_cast<std::size_t>(t.numel());
}

// Counts and displacements (in Cohort elements) of `splits` rows of `t`; equal
// splits of its first dimension when `splits` is empty.
void splitLayout(const at::Tensor& t, const std::vector<int64_t>& splits, int n, const char* side,
                 std::vector<std::size_t>* counts, std::vector<std::size_t>* displs) {
  const int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const std::size_t rowElems =
      rows == 0 ? 0 : static_cast<std::size_t>(t.numel() / rows) * perElement(t);
  std::vector<int64_t> s = splits;
  if (s.empty()) {
    TORCH_CHECK(rows % n == 0, "cohort all_to_all_single: the ", side, " has ", rows,
                " rows, which ", n, " ranks cannot split equally; give split sizes");
    s.assign(static_cast<std::size_t>(n), rows / n);
  }
  TORCH_CHECK(static_cast<int>(s.size()) == n, "cohort all_to_all_single: ", s.size(), " ",
              side, " split sizes for a group of ", n);
  int64_t total = 0;
  for (int64_t x : s) {
    TORCH_CHECK(x >= 0, "cohort all_to_all_single: negative ", side, " split size ", x);
    total += x;
  }
  TORCH_CHECK(total == rows, "cohort all_to_all_single: the ", side, " split sizes add up to ",
              total, " but the ", side, " has ", rows, " rows");
  counts->clear();
  displs->clear();
  std::size_t at = 0;
  for (int64_t x : s) {
    counts->push_back(static_cast<std::size_t>(x) * rowElems);
    displs->push_back(at);
    at += counts->back();
  }
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = single(tensors, "broadcast");
  checkTensor(t, "broadcast", "tensor");
  checkRoot(opts.rootRank, "broadcast");
  TORCH_CHECK(opts.rootTensor == 0, "cohort broadcast: root tensor ", opts.rootTensor,
              " of one tensor");
  const Buffer b = bufferOf(t);
  const int root = static_cast<int>(opts.rootRank);
  return launch(c10d::OpType::BROADCAST, "broadcast", tensors, {},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.broadcast(b.data, b.count, b.type, root, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  const at::Tensor& t = single(tensors, "all_reduce");
  checkTensor(t, "all_reduce", "tensor");
  const ReduceOp op = reduceOpFor(opts.reduceOp, t.scalar_type(), "all_reduce");
  const Buffer b = bufferOf(t);
  return launch(c10d::OpType::ALLREDUCE, "all_reduce", tensors, {},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.allReduce(b.data, b.data, b.count, b.type, op, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "cohort all_reduce_coalesced: no tensors");
  for (const auto& t : tensors) checkSameType(t, tensors[0], "all_reduce_coalesced", "tensor");
  const ReduceOp op = reduceOpFor(opts.reduceOp, tensors[0].scalar_type(), "all_reduce_coalesced");
  at::Tensor flat = flatten(tensors);
  const Buffer b = bufferOf(flat);
  std::vector<at::Tensor> outputs = tensors;
  return launch(c10d::OpType::ALLREDUCE_COALESCED, "all_reduce_coalesced", tensors, {flat},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.allReduce(b.data, b.data, b.count, b.type, op, s);
                },
                [flat, outputs] { unflatten(flat, outputs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  const at::Tensor& t = single(tensors, "reduce");
  checkTensor(t, "reduce", "tensor");
  checkRoot(opts.rootRank, "reduce");
  const ReduceOp op = reduceOpFor(opts.reduceOp, t.scalar_type(), "reduce");
  const Buffer b = bufferOf(t);
  const int root = static_cast<int>(opts.rootRank);
  return launch(c10d::OpType::REDUCE, "reduce", tensors, {},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.reduce(b.data, b.data, b.count, b.type, op, root, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  const at::Tensor& in = single(inputs, "all_gather");
  checkTensor(in, "all_gather", "input");
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(),
              "cohort all_gather: needs one output list of ", getSize(), " tensors");
  for (const auto& o : outputs[0]) checkLike(o, in, "all_gather", "an output tensor");
  at::Tensor flat = at::empty({getSize() * in.numel()}, in.options());
  const Buffer bi = bufferOf(in), bo = bufferOf(flat);
  std::vector<at::Tensor> list = outputs[0];
  return launch(c10d::OpType::ALLGATHER, "all_gather", list, {in, flat},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.allGather(bi.data, bo.data, bi.count, bi.type, s);
                },
                [flat, list] { unflatten(flat, list); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) {
  checkTensor(input, "all_gather_into_tensor", "input");
  checkSameType(output, input, "all_gather_into_tensor", "output");
  TORCH_CHECK(output.numel() == getSize() * input.numel(), "cohort all_gather_into_tensor: the "
              "output has ", output.numel(), " elements (sizes ", output.sizes(), "), not ",
              getSize(), " x ", input.numel());
  const Buffer bi = bufferOf(input), bo = bufferOf(output);
  return launch(c10d::OpType::_ALLGATHER_BASE, "all_gather_into_tensor", {output}, {input},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.allGather(bi.data, bo.data, bi.count, bi.type, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(!inputs.empty(), "cohort all_gather_coalesced: no tensors");
  TORCH_CHECK(static_cast<int>(outputLists.size()) == getSize(), "cohort all_gather_coalesced: ",
              outputLists.size(), " output lists for a group of ", getSize());
  for (const auto& t : inputs) checkSameType(t, inputs[0], "all_gather_coalesced", "input");
  for (const auto& list : outputLists) {
    TORCH_CHECK(list.size() == inputs.size(), "cohort all_gather_coalesced: an output list has ",
                list.size(), " tensors, the input ", inputs.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      checkLike(list[i], inputs[i], "all_gather_coalesced", "an output tensor");
    }
  }
  at::Tensor in = flatten(inputs);
  at::Tensor flat = at::empty({getSize() * in.numel()}, in.options());
  const Buffer bi = bufferOf(in), bo = bufferOf(flat);
  std::vector<at::Tensor> all;
  for (const auto& list : outputLists) all.insert(all.end(), list.begin(), list.end());
  return launch(c10d::OpType::ALLGATHER_COALESCED, "all_gather_coalesced", all, {in, flat},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.allGather(bi.data, bo.data, bi.count, bi.type, s);
                },
                [flat, all] { unflatten(flat, all); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  const at::Tensor& in = single(inputs, "gather");
  checkTensor(in, "gather", "input");
  checkRoot(opts.rootRank, "gather");
  const int root = static_cast<int>(opts.rootRank);
  at::Tensor flat;
  std::vector<at::Tensor> list;
  if (getRank() == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(),
                "cohort gather: the root needs one output list of ", getSize(), " tensors");
    list = outputs[0];
    for (const auto& o : list) checkLike(o, in, "gather", "an output tensor");
    flat = at::empty({getSize() * in.numel()}, in.options());
  } else {
    TORCH_CHECK(outputs.empty(), "cohort gather: only the root (rank ", root,
                ") takes an output list");
  }
  const Buffer bi = bufferOf(in);
  void* out = flat.defined() ? flat.data_ptr() : nullptr;
  std::function<void()> finish;
  if (flat.defined()) finish = [flat, list] { unflatten(flat, list); };
  return launch(c10d::OpType::GATHER, "gather", list, {in, flat},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.gather(bi.data, out, bi.count, bi.type, root, s);
                },
                std::move(finish));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  const at::Tensor& out = single(outputs, "scatter");
  checkTensor(out, "scatter", "output");
  checkRoot(opts.rootRank, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  at::Tensor flat;
  if (getRank() == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(),
                "cohort scatter: the root needs one input list of ", getSize(), " tensors");
    for (const auto& i : inputs[0]) checkLike(i, out, "scatter", "an input tensor");
    flat = flatten(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty(), "cohort scatter: only the root (rank ", root,
                ") takes an input list");
  }
  const Buffer bo = bufferOf(out);
  const void* in = flat.defined() ? flat.data_ptr() : nullptr;
  return launch(c10d::OpType::SCATTER, "scatter", outputs, {flat},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.scatter(in, bo.data, bo.count, bo.type, root, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& out = single(outputs, "reduce_scatter");
  checkTensor(out, "reduce_scatter", "output");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(),
              "cohort reduce_scatter: needs one input list of ", getSize(), " tensors");
  for (const auto& i : inputs[0]) checkLike(i, out, "reduce_scatter", "an input tensor");
  const ReduceOp op = reduceOpFor(opts.reduceOp, out.scalar_type(), "reduce_scatter");
  at::Tensor flat = flatten(inputs[0]);
  const Buffer bi = bufferOf(flat), bo = bufferOf(out);
  return launch(c10d::OpType::REDUCE_SCATTER, "reduce_scatter", outputs, {flat},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.reduceScatter(bi.data, bo.data, bo.count, bo.type, op, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  checkTensor(output, "reduce_scatter_tensor", "output");
  checkSameType(input, output, "reduce_scatter_tensor", "input");
  TORCH_CHECK(input.numel() == getSize() * output.numel(), "cohort reduce_scatter_tensor: the "
              "input has ", input.numel(), " elements (sizes ", input.sizes(), "), not ",
              getSize(), " x ", output.numel());
  const ReduceOp op = reduceOpFor(opts.reduceOp, output.scalar_type(), "reduce_scatter_tensor");
  const Buffer bi = bufferOf(input), bo = bufferOf(output);
  return launch(c10d::OpType::_REDUCE_SCATTER_BASE, "reduce_scatter_tensor", {output}, {input},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.reduceScatter(bi.data, bo.data, bo.count, bo.type, op, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outputSplits,
    std::vector<int64_t>& inputSplits, const c10d::AllToAllOptions& opts) {
  checkTensor(input, "all_to_all_single", "input");
  checkSameType(output, input, "all_to_all_single", "output");
  const Buffer bi = bufferOf(input), bo = bufferOf(output);
  if (outputSplits.empty() && inputSplits.empty()) {
    TORCH_CHECK(output.numel() == input.numel(), "cohort all_to_all_single: the output has ",
                output.numel(), " elements, the input ", input.numel());
    TORCH_CHECK(bi.count % static_cast<std::size_t>(getSize()) == 0,
                "cohort all_to_all_single: ", input.numel(), " elements do not split equally over ",
                getSize(), " ranks");
    const std::size_t count = bi.count / static_cast<std::size_t>(getSize());
    return launch(c10d::OpType::ALLTOALL_BASE, "all_to_all_single", {output}, {input},
                  [&](Communicator& c, runtime::Stream* s) {
                    return c.allToAll(bi.data, bo.data, count, bi.type, s);
                  });
  }
  std::vector<std::size_t> sc, sd, rc, rd;
  splitLayout(input, inputSplits, getSize(), "input", &sc, &sd);
  splitLayout(output, outputSplits, getSize(), "output", &rc, &rd);
  return launch(c10d::OpType::ALLTOALL_BASE, "all_to_all_single", {output}, {input},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.allToAllV(bi.data, sc, sd, bo.data, rc, rd, bi.type, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions& opts) {
  const int n = getSize();
  TORCH_CHECK(static_cast<int>(inputs.size()) == n && static_cast<int>(outputs.size()) == n,
              "cohort all_to_all: needs ", n, " input and ", n, " output tensors, got ",
              inputs.size(), " and ", outputs.size());
  checkTensor(inputs[0], "all_to_all", "input");
  for (const auto& t : inputs) checkSameType(t, inputs[0], "all_to_all", "an input tensor");
  for (const auto& t : outputs) checkSameType(t, inputs[0], "all_to_all", "an output tensor");
  at::Tensor in = flatten(inputs);
  std::vector<int64_t> outSizes;
  for (const auto& t : outputs) outSizes.push_back(t.numel());
  at::Tensor out = at::empty({std::accumulate(outSizes.begin(), outSizes.end(), int64_t{0})},
                             in.options());
  const std::size_t per = perElement(inputs[0]);
  std::vector<std::size_t> sc, sd, rc, rd;
  std::size_t at = 0;
  for (const auto& t : inputs) {
    sc.push_back(static_cast<std::size_t>(t.numel()) * per);
    sd.push_back(at);
    at += sc.back();
  }
  at = 0;
  for (int64_t x : outSizes) {
    rc.push_back(static_cast<std::size_t>(x) * per);
    rd.push_back(at);
    at += rc.back();
  }
  const Buffer bi = bufferOf(in), bo = bufferOf(out);
  std::vector<at::Tensor> list = outputs;
  return launch(c10d::OpType::ALLTOALL, "all_to_all", list, {in, out},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.allToAllV(bi.data, sc, sd, bo.data, rc, rd, bi.type, s);
                },
                [out, list] { unflatten(out, list); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::send(std::vector<at::Tensor>& tensors,
                                                        int dstRank, int tag) {
  const at::Tensor& t = single(tensors, "send");
  checkTensor(t, "send", "tensor");
  checkPeer(dstRank, "send");
  const Buffer b = bufferOf(t);
  return launch(c10d::OpType::SEND, "send to rank " + std::to_string(dstRank), {}, tensors,
                [&](Communicator& c, runtime::Stream* s) {
                  return c.send(b.data, b.count, b.type, dstRank, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::recv(std::vector<at::Tensor>& tensors,
                                                        int srcRank, int tag) {
  const at::Tensor& t = single(tensors, "recv");
  checkTensor(t, "recv", "tensor");
  checkPeer(srcRank, "recv");
  const Buffer b = bufferOf(t);
  return launch(c10d::OpType::RECV, "recv from rank " + std::to_string(srcRank), tensors, {},
                [&](Communicator& c, runtime::Stream* s) {
                  return c.recv(b.data, b.count, b.type, srcRank, s);
                });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCohort::barrier(const c10d::BarrierOptions& opts) {
  return launch(c10d::OpType::BARRIER, "barrier", {}, {},
                [&](Communicator& c, runtime::Stream* s) { return c.barrier(s); });
}

void ProcessGroupCohort::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  // Cohort's barrier names the ranks that did not come when it times out.
  auto work = barrier(opts);
  const auto limit = opts.timeout == c10d::kUnsetTimeout ? timeout_ : opts.timeout;
  work->wait(limit);
}

}  // namespace cohort::torch_cohort
