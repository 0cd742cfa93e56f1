"""Simulations release the GIL: two scenarios run in two Python threads at once give the
results they give one after the other."""

import threading

import strait
from conftest import without_wall_times


def test_two_threads_give_the_sequential_results():
    scenarios = [
        strait.Scenario.load("configs/scenarios/dlrm-8gpu.json"),
        strait.Scenario.load("configs/scenarios/hstu-3dc.json").with_overrides(
            {"/cluster/cross_dc/0/bandwidth": "200 Gb/s"}),
    ]
    sequential = [without_wall_times(strait.simulate(s, mode="analytical").to_dict()) for s in scenarios]
    results = [None, None]
    start = threading.Barrier(2)

    def run(i):
        start.wait()
        results[i] = without_wall_times(strait.simulate(scenarios[i], mode="analytical").to_dict())

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == sequential
    assert sequential[0]["scenario"] == "dlrm-8gpu" and sequential[1]["scenario"] == "hstu-3dc"
