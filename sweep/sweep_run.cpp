// run_sweep on the threads of one process: a oneTBB pipeline whose first and last stages
// are serial and in order (take the next point; write its row) around a parallel stage
// (run the point), so rows leave in point order while points run concurrently.

#include <tbb/info.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include "sweep/detail/ordered_writer.hpp"
#include "sweep/detail/point_runner.hpp"
#include "sweep/detail/sweep_output.hpp"
#include "sweep/sweep.hpp"

namespace strait::sweep {

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& options) {
  check_values(spec);
  detail::SweepOutput output(spec, options.csv_path, options.jsonl_path, options.resume);
  const detail::PointRunner runner(spec, options.default_profiles_dir, options.reuse_expansions);
  detail::OrderedWriter writer(output, spec.points().size(), options.progress);
  const int threads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();
  const std::size_t total = spec.points().size();
  std::size_t next = output.resumed();
  auto stopped = [&options] { return options.stop && options.stop->load(); };

  tbb::task_arena arena(threads);
  arena.execute([&] {
    tbb::parallel_pipeline(
        static_cast<std::size_t>(threads) * 2,
        tbb::make_filter<void, std::size_t>(tbb::filter_mode::serial_in_order,
                                            [&](tbb::flow_control& control) -> std::size_t {
                                              if (next >= total || stopped()) {
                                                control.stop();
                                                return 0;
                                              }
                                              return next++;
                                            }) &
            tbb::make_filter<std::size_t, detail::PointOutcome>(
                tbb::filter_mode::parallel, [&runner](std::size_t i) { return runner.run(i); }) &
            tbb::make_filter<detail::PointOutcome, void>(
                tbb::filter_mode::serial_in_order,
                [&writer](const detail::PointOutcome& outcome) { writer.write(outcome); }));
  });
  return {writer.progress(), !writer.complete(), threads};
}

}  // namespace strait::sweep
