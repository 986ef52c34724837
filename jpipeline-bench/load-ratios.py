#!/usr/bin/env python3
"""Prints load.sh's results as Markdown tables, one per form of LoadBenchmark: rows (chunkMiB, compute), columns
the hog counts found (OUTDIR/hogs-N.json), cells plainLoop time / form time, so above 1 means the jpipeline form
is faster. A time is the median of the forks' means (each fork's mean of its measurement iterations), which is
JMH's score when there is one fork. A last table gives the plain loop's own times (ms per pass).

Where load.sh timed the CLI (OUTDIR/stream-hogs-N.tsv), two more tables: plainLoop (JMH, warmed) time / stream
time, and fresh-JVM loop time / stream time. Both stream and the fresh-JVM loop make one pass in a new JVM, so
their passes run cold (the JIT has not compiled the loops yet); the second ratio compares like with like, the
first shows how far a single cold run is from the warmed loop. Their times are medians of the runs.

Usage: jpipeline-bench/load-ratios.py OUTDIR
"""
import csv
import glob
import json
import os
import re
import statistics
import sys

FORMS = ["forEach", "threadScope", "parallel"]


def hog_files(outdir, pattern):
    found = {}
    for path in glob.glob(os.path.join(outdir, pattern)):
        m = re.search(r"hogs-(\d+)\.", os.path.basename(path))
        if m:
            found[int(m.group(1))] = path
    return dict(sorted(found.items()))


def jmh_times(path):
    """{(form, chunkMiB, compute, sizeMiB): ms} from one JMH JSON file."""
    times = {}
    with open(path) as f:
        for result in json.load(f):
            form = result["benchmark"].rsplit(".", 1)[-1]
            params = result.get("params", {})
            metric = result["primaryMetric"]
            if metric["scoreUnit"] != "ms/op":
                sys.exit(f"{path}: {form} is in {metric['scoreUnit']}, expected ms/op")
            raw = metric.get("rawData") or []
            forks = [statistics.mean(it) for it in raw if it]
            ms = statistics.median(forks) if len(forks) > 1 else metric["score"]
            key = (form, int(params.get("chunkMiB", 0)), params.get("compute", ""), int(params.get("sizeMiB", 0)))
            times[key] = ms
    return times


def stream_times(path):
    """{(tool, chunkMiB, compute): median ms} from one stream-hogs-N.tsv."""
    runs = {}
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            key = (row["tool"], int(row["chunkMiB"]), row["compute"])
            runs.setdefault(key, []).append(float(row["seconds"]) * 1e3)
    return {k: statistics.median(v) for k, v in runs.items()}


def ratio(base, other):
    return f"{base / other:.2f}" if base is not None and other else ""


def table(title, hogs, rows, cell):
    print(f"### {title}\n")
    print("| chunkMiB | compute | " + " | ".join(f"{h} hog{'' if h == 1 else 's'}" for h in hogs) + " |")
    print("|---|---|" + "---|" * len(hogs))
    for chunk, compute in rows:
        print(f"| {chunk} | {compute} | " + " | ".join(cell(h, chunk, compute) for h in hogs) + " |")
    print()


def main(outdir):
    files = hog_files(outdir, "hogs-*.json")
    if not files:
        sys.exit(f"no hogs-N.json in {outdir}")
    times = {h: jmh_times(p) for h, p in files.items()}
    hogs = list(times)
    keys = {k for t in times.values() for k in t}
    sizes = sorted({k[3] for k in keys})
    if len(sizes) > 1:
        sys.exit(f"{outdir} mixes file sizes {sizes}: run load-ratios.py on one size at a time")
    rows = sorted({(k[1], k[2]) for k in keys}, key=lambda r: (r[0], r[1] != "SUM", r[1]))
    forms = [f for f in FORMS if any(k[0] == f for k in keys)]
    forms += sorted({k[0] for k in keys} - set(FORMS) - {"plainLoop"})
    size = sizes[0]

    def get(h, form, chunk, compute):
        return times[h].get((form, chunk, compute, size))

    print(f"Ratios plainLoop time / form time ({size} MiB file; above 1: the jpipeline form is faster)\n")
    for form in forms:
        table(f"{form}", hogs, rows,
              lambda h, c, op, form=form: ratio(get(h, "plainLoop", c, op), get(h, form, c, op)))
    table("plainLoop, ms per pass", hogs, rows,
          lambda h, c, op: f"{get(h, 'plainLoop', c, op):.1f}" if get(h, "plainLoop", c, op) else "")

    streams = hog_files(outdir, "stream-hogs-*.tsv")
    if streams:
        st = {h: stream_times(p) for h, p in streams.items()}
        shogs = list(st)
        srows = sorted({(k[1], k[2]) for t in st.values() for k in t}, key=lambda r: (r[0], r[1] != "SUM", r[1]))
        table("stream (CLI, one cold pass in a fresh JVM): plainLoop (JMH, warmed) time / stream time", shogs, srows,
              lambda h, c, op: ratio(get(h, "plainLoop", c, op) if h in times else None,
                                     st[h].get(("stream", c, op))))
        table("stream: fresh-JVM plain loop time / stream time (both one cold pass)", shogs, srows,
              lambda h, c, op: ratio(st[h].get(("freshLoop", c, op)), st[h].get(("stream", c, op))))
        table("stream / fresh-JVM plain loop, ms per pass (medians)", shogs, srows,
              lambda h, c, op: "{} / {}".format(*(f"{st[h][(t, c, op)]:.1f}" if (t, c, op) in st[h] else "-"
                                                   for t in ("stream", "freshLoop"))))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1:][0])
