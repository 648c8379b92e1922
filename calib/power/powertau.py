#!/usr/bin/env python3
"""calib/power/powertau.py - time scale of the GPU's power-cap controller.

A power cap is enforced by a controller that averages the board power over some window tau and
moves the SM clock; an instance whose busy phases are much longer than tau throttles in them as if
it were always busy, one whose busy/idle cycle is much shorter than tau is throttled by its mean
power. This probe measures which, with bf16 matrix products large enough to reach the cap:

  warm       back-to-back products for WARM_S: the steady, power-capped product time (the last
             half of it), NVML clock, power and clock-event reasons (SwPowerCap).
  burst      BURSTS times: IDLE_S idle, then BURST_S of back-to-back products: product time and
             NVML clock vs the time since the burst started (the controller's response).
  duty       for each period t in PERIODS_MS and busy share d in DUTIES: IDLE_S idle, then
             max(DUTY_S, DUTY_MIN_PERIODS t) of periods: at the start of every period (host
             timer) n = max(1, round(d t / steady product time)) products, then nothing until
             the next period; each product's time in the busy phase, against the steady one.

Every product is bracketed by CUDA events; event times are put on the host clock through an event
recorded on the idle GPU at a known host time (error ~10 us). NVML is sampled from a thread every
SAMPLE_MS: SM clock, instantaneous board power (field NVML_FI_DEV_POWER_INSTANT where the driver
has it, else nvmlDeviceGetPowerUsage), clock-event reasons; temperature every 100 ms. At most
INFLIGHT products are queued ahead, so no launch blocks. The GPU's clocks, power limit, MIG and
compute mode are never changed (only read).

Usage:  python3 calib/power/powertau.py --out DIR [--n 8192] [--quick]
        python3 calib/power/powertau.py --summary FILE.json[.gz]   (no GPU: the summary)
Output: DIR/powertau.json (schema "slicesim-powertau", version 1), summary printed and stored.
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import sys
import threading
import time

WARM_S = 6.0
BURSTS = 3
BURST_S = 5.0
IDLE_S = 2.5
PERIODS_MS = [5, 10, 20, 50, 100, 200, 500, 1000]
DUTIES = [0.5]
EXTRA = [(10, 0.75), (50, 0.75), (200, 0.75), (50, 0.25), (200, 0.25)]  # (period ms, duty)
DUTY_S = 4.0
DUTY_MIN_PERIODS = 6
SAMPLE_MS = 2.0
INFLIGHT = 24

# clock-event reason bits (nvml.h nvmlClocksEventReason*)
REASONS = {0x1: "gpu_idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown",
           0x10: "sync_boost", 0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake",
           0x100: "display_clocks"}


class Sampler(threading.Thread):
    """NVML every SAMPLE_MS: host time (perf_counter s), SM MHz, power W, reason bits."""

    def __init__(self):
        super().__init__(daemon=True)
        import pynvml as nv
        self.nv = nv
        nv.nvmlInit()
        self.h = nv.nvmlDeviceGetHandleByIndex(0)
        self.field = getattr(nv, "NVML_FI_DEV_POWER_INSTANT", 186)
        self.power_src = "field NVML_FI_DEV_POWER_INSTANT"
        try:
            self._power_field()
        except Exception as e:  # noqa: BLE001 - any failure: fall back to the averaged reading
            self.power_src = f"nvmlDeviceGetPowerUsage (instant field failed: {e})"
            self.field = None
        self.reasons_fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nv.nvmlDeviceGetCurrentClocksThrottleReasons
        self.rows = []   # (t, mhz, w, reasons)
        self.temps = []  # (t, C)
        self.stop_ev = threading.Event()
        self.cost = []

    def _power_field(self):
        v = self.nv.nvmlDeviceGetFieldValues(self.h, [self.field])[0]
        if v.nvmlReturn != 0:
            raise RuntimeError(f"nvmlReturn {v.nvmlReturn}")
        vt = v.valueType
        x = {0: v.value.dVal, 1: v.value.uiVal, 2: v.value.ulVal, 3: v.value.ullVal,
             4: v.value.sllVal}.get(vt, v.value.uiVal)
        return x / 1000.0

    def power_w(self):
        if self.field is not None:
            return self._power_field()
        return self.nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0

    def run(self):
        nv, h = self.nv, self.h
        nxt = time.perf_counter()
        last_temp = 0.0
        while not self.stop_ev.is_set():
            t = time.perf_counter()
            mhz = nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)
            w = self.power_w()
            r = self.reasons_fn(h)
            t1 = time.perf_counter()
            self.rows.append((0.5 * (t + t1), mhz, w, r))
            self.cost.append(t1 - t)
            if t1 - last_temp > 0.1:
                self.temps.append((t1, nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)))
                last_temp = t1
            nxt += SAMPLE_MS / 1000.0
            d = nxt - time.perf_counter()
            if d > 0:
                time.sleep(d)
            else:
                nxt = time.perf_counter()


class Gpu:
    def __init__(self, n):
        import torch
        self.torch = torch
        torch.manual_seed(1)
        self.a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        self.b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        self.c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        self.n = n

    def origin(self):
        """An event on the idle GPU at a known host time: GPU times -> host clock."""
        self.torch.cuda.synchronize()
        e = self.torch.cuda.Event(enable_timing=True)
        e.record()
        t = time.perf_counter()
        e.synchronize()
        return e, t

    def product(self, pending):
        """Queue one product bracketed by events; at most INFLIGHT products ahead."""
        torch = self.torch
        while len(pending) >= INFLIGHT:
            if pending[0][1].query():
                pending.pop(0)
            else:
                time.sleep(0.0002)
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(self.a, self.b, out=self.c)
        e.record()
        pending.append((s, e))
        return s, e


def times(origin, evs):
    """[(start, end)] in host seconds for event pairs, after all of them completed."""
    e0, t0 = origin
    e0.synchronize()
    evs[-1][1].synchronize()
    return [(t0 + e0.elapsed_time(s) / 1e3, t0 + e0.elapsed_time(e) / 1e3) for s, e in evs]


def sleep_until(t):
    while True:
        d = t - time.perf_counter()
        if d <= 0:
            return
        time.sleep(d - 0.0005 if d > 0.001 else 0)


def continuous(gpu, seconds):
    origin = gpu.origin()
    pending, evs = [], []
    t_end = origin[1] + seconds
    while time.perf_counter() < t_end:
        evs.append(gpu.product(pending))
    return origin[1], times(origin, evs)


def duty(gpu, period_s, n_busy, seconds):
    origin = gpu.origin()
    pending, evs, phase = [], [], []
    t0 = origin[1] + 0.002
    k = 0
    while True:
        ts = t0 + k * period_s
        if ts >= t0 + seconds:
            break
        sleep_until(ts)
        for _ in range(n_busy):
            evs.append(gpu.product(pending))
            phase.append(k)
        k += 1
    return t0, times(origin, evs), phase


def env_info(sampler, n):
    import torch
    nv, h = sampler.nv, sampler.h

    def q(f, *a):
        try:
            return f(h, *a)
        except Exception as e:  # noqa: BLE001
            return f"error: {e}"
    p = torch.cuda.get_device_properties(0)
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(), "python": platform.python_version(),
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "gpu": nv.nvmlDeviceGetName(h), "uuid": nv.nvmlDeviceGetUUID(h),
        "driver": nv.nvmlSystemGetDriverVersion(), "sms": p.multi_processor_count,
        "power_limit_w": q(nv.nvmlDeviceGetEnforcedPowerLimit) / 1000.0,
        "power_default_limit_w": q(nv.nvmlDeviceGetPowerManagementDefaultLimit) / 1000.0,
        "clock_max_sm_mhz": q(nv.nvmlDeviceGetMaxClockInfo, nv.NVML_CLOCK_SM),
        "clock_app_sm_mhz": q(nv.nvmlDeviceGetApplicationsClock, nv.NVML_CLOCK_SM),
        "temp_c": q(nv.nvmlDeviceGetTemperature, nv.NVML_TEMPERATURE_GPU),
        "power_reading": sampler.power_src, "product": f"bf16 {n}x{n} @ {n}x{n} (torch.matmul)",
        "sample_ms": SAMPLE_MS, "inflight": INFLIGHT,
    }


def rel(xs, t0, nd=4):
    return [round((x - t0) * 1e3, nd) for x in xs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--quick", action="store_true", help="short phases (a smoke test)")
    ap.add_argument("--summary", help="print the summary of a recorded file and exit")
    a = ap.parse_args()
    if a.summary:
        with (gzip.open if a.summary.endswith(".gz") else open)(a.summary, "rt") as f:
            print(json.dumps(summarise(json.load(f)), indent=1))
        return
    if not a.out:
        ap.error("--out DIR or --summary FILE")
    global WARM_S, BURSTS, BURST_S, IDLE_S, DUTY_S, PERIODS_MS, EXTRA
    if a.quick:
        WARM_S, BURSTS, BURST_S, IDLE_S, DUTY_S = 1.0, 1, 1.0, 0.5, 0.5
        PERIODS_MS, EXTRA = [10, 100], []
    os.makedirs(a.out, exist_ok=True)
    sampler = Sampler()
    gpu = Gpu(a.n)
    out = {"schema": "slicesim-powertau", "schema_version": 1, "env": env_info(sampler, a.n)}
    sampler.start()
    t_base = time.perf_counter()
    gpu.product([])
    gpu.torch.cuda.synchronize()
    start, tt = continuous(gpu, WARM_S)
    out["warm"] = {"t0_ms": rel([start], t_base)[0], "start_ms": rel([s for s, _ in tt], start),
                   "dur_ms": [round((e - s) * 1e3, 4) for s, e in tt]}
    half = [e - s for s, e in tt if s - start > WARM_S / 2]
    steady = sum(half) / len(half)
    out["bursts"] = []
    for _ in range(BURSTS):
        time.sleep(IDLE_S)
        start, tt = continuous(gpu, BURST_S)
        out["bursts"].append({"t0_ms": rel([start], t_base)[0],
                              "start_ms": rel([s for s, _ in tt], start),
                              "dur_ms": [round((e - s) * 1e3, 4) for s, e in tt]})
        print(f"burst: {len(tt)} products", flush=True)
    out["duty"] = []
    for per, d in [(p, d) for d in DUTIES for p in PERIODS_MS] + EXTRA:
        time.sleep(IDLE_S)
        n_busy = max(1, round(d * per / 1e3 / steady))
        secs = max(DUTY_S, DUTY_MIN_PERIODS * per / 1e3)
        start, tt, phase = duty(gpu, per / 1e3, n_busy, secs)
        out["duty"].append({"period_ms": per, "duty": d, "n_busy": n_busy,
                            "t0_ms": rel([start], t_base)[0], "phase": phase,
                            "start_ms": rel([s for s, _ in tt], start),
                            "dur_ms": [round((e - s) * 1e3, 4) for s, e in tt]})
        print(f"duty {per} ms x {d}: {n_busy} products a period", flush=True)
    sampler.stop_ev.set()
    sampler.join()
    rows = sampler.rows
    out["nvml"] = {"t_ms": rel([r[0] for r in rows], t_base, 2), "sm_mhz": [r[1] for r in rows],
                   "power_w": [round(r[2], 1) for r in rows], "reasons": [r[3] for r in rows],
                   "temp_t_ms": rel([t for t, _ in sampler.temps], t_base, 1),
                   "temp_c": [c for _, c in sampler.temps],
                   "sample_cost_ms_mean": round(1e3 * sum(sampler.cost) / len(sampler.cost), 4)}
    out["env"]["temp_c_end"] = sampler.nv.nvmlDeviceGetTemperature(sampler.h,
                                                                  sampler.nv.NVML_TEMPERATURE_GPU)
    out["summary"] = summarise(out)
    path = os.path.join(a.out, "powertau.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    print(json.dumps({k: v for k, v in out["summary"].items() if k != "burst_nvml_every_5th"},
                     indent=1))


# ---------------------------------------------------------------- summary (no GPU needed)

def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def nvml_between(nv, t0, t1):
    """NVML rows with t0 <= t < t1 (ms since the base)."""
    idx = [i for i, t in enumerate(nv["t_ms"]) if t0 <= t < t1]
    return idx


def summarise(out):
    nv = out["nvml"]
    s = {}
    w = out["warm"]
    steady = mean([d for st, d in zip(w["start_ms"], w["dur_ms"]) if st > w["start_ms"][-1] / 2])
    s["steady_product_ms"] = round(steady, 4)
    i = nvml_between(nv, w["t0_ms"] + w["start_ms"][-1] / 2, w["t0_ms"] + w["start_ms"][-1])
    s["warm_last_half"] = {
        "sm_mhz": round(mean([nv["sm_mhz"][k] for k in i]), 1),
        "power_w": round(mean([nv["power_w"][k] for k in i]), 1),
        "sw_power_cap_share": round(mean([1.0 if nv["reasons"][k] & 0x4 else 0.0 for k in i]), 3),
        "reasons_seen": sorted({REASONS.get(b, hex(b)) for k in i for b in REASONS
                                if nv["reasons"][k] & b})}
    # burst response: product time in 5 ms bins after the burst start, averaged over bursts
    bins = {}
    for b in out["bursts"]:
        for st, d in zip(b["start_ms"], b["dur_ms"]):
            bins.setdefault(int(st // 5), []).append(d)
    prof = [(k * 5, round(mean(v), 4)) for k, v in sorted(bins.items())]
    s["burst_product_ms_by_5ms"] = [p for p in prof if p[0] < 200] + \
        [p for p in prof if p[0] >= 200 and p[0] % 250 == 0]
    first = mean([b["dur_ms"][0] for b in out["bursts"]])
    s["burst_first_product_ms"] = round(first, 4)
    # the controller's response: per burst, the unthrottled product time (those starting in
    # 2-20 ms: the first product also pays the clock's ramp from idle), the throttled one (100 to
    # 700 ms), the start of the first product slower than 1.02 x unthrottled (onset) and of the
    # first 3 products whose mean is 90 % of the way to throttled (done)
    resp = []
    for b in out["bursts"]:
        st, du = b["start_ms"], b["dur_ms"]
        fast = mean([x for t, x in zip(st, du) if 2 <= t < 20])
        thr = mean([x for t, x in zip(st, du) if 100 <= t < 700])
        onset = next((st[j] for j in range(1, len(du)) if du[j] > 1.02 * fast), None)
        done = next((st[j] for j in range(1, len(du) - 2)
                     if mean(du[j:j + 3]) > fast + 0.9 * (thr - fast)), None)
        resp.append({"unthrottled_ms": round(fast, 4), "throttled_ms": round(thr, 4),
                     "onset_ms": onset, "done_ms": done})
    s["burst_response"] = resp
    clk = []
    for b in out["bursts"]:
        i = nvml_between(nv, b["t0_ms"] - 200, b["t0_ms"] + 400)
        clk.append([(round(nv["t_ms"][k] - b["t0_ms"], 1), nv["sm_mhz"][k], nv["power_w"][k],
                     nv["reasons"][k]) for k in i][::5])
    s["burst_nvml_every_5th"] = clk
    rows = []
    for d in out["duty"]:
        du, ph = d["dur_ms"], d["phase"]
        nph = max(ph) + 1
        busy = []
        for k in range(nph):
            js = [j for j in range(len(du)) if ph[j] == k]
            busy.append(d["start_ms"][js[-1]] + du[js[-1]] - d["start_ms"][js[0]])
        skip = nph // 3   # the first third: the transition from idle
        steady_d = [du[j] for j in range(len(du)) if ph[j] >= skip]
        i = nvml_between(nv, d["t0_ms"] + d["start_ms"][0] + skip * d["period_ms"],
                         d["t0_ms"] + d["start_ms"][-1])
        rows.append({"period_ms": d["period_ms"], "duty": d["duty"], "n_busy": d["n_busy"],
                     "busy_ms": round(mean(busy[skip:]), 3),
                     "busy_share": round(mean(busy[skip:]) / d["period_ms"], 3),
                     "product_ms": round(mean(steady_d), 4),
                     "vs_steady": round(mean(steady_d) / steady, 4),
                     "first_in_phase_vs_steady": round(mean(
                         [du[j] for j in range(len(du)) if ph[j] >= skip and
                          (j == 0 or ph[j - 1] != ph[j])]) / steady, 4),
                     "nvml_sm_mhz": round(mean([nv["sm_mhz"][k] for k in i]), 1),
                     "nvml_power_w": round(mean([nv["power_w"][k] for k in i]), 1),
                     "sw_power_cap_share": round(mean(
                         [1.0 if nv["reasons"][k] & 0x4 else 0.0 for k in i]), 3)})
    s["duty"] = rows
    return s


if __name__ == "__main__":
    sys.exit(main())
