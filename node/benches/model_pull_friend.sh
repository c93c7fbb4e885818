#!/usr/bin/env bash
# A model pulled from a friend over loopback (`porfiry model pull NAME --from
# FRIEND`, /porfiry/model/1) against a plain HTTP download of the same file
# (python3 -m http.server + curl), plus a cut and a resume with real
# processes. Usage:
#   node/benches/model_pull_friend.sh PORFIRY_BINARY MODEL.gguf
# Prints MB/s of each; docs/benchmarks.md has the figures.
set -euo pipefail
BIN=${1:?porfiry binary}
MODEL=${2:?a GGUF file}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
H=$WORK/home P=$WORK/phone
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HTTP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" --data-dir "$H" init >/dev/null
"$BIN" --data-dir "$P" init >/dev/null
id() { "$BIN" --data-dir "$1" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["peer_id"])'; }
HOME_ID=$(id "$H") PHONE_ID=$(id "$P")
"$BIN" --data-dir "$H" llm add smol --file "$MODEL" >/dev/null
"$BIN" --data-dir "$H" friends add "$PHONE_ID" >/dev/null
"$BIN" --data-dir "$P" friends add "$HOME_ID" "/ip4/127.0.0.1/tcp/$PORT" --name home >/dev/null
BYTES=$(stat -c %s "$MODEL")
mbps() { python3 -c "print(f'{$BYTES/1e6/$1:.0f} MB/s ({$1:.2f} s for $BYTES bytes)')"; }

"$BIN" --data-dir "$H" run --listen "/ip4/127.0.0.1/tcp/$PORT" --no-api --share-models \
  >"$WORK/home.log" 2>&1 &
for _ in $(seq 100); do grep -q "peer id" "$WORK/home.log" && break; sleep 0.1; done

echo "--- not allowed yet"
if "$BIN" --data-dir "$P" model pull smol --from home 2>&1; then echo "UNEXPECTED: pulled"; exit 1; fi
ls "$P/models" 2>/dev/null && { echo "UNEXPECTED: files written"; exit 1; }
"$BIN" --data-dir "$H" friends models "$PHONE_ID" on

echo "--- cut after ~1/3, then resumed"
"$BIN" --data-dir "$P" model pull smol --from home >"$WORK/cut.log" 2>&1 &
PULL=$!
while :; do
  part=$(ls "$P"/models/*.part 2>/dev/null | head -1 || true)
  [ -n "$part" ] && [ "$(stat -c %s "$part")" -gt $((BYTES / 3)) ] && break
  sleep 0.01
done
kill -9 $PULL; wait $PULL 2>/dev/null || true
echo "partial file: $(stat -c %s "$part") of $BYTES bytes"
"$BIN" --data-dir "$P" model pull smol --from home
cmp "$MODEL" "$P/models/$(basename "$MODEL")" && echo "resumed file identical"

echo "--- timed: a whole pull from the friend"
rm -rf "$P/models" "$WORK/again"
"$BIN" --data-dir "$P" llm remove smol >/dev/null 2>&1 || true
start=$(date +%s.%N)
"$BIN" --data-dir "$P" model pull smol --from home >/dev/null
end=$(date +%s.%N)
echo "porfiry model pull --from (incl. process start, dial, list, hash check): $(mbps "$(echo "$end - $start" | bc)")"

echo "--- timed: plain HTTP of the same file"
(cd "$(dirname "$MODEL")" && python3 -m http.server "$HTTP" --bind 127.0.0.1 >/dev/null 2>&1) &
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$HTTP/" && break; sleep 0.1; done
start=$(date +%s.%N)
curl -s -o "$WORK/http.gguf" "http://127.0.0.1:$HTTP/$(basename "$MODEL")"
end=$(date +%s.%N)
echo "python3 -m http.server + curl: $(mbps "$(echo "$end - $start" | bc)")"
