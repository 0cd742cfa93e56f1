#pragma once
// JSON view of one rank's ops, for `strait graph SCENARIO --rank R` and for tests:
//   {"rank": 0, "gpu": 0, "samples": 64, "steps": 2, "streams": [...],
//    "ops": [{"id": 0, "name": "emb/input_dist", "stream": "embedding_comm", "step": 0,
//             "phase": "input", "deps": [], "kind": "collective",
//             "collective": {"op": "all_to_allv", "algorithm": "auto", "group": "sparse_mp/0",
//                            "group_ranks": [0, 1, ...], "bytes": 1234, "send_row": [...],
//                            "class": "input_dist", "priority": 0, "sm_free": false}},
//            {"id": 1, "name": "emb/lookup", ..., "kind": "kernel",
//             "kernel": {"kind": "embedding_lookup", "precision": "fp32", "flops": ...,
//                        "hbm_bytes": ..., "m": 0, "n": 0, "k": 0, "mean_length": 0,
//                        "heads": 0, "head_dim": 0, "embedding_dim": 128, "unique_fraction":
//                        0.9}}]}

#include <nlohmann/json.hpp>

#include "sim/workload/op_graph.hpp"

namespace strait::sim::workload {

/// One rank's ops with names, streams, deps and kernel/collective fields. Throws
/// strait::Error if `rank` is out of range.
nlohmann::json to_json(const OpGraph& graph, int rank);

}  // namespace strait::sim::workload
