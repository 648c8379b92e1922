#!/usr/bin/env bash
# calib/run-all.sh - run the whole calibration suite on this node and write ONE JSON file
# (schema "slicesim-calib" version 1, documented in calib/README.md).
#
# usage: calib/run-all.sh [-o OUT.json] [--quick] [--gpu INDEX]
#   -o FILE    output (default calib-<host>-<UTC date>.json in the current directory)
#   --quick    a few seconds per program (smoke test; not for fitting)
#   --gpu N    the GPU measured by the single-GPU programs (default 0); allreduce uses all
# Programs come from calib/bin (build with `make calib`), or $CALIB_BIN.
# The GPU's settings are never changed: it is measured as found. With MIG enabled on the GPU,
# flops, membw and timeslice run once per MIG device (CUDA_VISIBLE_DEVICES=MIG-...) on the
# whole instance, and MPS is skipped. The MPS daemon, when this script starts it, is stopped on
# every exit path (normal end, error, signal).
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${CALIB_BIN:-$here/bin}
out=""
quick=0
gpu=0
while [ $# -gt 0 ]; do
    case "$1" in
    -o) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --gpu) gpu=$2; shift 2 ;;
    *) echo "usage: $0 [-o OUT.json] [--quick] [--gpu INDEX]" >&2; exit 2 ;;
    esac
done
[ -n "$out" ] || out="calib-$(hostname)-$(date -u +%Y%m%dT%H%M%SZ).json"
for p in flops membw worker timeslice mps; do
    [ -x "$bin/$p" ] || { echo "run-all: $bin/$p missing; run 'make calib' first" >&2; exit 1; }
done
command -v nvidia-smi >/dev/null || { echo "run-all: nvidia-smi not found" >&2; exit 1; }

# NVLink multicast stays off (it can take a shared host's GPUs out of service).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
tmp=$(mktemp -d)
mps_started=0
stop_mps() {
    if [ "$mps_started" = 1 ]; then
        echo quit | nvidia-cuda-mps-control >/dev/null 2>&1
        mps_started=0
        sleep 1
    fi
}
trap 'stop_mps; rm -rf "$tmp"' EXIT
trap 'stop_mps; exit 130' INT TERM HUP

jstr() { # JSON string literal of $1
    printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\010\013-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' \
        | awk 'NR>1{printf "\\n"} {printf "%s", $0}')"
}
jval() { # number as is, anything else as a string
    if printf '%s' "$1" | grep -Eq '^-?[0-9]+(\.[0-9]+)?$'; then printf '%s' "$1"; else jstr "$1"; fi
}
SMI_FIELDS="index name uuid driver_version pci.bus_id clocks.sm clocks.mem clocks.max.sm
clocks.max.mem clocks.applications.graphics power.limit power.default_limit power.max_limit
power.draw temperature.gpu pstate compute_mode mig.mode.current memory.total persistence_mode
clocks_event_reasons.active"
smi_state() { # JSON object of nvidia-smi --query-gpu fields of GPU $1 (one query per field, so
              # that a field this driver lacks costs only itself)
    local first=1 f v
    printf '{'
    for f in $SMI_FIELDS; do
        v=$(nvidia-smi --query-gpu="$f" --format=csv,noheader,nounits -i "$1" 2>/dev/null | head -1)
        [ $? -eq 0 ] && [ -n "$v" ] || continue
        case "$v" in *"Not Supported"* | *"not a valid field"* | *"[N/A]"*) continue ;; esac
        [ $first = 1 ] || printf ','
        first=0
        printf '%s:%s' "$(jstr "$f")" "$(jval "$v")"
    done
    printf '}'
}
valid_json() { # $1 file
    if command -v python3 >/dev/null; then
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null
    else
        [ -s "$1" ] && [ "$(tail -c 2 "$1" | head -c 1)" = "}" ]
    fi
}
# run_section KEY PROGRAM ARGS...: writes $tmp/KEY.json (the program's object, or null) and
# $tmp/KEY.status (exit status, seconds, command, stderr tail).
run_section() {
    local key=$1 t0 t1 rc
    shift
    echo "run-all: $key: $*" >&2
    t0=$(date +%s.%N)
    "$@" -o "$tmp/$key.out" 2>"$tmp/$key.err"
    rc=$?
    t1=$(date +%s.%N)
    if [ -s "$tmp/$key.out" ] && valid_json "$tmp/$key.out"; then
        cp "$tmp/$key.out" "$tmp/$key.json"
    else
        echo null >"$tmp/$key.json"
    fi
    printf '{"exit_status":%d,"seconds":%.1f,"command":%s,"stderr_tail":%s}' "$rc" \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$(jstr "$*")" "$(jstr "$(tail -n 8 "$tmp/$key.err")")" \
        >"$tmp/$key.status"
    tail -n 3 "$tmp/$key.err" >&2
}

if [ $quick = 1 ]; then
    A_FLOPS="--reps 2 --target-ms 1"; A_MEMBW="--reps 2 --mib 64"
    A_TS="--lengths 0.1,1 --procs 1,2 --work-ms 20 --reps 1"
    A_MPS="--pcts 100,50 --mixes c,m,cm --work-ms 20"; A_AR="--max 16777216 --reps 2"
else
    A_FLOPS=""; A_MEMBW=""; A_TS=""; A_MPS=""; A_AR=""
fi

date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
n_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
cuda_smi=$(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -1 | awk '{print $3}')
nvcc_v=$( (command -v nvcc >/dev/null && nvcc --version | grep -o 'release [0-9.]*, V[0-9.]*') || echo "")
git_rev=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
mig_mode=$(nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader -i "$gpu" 2>/dev/null | head -1)
state_before=$(smi_state "$gpu")
base_cvd=${CUDA_VISIBLE_DEVICES-}

mig_json="[]"
mps_daemon='{"started":false,"reason":"not attempted"}'
if [ "$mig_mode" = "Enabled" ]; then
    # MIG devices of this GPU: the lines after "GPU N:" up to the next "GPU " line.
    mapfile -t migs < <(nvidia-smi -L | awk -v g="GPU $gpu:" '
        index($0, g) == 1 {on = 1; next} /^GPU / {on = 0}
        on && /MIG/ {p = $2; u = $0; sub(/.*UUID: /, "", u); sub(/\).*/, "", u); print p " " u}')
    i=0
    mig_json="["
    for m in "${migs[@]}"; do
        prof=${m%% *}
        uuid=${m#* }
        export CUDA_VISIBLE_DEVICES=$uuid
        run_section "mig${i}_flops" "$bin/flops" --whole $A_FLOPS
        run_section "mig${i}_membw" "$bin/membw" --whole $A_MEMBW
        run_section "mig${i}_timeslice" "$bin/timeslice" $A_TS
        [ $i = 0 ] || mig_json+=","
        mig_json+="{\"profile\":$(jstr "$prof"),\"uuid\":$(jstr "$uuid")"
        for s in flops membw timeslice; do
            mig_json+=",\"$s\":$(cat "$tmp/mig${i}_$s.json"),\"${s}_status\":$(cat "$tmp/mig${i}_$s.status")"
        done
        mig_json+="}"
        i=$((i + 1))
    done
    mig_json+="]"
    for s in flops membw timeslice mps; do
        echo null >"$tmp/$s.json"
        printf '{"skipped":"MIG enabled: see mig_devices"}' >"$tmp/$s.status"
    done
    mps_daemon='{"started":false,"reason":"skipped: MIG enabled"}'
else
    export CUDA_VISIBLE_DEVICES=$gpu
    run_section flops "$bin/flops" $A_FLOPS
    run_section membw "$bin/membw" $A_MEMBW
    run_section timeslice "$bin/timeslice" $A_TS
    # MPS: a private pipe/log directory so that no other daemon is touched.
    export CUDA_MPS_PIPE_DIRECTORY=$tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=$tmp/mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if ! command -v nvidia-cuda-mps-control >/dev/null; then
        mps_daemon='{"started":false,"reason":"nvidia-cuda-mps-control not found"}'
        echo null >"$tmp/mps.json"
        printf '{"skipped":"no MPS control program"}' >"$tmp/mps.status"
    elif nvidia-cuda-mps-control -d 2>"$tmp/mps-start.err"; then
        mps_started=1
        sleep 1
        run_section mps "$bin/mps" $A_MPS
        stop_mps
        mps_daemon="{\"started\":true,\"control_log_tail\":$(jstr "$(tail -n 12 "$CUDA_MPS_LOG_DIRECTORY/control.log" 2>/dev/null)"),\"server_log_tail\":$(jstr "$(tail -n 12 "$CUDA_MPS_LOG_DIRECTORY/server.log" 2>/dev/null)")}"
    else
        mps_daemon="{\"started\":false,\"reason\":$(jstr "nvidia-cuda-mps-control -d failed: $(cat "$tmp/mps-start.err")")}"
        echo null >"$tmp/mps.json"
        printf '{"skipped":"MPS daemon did not start"}' >"$tmp/mps.status"
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi
if [ -n "$base_cvd" ]; then export CUDA_VISIBLE_DEVICES=$base_cvd; else unset CUDA_VISIBLE_DEVICES; fi
if [ -x "$bin/allreduce" ] && [ "$n_gpus" -ge 2 ] && [ "$mig_mode" != "Enabled" ]; then
    run_section allreduce "$bin/allreduce" $A_AR
else
    echo null >"$tmp/allreduce.json"
    if [ -x "$bin/allreduce" ]; then why="fewer than 2 GPUs or MIG enabled"; else why="built without NCCL"; fi
    printf '{"skipped":%s}' "$(jstr "$why")" >"$tmp/allreduce.status"
fi
state_after=$(smi_state "$gpu")

{
    printf '{"schema":"slicesim-calib","schema_version":1,'
    printf '"date_utc":%s,"host":%s,' "$(jstr "$date_utc")" "$(jstr "$(hostname)")"
    printf '"suite":{"git_rev":%s,"nvcc":%s,"quick":%s,"gpu_index":%s},' "$(jstr "$git_rev")" \
        "$(jstr "$nvcc_v")" "$([ $quick = 1 ] && echo true || echo false)" "$gpu"
    printf '"cuda_version":%s,"gpu_count":%s,"mig_mode":%s,' "$(jstr "$cuda_smi")" "${n_gpus:-0}" \
        "$(jstr "$mig_mode")"
    printf '"gpu_before":%s,"gpu_after":%s,' "$state_before" "$state_after"
    printf '"mps_daemon":%s,' "$mps_daemon"
    for s in flops membw timeslice mps allreduce; do
        printf '"%s":%s,"%s_status":%s,' "$s" "$(cat "$tmp/$s.json")" "$s" "$(cat "$tmp/$s.status")"
    done
    printf '"mig_devices":%s}\n' "$mig_json"
} >"$out.tmp" && mv "$out.tmp" "$out"
if valid_json "$out"; then
    echo "run-all: wrote $out" >&2
else
    echo "run-all: $out is not valid JSON" >&2
    exit 1
fi
