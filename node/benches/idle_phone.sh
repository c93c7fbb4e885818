#!/usr/bin/env bash
# Idle phone-profile node: wake-ups per minute and memory, read from /proc.
#
#   node/benches/idle_phone.sh [PORFIRY_BIN] [SECONDS]
#
# Starts `porfiry run --profile phone` on a fresh data dir with no friends,
# lets it settle, then sums voluntary + nonvoluntary context switches over
# every thread (/proc/PID/task/*/status) across SECONDS (default 60): each
# time a thread wakes and goes back to sleep costs at least one switch, so
# the sum bounds the wake-ups from above. Prints wake-ups per minute, the
# threads, VmRSS and VmHWM. Goal (issue 8): <= 12 wake-ups/min, RSS <= 25 MB.
set -euo pipefail
bin=${1:-target/release/porfiry}
secs=${2:-60}
settle=${SETTLE:-5}
dir=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT
"$bin" --data-dir "$dir/node" init >/dev/null
RUST_LOG=${RUST_LOG:-warn} "$bin" --data-dir "$dir/node" run --profile phone >"$dir/out" 2>"$dir/err" &
pid=$!
for _ in $(seq 1 500); do
    grep -q '^peer id:' "$dir/out" 2>/dev/null && break
    sleep 0.02
done
grep -q '^peer id:' "$dir/out" || { echo "node did not start:"; cat "$dir/err"; exit 1; }
sleep "$settle"
switches() {
    cat /proc/"$pid"/task/*/status 2>/dev/null |
        awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print s }'
}
per_thread() {
    for t in /proc/"$pid"/task/*; do
        printf '%s %s\n' "$(cat "$t/comm")" \
            "$(awk '/^(non)?voluntary_ctxt_switches/ { s += $2 } END { print s }' "$t/status")"
    done
}
per_thread >"$dir/before"
a=$(switches)
sleep "$secs"
b=$(switches)
per_thread >"$dir/after"
echo "binary:            $bin"
echo "measured over:     ${secs}s (after ${settle}s settling)"
echo "wake-ups / minute: $(( (b - a) * 60 / secs ))"
echo "threads:           $(ls /proc/"$pid"/task | wc -l)"
echo "per thread (switches during the window):"
paste "$dir/before" "$dir/after" | awk '{ printf "  %-20s %d\n", $1, $4 - $2 }'
grep -E '^(VmRSS|VmHWM)' /proc/"$pid"/status | sed 's/^/  /'
