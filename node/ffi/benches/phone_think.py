"""What a phone running the bindings costs with a real model: the node
started on a GGUF file (the embedded engine), a chat turn, N thinking
ticks in the foreground, then an idle window with thinking allowed but the
budget spent, counting the threads' wake-ups.

Run (after `cargo build -p porfiry-ffi`):
    python3 node/ffi/benches/phone_think.py --model ~/.cache/porfiry/models/SmolLM2-135M-Instruct.Q4_1.gguf
It generates the Python bindings from the built library into a temporary
folder first. Prints one line per measurement."""

import argparse
import os
import pathlib
import queue
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[3]


def bindings(out):
    target = ROOT / "target" / "debug"
    library = max(
        (p for p in [target / "libporfiry_ffi.so", target / "deps" / "libporfiry_ffi.so"] if p.exists()),
        key=lambda p: p.stat().st_mtime,
    )
    subprocess.run(
        [str(target / "uniffi-bindgen"), "generate", "--library", str(library),
         "--language", "python", "--no-format", "--out-dir", out],
        check=True,
    )
    subprocess.run(["cp", str(library), out], check=True)
    sys.path.insert(0, out)


def rss_mb():
    fields = dict(
        line.split(":", 1) for line in open("/proc/self/status") if ":" in line
    )
    kb = lambda k: int(fields[k].split()[0]) / 1024
    return kb("VmRSS"), kb("VmHWM")


def wakeups():
    """{(tid, thread name): voluntary context switches} but the main thread's."""
    counts = {}
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == os.getpid():
            continue
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                fields = dict(line.split(":\t", 1) for line in f if ":\t" in line)
        except FileNotFoundError:
            continue
        counts[(tid, fields["Name"].strip())] = int(fields["voluntary_ctxt_switches"])
    return counts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--ticks", type=int, default=1)
    parser.add_argument("--idle-secs", type=int, default=60)
    # The core waits its pause (30 s) after a tick before it finds the
    # budget spent: the idle window starts after that.
    parser.add_argument("--settle-secs", type=int, default=40)
    parser.add_argument("--language", default="en")
    args = parser.parse_args()
    out = tempfile.mkdtemp()
    bindings(out)
    import porfiry_ffi as porfiry

    class Listener(porfiry.NodeListener):
        def __init__(self):
            self.ticks = queue.Queue()

        def on_note(self, note):
            pass

        def on_link(self, link):
            pass

        def on_tick(self, tick):
            self.ticks.put(tick)

    class Turn(porfiry.ChatListener):
        def __init__(self):
            self.done = queue.Queue()

        def on_text(self, text):
            pass

        def on_tool_event(self, event):
            pass

        def on_done(self, answer):
            self.done.put(("ok", answer))

        def on_error(self, error):
            self.done.put(("error", error))

    data = tempfile.mkdtemp()
    settings = porfiry.NodeSettings(
        data_dir=data,
        profile=porfiry.NodeProfile.PHONE,
        listen=[],
        model=porfiry.ModelSource.FILE(path=os.path.expanduser(args.model)),
        language=args.language,
        think_ticks_per_hour=args.ticks,
    )
    began = time.monotonic()
    node = porfiry.PorfiryNode.start(settings)
    print(f"started with the model in {time.monotonic() - began:.1f} s; rss {rss_mb()[0]:.0f} MB")
    heard = Listener()
    node.set_listener(heard)

    turn = Turn()
    began = time.monotonic()
    node.chat("bench", "What time is it?", turn)
    kind, answer = turn.done.get(timeout=600)
    took = time.monotonic() - began
    if kind == "ok":
        print(f"chat turn: {took:.1f} s, tools {answer.tools}, answer {answer.text[:120]!r}")
    else:
        print(f"chat turn failed after {took:.1f} s: {answer}")

    node.set_conditions(True, True, 100, False)
    for _ in range(args.ticks):
        began = time.monotonic()
        tick = heard.ticks.get(timeout=1800)
        print(
            f"tick {tick.tick}: {time.monotonic() - began:.1f} s wall, {tick.duration_ms} ms by the core, "
            f"commands found {tick.commands_found} run {tick.commands_run}, novelty {tick.novelty}, error {tick.error}"
        )
    status = node.thinking_status()
    print(f"then: held by {status.held_by}, {status.ticks_last_hour} ticks in the hour")
    now, peak = rss_mb()
    print(f"rss {now:.0f} MB, peak {peak:.0f} MB")
    time.sleep(args.settle_secs)
    before = wakeups()
    time.sleep(args.idle_secs)
    after = wakeups()
    by_thread = {}
    for key, n in after.items():
        name = key[1]
        by_thread[name] = by_thread.get(name, 0) + n - before.get(key, 0)
    woke = sum(by_thread.values())
    print(f"idle {args.idle_secs} s, thinking allowed but the budget spent: {woke} wake-ups "
          f"({woke * 60 / args.idle_secs:.1f} a minute)")
    for name, n in sorted(by_thread.items(), key=lambda kv: -kv[1]):
        if n:
            print(f"  {name}: {n}")
    node.shutdown()


if __name__ == "__main__":
    main()
