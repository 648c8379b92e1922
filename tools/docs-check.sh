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
# workloads, calib, tests, tools and ./slicesim are links to the repository's, so what they write
# stays out of the tree and the commands read as a user would type them, whichever file they are
# in. Without --update, any difference is printed as a diff and the exit status is 1; with
# --update the files are rewritten.
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
vcache="$root/build/docs.$$.validate" # ./slicesim validate's output, see run_cmd
trap 'rm -rf "$scratch" "$vcache".*' EXIT
for l in experiments workloads calib tests tools slicesim; do
    ln -s "$root/$l" "$scratch/$l"
done

# Run one CMD in the scratch directory; its stdout (stderr too: the docs show what a user sees).
# `./slicesim validate` prints the same report every time (the same files in, no clock, no seed)
# and takes seconds, and some twenty blocks filter it: it runs once, for the first such block,
# into $vcache; a CMD `./slicesim validate | REST` then runs REST on that output, after
# validate's stderr (empty when it succeeds), as bash -c "$CMD" 2>&1 would show them.
run_cmd() {
    if [[ "$1" == './slicesim validate | '* ]]; then
        if [ ! -e "$vcache.out" ]; then
            (cd "$scratch" && ./slicesim validate >"$vcache.out.tmp" 2>"$vcache.err") || true
            mv "$vcache.out.tmp" "$vcache.out"
        fi
        cat "$vcache.err"
        (cd "$scratch" && bash -c "${1#./slicesim validate | }" <"$vcache.out" 2>&1) || true
        return
    fi
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
