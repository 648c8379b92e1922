#!/usr/bin/env python3
"""calib/coloc/mpsconc.py - what lets k identical MPS clients' aggregate rate rise (issue 25 item 3),
read by hand from the recorded co-location runs; no device, no model: it prints measured figures.

For every coloc.py / rotcoloc.py JSON given, per workload and MPS configuration (the lone client, k
identical clients, caps): the clients' aggregate rate (it/s), NVML GPM SM activity (the share of
SM-time with a warp resident, NVML_GPM_METRIC_SM_UTIL) and their quotient, SM-time per iteration
S = SM activity x SMs / aggregate (SM-s), over the workload's first exclusive solo's S, and the
GPM DRAM utilisation (NVML_GPM_METRIC_DRAM_BW_UTIL) per unit of aggregate rate over the solo's
(D/D1: the DRAM bytes one iteration moves, relative to the solo). A term that
conserves the solo's S (the kernels of other clients run on the SMs one client's grids and launch
gaps leave idle) predicts the many-client ceiling SMs / S; the quotient column says how far the
measured S moves from it as clients are added (contention that a per-workload inflation would have
to describe).

For every co-location CSV given (experiments/validation/data/*.csv, calib/coloc/table.py's
columns), per solo row with its census: phi = busy_frac / gpu_util, the share of NVML's busy time
in which the loop's kernels run (the rest is launch gaps inside the GPU phase, holding no SM), the
solo's S, the conserved ceiling SMs x 0.98 / S (0.98: the highest SM activity k clients reached,
h200-coloc-f) and the measured largest aggregate over the table's mpsK rows.

Usage: mpsconc.py [--sms 132] FILE...   (JSON and CSV files alike, by extension)
"""
import csv
import json
import sys

SAT = 0.98  # highest GPM SM activity k clients reached (h200-coloc-f rot2, mps6/mps8: 0.96-0.995)


def label(r):
    if r.get('config'):
        return r['config']
    if r['sharing'] == 'exclusive':
        return 'solo'
    if r['kind'] == 'peers':
        return 'mps%d' % r['k']
    if r['kind'] == 'cap':
        return 'cap%s' % r.get('pct', r['clients'][0].get('pct', '?'))
    return 'solo-mps' if r['kind'] in ('solo', 'solo_end') else r['kind']


def json_rows(path, sms):
    d = json.load(open(path))
    first = {}
    print('# %s' % path)
    print('%-13s %-9s %8s %6s %8s %8s %6s %8s' % ('workload', 'config', 'agg', 'sm', 'S SM-s', 'S/S1',
                                                   'dram', 'D/D1'))
    for r in d['runs']:
        names = {c['workload'] for c in r['clients']}
        gpm = r.get('nvml_util', {}).get('gpm') or {}
        if len(names) != 1 or 'sm_util_pct' not in gpm:
            continue
        w = names.pop()
        agg = sum(c['rate_iter_per_s'] for c in r['clients'])
        if not agg > 0:
            continue
        a = gpm['sm_util_pct'] / 100.0
        dram = gpm.get('dram_bw_util_pct', float('nan')) / 100.0
        s = a * sms / agg
        lab = label(r)
        if lab == 'solo' and w not in first:
            first[w] = (s, dram / agg)
        ref = first.get(w)
        print('%-13s %-9s %8.1f %6.3f %8.4f %8s %6.3f %8s' % (
            w, lab, agg, a, s, '%.3f' % (s / ref[0]) if ref else '-', dram,
            '%.3f' % (dram / agg / ref[1]) if ref and ref[1] > 0 else '-'))


def csv_rows(path, sms):
    rows = [r for r in csv.DictReader(l for l in open(path) if not l.startswith('#'))]
    agg = {}
    for r in rows:
        k = r['kind']
        if k.startswith('mps') and k[3:].isdigit():
            n = int(k[3:])
            agg.setdefault(r['workload'], []).append((n, n * float(r['rate_per_s'])))
    print('# %s' % path)
    print('%-13s %6s %6s %6s %6s %8s %8s %8s %8s' % ('workload', 'rate', 'util', 'busy', 'phi',
                                                      'S SM-s', 'ceiling', 'measured', 'at k'))
    for r in rows:
        if r['kind'] != 'solo' or not r.get('busy_frac') or not r.get('sm_active'):
            continue
        rate, u, b, a = (float(r[c]) for c in ('rate_per_s', 'gpu_util', 'busy_frac', 'sm_active'))
        s = a * sms / rate
        best = max(agg.get(r['workload'], [(0, 0.0)]), key=lambda x: x[1])
        print('%-13s %6.1f %6.3f %6.3f %6.3f %8.4f %8.1f %8.1f %8d' % (
            r['workload'], rate, u, b, min(1.0, b / u), s, SAT * sms / s, best[1], best[0]))


def main(argv):
    sms = 132
    if argv[:1] == ['--sms']:
        sms, argv = int(argv[1]), argv[2:]
    if not argv:
        print(__doc__)
        return 2
    for p in argv:
        (json_rows if p.endswith('.json') else csv_rows)(p, sms)
        print()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
