#!/usr/bin/env python3
"""Builds oracle/results/gpuverify.md: each GPUVerify twin's label (oracle/gpuverify/labels.tsv) beside the
verdicts that oracle/run.sh recorded for it (oracle/results/gpuverify.verdicts.tsv, optimized builds, and
oracle/results/debug-G/gpuverify.verdicts.tsv, -G builds), then racecheck's detection rate on the racy kernels
and its false positives on the race-free ones.

usage: oracle/gpuverify_table.py [RESULTS_DIR]      (default oracle/results)
"""
import csv
import os
import sys

results = sys.argv[1] if len(sys.argv) > 1 else "oracle/results"
here = os.path.dirname(os.path.abspath(__file__))


def tsv(path):
    with open(path) as f:
        return {row["program"] if "program" in row else row["name"]: row for row in csv.DictReader(f, delimiter="\t")}


labels = tsv(os.path.join(here, "gpuverify", "labels.tsv"))
opt = tsv(os.path.join(results, "gpuverify.verdicts.tsv"))
dbg = tsv(os.path.join(results, "debug-G", "gpuverify.verdicts.tsv"))


def device(path):
    with open(path) as f:
        return [line.rstrip("\n") for line in f]


def reports(verdict):
    """Whether a sanitizer verdict reports a problem (errors or hazards; a hang or a failed run is not one)."""
    return "hazard" in verdict or " errors" in verdict.split(";")[0]


def shared(name):
    with open(os.path.join(here, "gpuverify", name + ".cu")) as f:
        return "__shared__" in f.read()


out = ["# compute-sanitizer on the GPUVerify twins (oracle/gpuverify)", ""]
out.append("Optimized builds (`oracle/run.sh oracle/examples oracle/faulty oracle/gpuverify`):")
out.append("")
out += device(os.path.join(results, "device.txt"))
out.append("")
out.append("Unoptimized builds, racecheck and synccheck only (the \"-G\" columns):")
out.append("")
out += device(os.path.join(results, "debug-G", "device.txt"))
out += ["", "Made by `oracle/gpuverify_table.py` from the two runs' verdicts. \"shared\": the kernel declares "
        "`__shared__` memory (racecheck watches shared memory only).", ""]
out.append("| kernel | label | shared | racecheck | synccheck | initcheck | memcheck | plain run | racecheck (-G) "
           "| synccheck (-G) | plain run (-G) |")
out.append("|---|---|---|---|---|---|---|---|---|---|---|")
for name in sorted(labels):
    o, d, label = opt.get(name, {}), dbg.get(name, {}), labels[name]["label"]
    cells = [name, label, "yes" if shared(name) else "no"]
    cells += [o.get(k, "not run") for k in ("racecheck", "synccheck", "initcheck", "memcheck", "plain")]
    cells += [d.get(k, "not run") for k in ("racecheck", "synccheck", "plain")]
    out.append("| " + " | ".join(cells) + " |")


def rate(label, column, verdicts, only_shared=False):
    names = [n for n in labels if labels[n]["label"] == label and (not only_shared or shared(n))]
    hits = sorted(n for n in names if reports(verdicts.get(n, {}).get(column, "")))
    return len(hits), len(names), hits


out += ["", "## Rates", ""]
for title, verdicts in (("optimized builds", opt), ("-G builds", dbg)):
    found, racy, hits = rate("RACY", "racecheck", verdicts)
    found_s, racy_s, _ = rate("RACY", "racecheck", verdicts, only_shared=True)
    fp, free, fps = rate("RACE_FREE", "racecheck", verdicts)
    div, divs, _ = rate("BARRIER_DIVERGENCE", "synccheck", verdicts)
    out.append(f"- racecheck, {title}: {found} of {racy} racy kernels reported ({100 * found / racy:.0f} %)"
               f"{': ' + ', '.join(hits) if hits else ''}; {found_s} of the {racy_s} racy kernels that use shared "
               f"memory; false positives: {fp} of {free} race-free kernels{': ' + ', '.join(fps) if fps else ''}.")
    out.append(f"- synccheck, {title}: {div} of {divs} barrier-divergence kernels reported.")
print("\n".join(out))
