// The extension module torch_cohort._C: the process group class, with torch's
// own holder type (c10::intrusive_ptr), so that c10d takes it as a ProcessGroup
// (a Backend from torch 2.0 on).
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include "torch_cohort/cpu_allocator.h"
#include "torch_cohort/process_group_cohort.h"

namespace py = pybind11;
using cohort::torch_cohort::BackendBase;
using cohort::torch_cohort::ProcessGroupCohort;

PYBIND11_MODULE(_C, m) {
  m.doc() = "Cohort's c10d backend (use: import torch_cohort; backend=\"cohort\")";
  // The base class and the Store type are registered by torch.distributed.
  py::module::import("torch.distributed");
  py::class_<ProcessGroupCohort, BackendBase, c10::intrusive_ptr<ProcessGroupCohort>>(
      m, "ProcessGroupCohort")
      // Rendezvous and connection setup block: other threads (and the other ranks
      // of this process, in tests) run meanwhile.
      .def(py::init(&cohort::torch_cohort::createProcessGroup), py::arg("store"),
           py::arg("rank"), py::arg("size"), py::arg("timeout"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("device", &ProcessGroupCohort::device,
                             "the emulated device this process's groups run on")
      .def("last_choice", &ProcessGroupCohort::lastChoice,
           "Cohort's algorithm and transport for the last operation")
      // Both wait for the other survivors: other threads run meanwhile.
      .def("failed_ranks", &ProcessGroupCohort::failedRanks,
           py::call_guard<py::gil_scoped_release>(),
           "the group ranks the survivors agree failed (see torch_cohort.failed_ranks)")
      .def("shrink", &ProcessGroupCohort::shrink, py::call_guard<py::gil_scoped_release>(),
           "a group of the survivors, ranked in their old order (see torch_cohort.shrink)");
  m.def("use_device_memory", &cohort::torch_cohort::useDeviceMemory, py::arg("min_bytes"),
        "CPU tensors of at least min_bytes in this process's device memory from now on "
        "(min_bytes < 0: off); returns the threshold before (-1: off); see "
        "torch_cohort.use_device_memory");
  m.def("is_device_memory", &cohort::torch_cohort::isDeviceMemory, py::arg("address"),
        "whether the address is memory of an emulated device");
  m.def("device_bytes", &cohort::torch_cohort::deviceBytes, py::arg("bytes"),
        "bytes of this process's device memory as a CPU uint8 tensor (see torch_cohort.empty)");
}
