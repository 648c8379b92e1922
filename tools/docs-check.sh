#!/usr/bin/env bash
# tools/docs-check.sh - blocks of README.md and docs/*.md generated from the program, so that they
# cannot drift.
#
#   tools/docs-check.sh [--update] [FILE.md...]      (default: README.md and docs/*.md, as
#                                                    `make docs-check`; run from the repo root)
#
# Two markers, each on a line of its own:
#   <!-- docs-check: CMD -->   the next fenced block (``` ... ```) holds, for this marker and
#                              every docs-check marker right above it, "$ CMD" and CMD's output;
#   <!-- docs-gen: CMD -->     the lines up to the next blank line are CMD's output (a table).
# CMDs run with bash in a scratch directory (build/docs.PID/, removed at exit) where experiments,
# workloads, calib, tests and tools are links to the repository's and ./slicesim runs its binary
# (validate's report made once: see below), so what they write stays out of the tree and the
# commands read as a user would type them, whichever file they are in. Without --update, any
# difference is printed as a diff and the exit status is 1; with --update the files are rewritten.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
update=0
files=()
for a in "$@"; do
    case "$a" in
    --update) update=1 ;;
    *) files+=("$a") ;;
    esac
done
[ ${#files[@]} -eq 0 ] && files=(README.md docs/*.md)
[ -x ./slicesim ] || { echo "docs-check: ./slicesim is not built (make first)" >&2; exit 2; }

scratch="$root/build/docs.$$" # one per invocation: tests may run two at once
rm -rf "$scratch"
mkdir -p "$scratch"
vcache="$root/build/docs.$$.validate" # ./slicesim validate's report, see the wrapper below
trap 'wait; rm -rf "$scratch" "$vcache".*' EXIT # wait: the prefetch below
for l in experiments workloads calib tests tools; do
    ln -s "$root/$l" "$scratch/$l"
done

# ./slicesim in the scratch directory is the repository's binary, except that `./slicesim
# validate` with no other argument prints a report made once. validate prints the same report
# every time (the same files in, no clock, no seed) and takes seconds, and some twenty blocks
# filter it, directly (`./slicesim validate | grep ...`) or through a script that calls it
# (experiments/validation/from-data-table.sh): it runs once, in the scratch directory as every
# CMD, into $vcache.out ($vcache.err, $vcache.rc: its stderr and exit status), and every such
# call prints those as the binary would. The first caller (or the prefetch below) runs it under
# a lock; the others wait on the lock.
cat >"$scratch/slicesim" <<EOF
#!/bin/sh
if [ \$# -eq 1 ] && [ "\$1" = validate ]; then
    flock "$vcache.lock" sh -c '[ -e "$vcache.rc" ] ||
        { "$root/slicesim" validate >"$vcache.out" 2>"$vcache.err"; echo \$? >"$vcache.rc"; }'
    cat "$vcache.out"
    cat "$vcache.err" >&2
    exit "\$(cat "$vcache.rc")"
fi
exec "$root/slicesim" "\$@"
EOF
chmod +x "$scratch/slicesim"
# When a block of these files names validate (or validation/'s scripts), the report is made in
# the background from the start, on the core that the blocks before it leave idle (most run one
# process at a time); the first block that needs it waits for the rest of it.
if grep -qE '^<!-- docs-(check|gen): .*validat' "${files[@]}"; then
    (cd "$scratch" && ./slicesim validate >/dev/null 2>&1) &
fi

# Run one CMD in the scratch directory; its stdout (stderr too: the docs show what a user sees).
run_cmd() {
    (cd "$scratch" && bash -c "$1" 2>&1) || true
}

status=0
for f in "${files[@]}"; do
    out=$(mktemp)
    cmds=()
    mode=copy # copy | skip_fence | skip_para
    while IFS= read -r line || [ -n "$line" ]; do
        case "$mode" in
        skip_fence)
            [ "$line" = '```' ] && { printf '```\n' >>"$out"; mode=copy; }
            continue ;;
        skip_para)
            [ -z "$line" ] && { printf '\n' >>"$out"; mode=copy; }
            continue ;;
        esac
        if [[ "$line" =~ ^\<!--\ docs-check:\ (.*)\ --\>$ ]]; then
            cmds+=("${BASH_REMATCH[1]}")
            printf '%s\n' "$line" >>"$out"
        elif [[ "$line" =~ ^\<!--\ docs-gen:\ (.*)\ --\>$ ]]; then
            printf '%s\n' "$line" >>"$out"
            run_cmd "${BASH_REMATCH[1]}" >>"$out"
            mode=skip_para
        elif [ ${#cmds[@]} -gt 0 ] && [ "$line" = '```' ]; then
            printf '```\n' >>"$out"
            for c in "${cmds[@]}"; do
                printf '$ %s\n' "$c" >>"$out"
                run_cmd "$c" >>"$out"
            done
            cmds=()
            mode=skip_fence
        else
            [ ${#cmds[@]} -gt 0 ] && [ -n "$line" ] && {
                echo "docs-check: $f: a docs-check marker must be followed by a fenced block" >&2
                exit 2
            }
            printf '%s\n' "$line" >>"$out"
        fi
    done <"$f"
    if ! cmp -s "$f" "$out"; then
        if [ $update -eq 1 ]; then
            cp "$out" "$f"
            echo "docs-check: rewrote the generated blocks of $f"
        else
            echo "docs-check: $f differs from what the program prints now" \
                 "(review, then make docs-update):" >&2
            diff -u "$f" "$out" >&2 || true
            status=1
        fi
    fi
    rm -f "$out"
done
[ $status -eq 0 ] && [ $update -eq 0 ] && echo "docs-check: generated blocks match the program"
exit $status
