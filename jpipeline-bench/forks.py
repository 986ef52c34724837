#!/usr/bin/env python3
"""Prints each JMH result of the given JSON files (-rf json) as a Markdown table row: benchmark, parameters, the
median of the fork means, and every fork's mean (the mean of its measurement iterations). The scores keep
JMH's unit; throughput in items/s is shortened to k / M.

Usage: jpipeline-bench/forks.py RESULT.json [RESULT.json ...]
"""
import json
import statistics
import sys


def short(value, unit):
    if unit.startswith("ops/s"):
        for scale, suffix in ((1e6, " M"), (1e3, " k")):
            if value >= scale:
                return f"{value / scale:.2f}{suffix}"
    return f"{value:.3g}" if value < 100 else f"{value:.1f}"


def main(paths):
    print("| benchmark | params | median of fork means | per-fork means | unit |")
    print("|---|---|---|---|---|")
    for path in paths:
        with open(path) as f:
            for result in json.load(f):
                name = result["benchmark"].rsplit(".", 2)
                metric = result["primaryMetric"]
                unit = metric["scoreUnit"]
                forks = [statistics.mean(iterations) for iterations in metric["rawData"]]
                params = ", ".join(f"{k}={v}" for k, v in sorted(result.get("params", {}).items()))
                print(f"| {name[-2]}.{name[-1]} | {params} | {short(statistics.median(forks), unit)} | "
                      f"{', '.join(short(v, unit) for v in forks)} | {unit} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
