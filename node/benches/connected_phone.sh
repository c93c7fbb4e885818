#!/usr/bin/env bash
# A phone-profile node connected to its server, API on, no model: voluntary
# context switches per thread (/proc/PID/task/*/status) over SECONDS (default
# 60) after a 10 s settle — each wake-up of a thread costs at least one.
#
#   node/benches/connected_phone.sh [PORFIRY_BIN] [SECONDS]
#
# Makes two fresh nodes, befriends them (the phone dials the server on
# loopback), prints one line per thread and the total. Goal (issue 29): <= 12
# wake-ups a minute.
#
# PHONE_ARGS adds flags to the phone's `porfiry run`; with a model
# (PHONE_ARGS="--model-file M.gguf --model-threads 1", issue 30) the phone
# answers one chat request before the settle, so the engine's context and
# buffers are in the memory figure.
set -euo pipefail
bin=${1:-target/release/porfiry}
secs=${2:-60}
dir=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT
peer_of() { "$bin" --data-dir "$1" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["peer_id"])'; }
"$bin" --data-dir "$dir/server" init >/dev/null
"$bin" --data-dir "$dir/phone" init >/dev/null
server=$(peer_of "$dir/server")
phone=$(peer_of "$dir/phone")
port=$((20000 + RANDOM % 20000))
"$bin" --data-dir "$dir/server" friends add "$phone" >/dev/null
"$bin" --data-dir "$dir/phone" friends add "$server" "/ip4/127.0.0.1/tcp/$port" >/dev/null
"$bin" --data-dir "$dir/server" run --listen "/ip4/127.0.0.1/tcp/$port" --no-api --no-think \
    >"$dir/server.out" 2>"$dir/server.err" &
pids+=($!)
sleep 1
# shellcheck disable=SC2086 # PHONE_ARGS is a list of flags
RUST_LOG=${RUST_LOG:-warn} "$bin" --data-dir "$dir/phone" run --profile phone --api 127.0.0.1:0 --no-think \
    ${PHONE_ARGS:-} >"$dir/phone.out" 2>"$dir/phone.err" &
pid=$!
pids+=("$pid")
if [ -n "${PHONE_ARGS:-}" ]; then
    for _ in $(seq 100); do grep -q '^api on http://' "$dir/phone.out" && break; sleep 0.2; done
    api=$(sed -n 's|^api on http://||p' "$dir/phone.out" | head -1)
    curl -sf "http://$api/v1/chat/completions" -H "Authorization: Bearer $(cat "$dir/phone/api-token")" \
        -H 'Content-Type: application/json' \
        -d '{"model":"porfiry","max_tokens":16,"messages":[{"role":"user","content":"Say hello."}]}' |
        python3 -c 'import json,sys; print("answer:", json.load(sys.stdin)["choices"][0]["message"]["content"])'
fi
sleep "${SETTLE:-10}"
snapshot() {
    for t in /proc/"$pid"/task/*; do
        printf '%s|%s|%s\n' "$(basename "$t")" "$(cat "$t/comm")" \
            "$(awk '/^voluntary_ctxt_switches/ {print $2}' "$t/status")"
    done | sort
}
snapshot >"$dir/a"
sleep "$secs"
snapshot >"$dir/b"
rss=$(awk '/^VmRSS|^VmHWM/ {printf "%s %s kB  ", $1, $2}' /proc/"$pid"/status)
link=$("$bin" --data-dir "$dir/phone" status --json |
    python3 -c 'import json,sys; print(",".join(f.get("link") or "none" for f in json.load(sys.stdin)["friends"]))')
echo "friend link: $link; voluntary switches over ${secs} s:"
join -t'|' -j1 "$dir/a" <(cut -d'|' -f1,3 "$dir/b") |
    awk -F'|' '{d = $4 - $3; total += d; printf "%-18s %6d\n", $2, d} END {printf "%-18s %6d\n", "total", total}'
echo "phone memory: $rss"
