#!/usr/bin/env bash
# Fuzzes every target (or those named) for a bounded time with AFL++ through
# cargo-afl, on stable Rust, and fails on a crash, a hang or a broken heap
# bound (fuzz/src/alloc_cap.rs), copying the inputs that did it into the
# artifacts folder. What CI calls; docs/testing.md, "Fuzzing".
#
#   fuzz/run.sh [TARGET...]
#
# FUZZ_SECONDS      seconds per target (default 60)
# FUZZ_JOBS         targets fuzzed at once (default: the machine's cores, at most 2)
# FUZZ_TIMEOUT_MS   an input running longer is a hang (default 1000)
# FUZZ_ARTIFACTS    where failing inputs are copied (default fuzz/artifacts)
# FUZZ_STATS        a file to write the per-target figures to (TSV), optional
set -euo pipefail
cd "$(dirname "$0")"

seconds="${FUZZ_SECONDS:-60}"
parallel="${FUZZ_JOBS:-$(( $(nproc) < 2 ? $(nproc) : 2 ))}"
timeout_ms="${FUZZ_TIMEOUT_MS:-1000}"
artifacts="${FUZZ_ARTIFACTS:-$PWD/artifacts}"
# Every target has a corpus folder (tests/replay.rs fails on an empty one).
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || mapfile -t targets < <(ls corpus)

start=$(date +%s)
# cargo-afl also builds AFL++ itself (C) on install: 45 s in all here.
if ! cargo afl --version >/dev/null 2>&1; then
  echo "== installing cargo-afl"
  cargo install cargo-afl --locked
fi
# AFL++ is built per rustc version: again after a toolchain update.
if ! config=$(cargo afl config --build 2>&1) && ! grep -q "already built" <<<"$config"; then
  echo "$config" >&2
  echo "cargo afl config --build failed: AFL++ could not be built" >&2
  exit 1
fi

# Their own target dir: a plain `cargo build --release` here (no
# instrumentation) must not overwrite them, nor they its build.
build_dir="target/afl-build"
echo "== building the targets instrumented (cargo afl build --release)"
cargo afl build --release --locked --bins --target-dir "$build_dir"
built=$(date +%s)

# A CI machine is no tuned fuzzing box: no CPU governor to set, crashes may
# go to a core-dump handler, and other work shares the cores.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
export AFL_NO_UI=1 AFL_FAST_CAL=1 AFL_BENCH_UNTIL_CRASH=1
# A panic's backtrace in an instrumented binary takes over a second to
# print: AFL++ would file the crash as a hang.
export RUST_BACKTRACE=0
# The GGUF target writes each input to a file: keep that in memory.
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm

out_root="target/afl-out"
mkdir -p "$out_root"

fuzz_one() {
  local t="$1" out="$out_root/$1" seeds="$out_root/$1.seeds"
  rm -rf "$out" "$seeds"
  # The seeds are the corpus and the regressions: afl-fuzz runs each first,
  # and one that crashes counts as a crash, so CI replays them instrumented.
  mkdir -p "$seeds"
  cp corpus/"$t"/* "$seeds"/
  if [ -d "regressions/$t" ]; then cp regressions/"$t"/* "$seeds"/; fi
  cargo afl fuzz -i "$seeds" -o "$out" -V "$seconds" -t "$timeout_ms" \
    -- "$build_dir/release/$t" >"$out.log" 2>&1
}

pids=()
names=()
for t in "${targets[@]}"; do
  if [ ! -d "corpus/$t" ]; then
    echo "no corpus for target $t" >&2
    exit 2
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  echo "== fuzzing $t for ${seconds}s"
  fuzz_one "$t" &
  pids+=($!)
  names+=("$t")
done

failed=0
declare -A status
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then status[${names[$i]}]=0; else status[${names[$i]}]=$?; fi
done

stat() { sed -n "s/^$1 *: *//p" "$2" 2>/dev/null | head -1; }
printf '%-14s %8s %10s %6s %7s %6s %5s\n' target execs/s execs edges corpus crash hang
[ -n "${FUZZ_STATS:-}" ] && printf 'target\texecs_per_sec\texecs_done\tedges\tcorpus\tcrashes\thangs\n' >"$FUZZ_STATS"
for t in "${targets[@]}"; do
  s="$out_root/$t/default/fuzzer_stats"
  if [ ! -f "$s" ]; then
    echo "$t: afl-fuzz did not start (exit ${status[$t]}); the end of its log:" >&2
    tail -n 15 "$out_root/$t.log" >&2
    failed=1
    continue
  fi
  execs=$(stat execs_done "$s")
  elapsed=$(( $(stat last_update "$s") - $(stat start_time "$s") ))
  rate=$(( execs / (elapsed > 0 ? elapsed : 1) ))
  crashes=$(stat saved_crashes "$s")
  hangs=$(stat saved_hangs "$s")
  row=("$t" "$rate" "$execs" "$(stat edges_found "$s")" "$(stat corpus_count "$s")" "$crashes" "$hangs")
  printf '%-14s %8s %10s %6s %7s %6s %5s\n' "${row[@]}"
  if [ -n "${FUZZ_STATS:-}" ]; then (IFS=$'\t'; echo "${row[*]}") >>"$FUZZ_STATS"; fi
  if [ "${crashes:-0}" != 0 ] || [ "${hangs:-0}" != 0 ]; then
    mkdir -p "$artifacts/$t"
    for kind in crashes hangs; do
      for f in "$out_root/$t/default/$kind"/id:*; do
        [ -e "$f" ] || continue
        cp "$f" "$artifacts/$t/$kind-$(basename "$f" | cut -d, -f1 | tr ':' '-')"
      done
    done
    echo "$t: $crashes crashes, $hangs hangs; inputs in $artifacts/$t (replay one: cargo run --bin $t -- FILE, from fuzz/)" >&2
    failed=1
  fi
done
end=$(date +%s)
echo "== fuzzing took $(( end - start ))s: build $(( built - start ))s, fuzzing $(( end - built ))s"
exit "$failed"
