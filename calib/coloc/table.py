#!/usr/bin/env python3
"""calib/coloc/table.py - turn the raw co-location JSON (calib/coloc/coloc.py) into the table that
`slicesim validate` reads: experiments/validation/data/h100-coloc.csv.

One row per figure: throughput of one process (iterations/s) of WORKLOAD in configuration KIND:
  solo                      one process alone (mean of every solo measurement of the runs:
                            before the peers, after them, and one MPS client alone uncapped),
                            with its NVML GPU utilisation (fraction)
  ts2 ts4 ts8               k identical processes time-sliced (mean over the k processes)
  mps2 mps4 mps8            k identical MPS clients
  cap25 cap50               one MPS client alone with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  pair-ts pair-mps          WORKLOAD beside WITH, time-sliced / under MPS
Repeated measurements of one figure are averaged; n says how many went in.
Usage: python3 calib/coloc/table.py RUN.json... > experiments/validation/data/h100-coloc.csv
"""
import json
import sys
from collections import defaultdict


def main(paths):
    acc = defaultdict(lambda: [0, 0.0, 0.0, 0])  # key -> n, sum rate, sum util, n util
    envs = []
    for p in paths:
        d = json.load(open(p))
        envs.append((p, d["env"]))
        for r in d["runs"]:
            util = r["nvml_util"]["gpu_pct"] / 100 if r["nvml_util"] else None
            names = [c["workload"] for c in r["clients"]]
            if r["kind"] in ("solo", "solo_after"):
                keys = [(names[0], "solo", "")]
                rates = [r["clients"][0]["rate_iter_per_s"]]
            elif r["kind"] == "peers":
                mode = "ts" if r["sharing"] == "timeslice" else "mps"
                keys = [(names[0], f"{mode}{r['k']}", "")]
                rates = [sum(c["rate_iter_per_s"] for c in r["clients"]) / r["k"]]
                util = None
            elif r["kind"] == "cap":
                keys = [(names[0], f"cap{r['mps_percent']}", "")]
                rates = [r["clients"][0]["rate_iter_per_s"]]
                util = None
            else:
                mode = "pair-ts" if r["sharing"] == "timeslice" else "pair-mps"
                keys = [(names[0], mode, names[1]), (names[1], mode, names[0])]
                rates = [c["rate_iter_per_s"] for c in r["clients"]]
                util = None
            for k, rate in zip(keys, rates):
                a = acc[k]
                a[0] += 1
                a[1] += rate
                if util is not None:
                    a[2] += util
                    a[3] += 1
    out = sys.stdout
    out.write("# Co-location of PyTorch workloads on one NVIDIA H100 80GB HBM3, measured by this project\n")
    out.write("# with calib/coloc/coloc.py and averaged by calib/coloc/table.py from:\n")
    for p, e in envs:
        out.write(f"#   {p}: {e['date_utc']} {e['gpu']} driver {e['driver']} torch {e['torch']} "
                  f"CUDA {e['cuda']} torchvision {e['torchvision']} transformers {e['transformers']}\n")
    out.write("# rate_per_s: iterations/s of one process; gpu_util: NVML utilisation (solo rows only)\n")
    out.write("figure,workload,kind,with,rate_per_s,gpu_util,n\n")
    order = ["solo", "ts2", "ts4", "ts8", "mps2", "mps4", "mps8", "cap25", "cap50", "pair-ts",
             "pair-mps"]
    for k in sorted(acc, key=lambda k: (order.index(k[1]), k[0], k[2])):
        n, s, su, nu = acc[k]
        w, kind, with_ = k
        label = f"{w}/{kind}" + (f":{with_}" if with_ else "")
        util = f"{su / nu:.4f}" if nu else ""
        out.write(f"{label},{w},{kind},{with_},{s / n:.4f},{util},{n}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
