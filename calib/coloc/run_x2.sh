#!/bin/sh
# calib/coloc/run_x2.sh - two co-location tables at once, one per GPU of a 2-GPU host: GPU 0
# measures the workloads of W0,.., GPU 1 those of W2,.., each invocation pinned to its own half of
# the CPUs, with its own MPS control daemon (CUDA_VISIBLE_DEVICES, its own CUDA_MPS_PIPE_DIRECTORY
# / CUDA_MPS_LOG_DIRECTORY). Default: coloc.py --phases bracket (--repeats 3 --window-s 1).
# --rot: rotcoloc.py's rotated rounds (table h200-coloc-g), given --gpu, --cpus (its half) and its
# own --mps-dir; the extra flags go to rotcoloc.py (--rounds, --window-s, --rotate-procs).
# --rot --offset (table h200-coloc-h): the two invocations also step their windows together
# (rotcoloc.py --sync-file/--sync-peer, files under OUTDIR/sync/) and GPU 1's rotation starts half
# a round later (--first-offset 5 of the 10 configurations), so the GPUs never run the same
# configuration at the same moment: a lone configuration on one GPU meets 2-8 clients on the
# other and 2-8 clients meet a lone one (table g's lockstep had 2k busy clients at mpsk).
# The halves: the CPUs ordered by (NUMA node, package, core, CPU) and cut in two, so that no
# physical core (hyperthread pair) and no node is shared where the layout allows; the layout
# (lscpu, numactl -H, nvidia-smi topo -m, each CPU's node/package/core) goes into env.txt.
# Both daemons are told to quit at the end whatever happened (the scripts also stop their own on
# every exit path), and env.txt ends with pgrep -x nvidia-cuda-mps (the 15-character comm).
# Never touches MIG mode, clocks, power limit or compute mode.
# Usage: sh calib/coloc/run_x2.sh [--rot [--offset]] W0,W1,.. W2,W3,.. OUTDIR [BUDGET_S] [extra flags]
# Writes OUTDIR/gpu0.json, gpu0.log, gpu1.json, gpu1.log, env.txt.
set -u
rot=0; [ "${1:-}" = "--rot" ] && { rot=1; shift; }
offset=0; [ $rot -eq 1 ] && [ "${1:-}" = "--offset" ] && { offset=1; shift; }
only0=$1; only1=$2; out=$3; budget=${4:-480}
shift 3; [ $# -gt 0 ] && shift
here=$(dirname "$0")
mkdir -p "$out"
export CUDA_DEVICE_ORDER=PCI_BUS_ID PYTHONUNBUFFERED=1
halves=$(python3 - <<'PY'
import glob, os
def rd(p, d=0):
    try:
        return int(open(p).read().strip())
    except (OSError, ValueError):
        return d
cpus = sorted(os.sched_getaffinity(0))
node = {}
for nd in glob.glob("/sys/devices/system/node/node[0-9]*"):
    for c in glob.glob(nd + "/cpu[0-9]*"):
        node[int(c.rsplit("cpu", 1)[1])] = int(nd.rsplit("node", 1)[1])
t = "/sys/devices/system/cpu/cpu%d/topology/"
key = {c: (node.get(c, 0), rd(t % c + "physical_package_id"), rd(t % c + "core_id"), c) for c in cpus}
cpus.sort(key=key.get)
h = len(cpus) // 2
print(",".join(map(str, cpus[:h])), ",".join(map(str, cpus[h:])))
print("# cpu node package core:", " ".join("%d:%d/%d/%d" % ((c,) + key[c][:3]) for c in cpus))
PY
)
cpus0=$(echo "$halves" | sed -n 1p | cut -d' ' -f1); cpus1=$(echo "$halves" | sed -n 1p | cut -d' ' -f2)
n=$(nproc); half=$((n / 2))
[ -n "$cpus0" ] || cpus0="0-$((half - 1))"
[ -n "$cpus1" ] || cpus1="$half-$((n - 1))"
{
    date -u; nproc; nvidia-smi --query-gpu=index,name,uuid,driver_version,compute_mode,mig.mode.current,power.limit,clocks.max.sm,pci.bus_id --format=csv
    python3 -c 'import torch, torchvision, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "torchvision", torchvision.__version__, "transformers", transformers.__version__)'
    echo "gpu0 cpus: $cpus0"; echo "gpu1 cpus: $cpus1"; echo "$halves" | sed -n 2p
    lscpu; numactl -H 2>&1 | head -20; nvidia-smi topo -m
    echo "mps before (pgrep -x nvidia-cuda-mps): $(pgrep -x nvidia-cuda-mps | tr '\n' ' ')"
} >"$out/env.txt" 2>&1
pids=""
rm -rf "$out/sync"; [ $offset -eq 1 ] && mkdir -p "$out/sync"   # no counter left from an earlier call
for g in 0 1; do
    if [ $g -eq 0 ]; then only=$only0; cpus=$cpus0; else only=$only1; cpus=$cpus1; fi
    [ -n "$only" ] || continue
    d=/tmp/coloc-mps-gpu$g
    rm -rf "$d-pipe" "$d-log" "$d-nodaemon"
    if [ $rot -eq 1 ]; then
        sync=""
        if [ $offset -eq 1 ]; then
            sync="--sync-file $out/sync/gpu$g --sync-peer $out/sync/gpu$((1 - g)) --first-offset $((5 * g))"
        fi
        # shellcheck disable=SC2086 # $sync is a list of flags without spaces in them
        (mkdir -p "$out/gpu$g"; CUDA_VISIBLE_DEVICES=$g taskset -c "$cpus" python3 "$here/rotcoloc.py" \
            --out "$out/gpu$g" --gpu $g --cpus "$cpus" --mps-dir "$d" --only "$only" \
            --budget-s "$budget" $sync "$@" >"$out/gpu$g.log" 2>&1;
         mv "$out/gpu$g/rotcoloc.json" "$out/gpu$g.json"; rmdir "$out/gpu$g") &
    else
        (mkdir -p "$out/gpu$g"; CUDA_VISIBLE_DEVICES=$g taskset -c "$cpus" python3 "$here/coloc.py" \
            --out "$out/gpu$g" --phases bracket --gpu $g --mps-dir "$d" --only "$only" \
            --repeats 3 --window-s 1 --budget-s "$budget" "$@" >"$out/gpu$g.log" 2>&1;
         mv "$out/gpu$g/coloc.json" "$out/gpu$g.json"; rmdir "$out/gpu$g") &
    fi
    pids="$pids $!"
done
for p in $pids; do wait "$p"; done
for g in 0 1; do   # belt and braces: the daemons must not outlive the command
    d=/tmp/coloc-mps-gpu$g
    if [ -e "$d-pipe/control" ]; then
        echo quit | CUDA_MPS_PIPE_DIRECTORY="$d-pipe" CUDA_MPS_LOG_DIRECTORY="$d-log" \
            nvidia-cuda-mps-control >>"$out/env.txt" 2>&1
        echo "gpu$g: daemon still up at the end, told to quit" >>"$out/env.txt"
    fi
done
rm -rf "$out/sync"
sleep 1
echo "mps after (pgrep -x nvidia-cuda-mps): $(pgrep -x nvidia-cuda-mps | tr '\n' ' ')" >>"$out/env.txt"
date -u >>"$out/env.txt"
