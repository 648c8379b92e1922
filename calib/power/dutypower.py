#!/usr/bin/env python3
"""Board power against busy share from a powertau run (calib/power/powertau.py), beside what
slicesim's reported power (model/physics/power.h power_board_w) gives for the same busy share.

    python3 calib/power/dutypower.py calib/power/2026-11-24-h100-powertau.json.gz [--idle-frac F]

Prints the idle draw (the NVML samples before the warm-up and in the last second of each 2.5 s
idle gap before a burst), the draw at the cap (last 3 s of the warm-up and of each burst), and for
every duty-cycled phase its busy share (the products' summed time over the phase's span) and its
mean NVML power from 1 s into the phase to its end, beside the model: the products are bf16
tensor work on every SM, whose demand at the reference clock (physics.yaml power_sm_w.tensor x
SMs) is above the TDP, so a busy phase longer than power_window_s draws the TDP and
P = I + b (TDP - I), I = idle_frac x TDP. NVML's power reading changes only every ~100 ms
(README), so periods of 200 ms and less alias with it; the 500 and 1000 ms periods are the fair
comparison. Reads only the JSON; nothing is run on a GPU.
"""
import argparse
import bisect
import gzip
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--idle-frac", type=float, default=0.19,
                    help="model/physics/physics.yaml power_board_idle_frac")
    a = ap.parse_args()
    opener = gzip.open if a.run.endswith(".gz") else open
    with opener(a.run, "rt") as f:
        d = json.load(f)
    t, p = d["nvml"]["t_ms"], d["nvml"]["power_w"]
    tdp = d["env"]["power_limit_w"]

    def mean(lo, hi):
        i, j = bisect.bisect_left(t, lo), bisect.bisect_left(t, hi)
        return sum(p[i:j]) / (j - i) if j > i else float("nan")

    print(f"{d['env']['gpu']}, limit {tdp:.0f} W, {d['env']['power_reading']}")
    print(f"idle before the warm-up: {mean(0, d['warm']['t0_ms']):.1f} W")
    for k, b in enumerate(d["bursts"]):
        print(f"idle, last 1 s before burst {k}: {mean(b['t0_ms'] - 1000, b['t0_ms']):.1f} W; "
              f"burst {k} last 3 s: {mean(b['t0_ms'] + 2000, b['t0_ms'] + 5000):.1f} W")
    w = d["warm"]
    print(f"warm-up last 3 s: {mean(w['t0_ms'] + 3000, w['t0_ms'] + 6000):.1f} W")
    idle = a.idle_frac * tdp
    print(f"model: I = {a.idle_frac} x {tdp:.0f} = {idle:.1f} W; P = I + b ({tdp:.0f} - I)")
    print("period_ms,duty_asked,busy_share,measured_w,model_w,error")
    for ph in d["duty"]:
        s, dur = ph["start_ms"], ph["dur_ms"]
        span = s[-1] + dur[-1]
        b = sum(dur) / span
        m = mean(ph["t0_ms"] + 1000, ph["t0_ms"] + span)
        model = idle + b * (tdp - idle)
        print(f"{ph['period_ms']},{ph['duty']},{b:.3f},{m:.1f},{model:.1f},{(model - m) / m:+.1%}")


if __name__ == "__main__":
    main()
