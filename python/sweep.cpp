// sweep(): run_sweep on this process's threads (sweep/sweep.hpp), as `strait sweep` runs it:
// the same CSV and JSON Lines files, written where the caller says (the package passes a
// temporary folder and reads them back). The run releases the GIL.

#include <pybind11/stl.h>

#include "python/bindings.hpp"
#include "sweep/sweep.hpp"

namespace strait::python {
namespace {

py::dict sweep(const std::string& path, const std::string& csv, const std::string& jsonl,
               int threads, const std::optional<std::string>& profiles) {
  if (threads < 0) throw py::value_error("sweep: threads: expected 0 (all cores) or more");
  sweep::SweepOptions options;
  options.csv_path = csv;
  options.jsonl_path = jsonl;
  options.threads = threads;
  options.default_profiles_dir = profiles.value_or(default_profiles_dir());
  sweep::SweepSummary summary;
  std::string name;
  {
    py::gil_scoped_release release;
    const auto spec = sweep::SweepSpec::load(path);
    name = spec.name();
    summary = sweep::run_sweep(spec, options);
  }
  py::dict out;
  out["name"] = name;
  out["points"] = summary.progress.total;
  out["failed"] = summary.progress.failed;
  out["threads"] = summary.workers;
  return out;
}

}  // namespace

void bind_sweep(py::module_& m) {
  m.def("sweep", &sweep, py::arg("path"), py::arg("csv"), py::arg("jsonl"), py::kw_only(),
        py::arg("threads") = 0, py::arg("profiles") = py::none());
}

}  // namespace strait::python
