"""A phone app gets its model from home through the bindings: the home
server is a real `porfiry run --share-models` process (the binary named by
PORFIRY_BIN, which the Rust harness sets to the workspace's built
`porfiry`), the phone a PorfiryNode on loopback. A friend without
permission is refused and nothing is written; a pull cut by pause() keeps
its partial file and the same call after resume() continues it; a
corrupted byte is refused; a metered phone waits for Wi-Fi."""

import asyncio
import json
import os
import struct
import subprocess
import threading
import time

import pytest

import porfiry_ffi as porfiry
from conftest import WAIT_SECS, Notes, free_port

PORFIRY = os.environ.get("PORFIRY_BIN", "")

pytestmark = pytest.mark.skipif(
    not os.path.isfile(PORFIRY),
    reason="PORFIRY_BIN names no built porfiry binary (cargo build -p porfiry-node)",
)

# The model's tensor data: a few MB, many 256 KiB chunks.
TENSOR_ELEMENTS = 1 << 20


def run(coroutine):
    return asyncio.run(coroutine)


def gguf(path, seed):
    """A small GGUF v3 file the registry accepts (one F32 tensor of
    TENSOR_ELEMENTS values, a llama architecture and a chat template), its
    data bytes drawn from `seed`."""

    def string(s):
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    out = b"GGUF" + struct.pack("<IQQ", 3, 1, 2)
    for key, value in (("general.architecture", "llama"), ("tokenizer.chat_template", "{{ messages }}")):
        out += string(key) + struct.pack("<I", 8) + string(value)
    out += string("w") + struct.pack("<IQIQ", 1, TENSOR_ELEMENTS, 0, 0)
    out += b"\0" * (-len(out) % 32)
    out += bytes((i * seed + i // 251) % 256 for i in range(TENSOR_ELEMENTS * 4))
    path.write_bytes(out)
    return path


def cli(data_dir, *args):
    done = subprocess.run(
        [PORFIRY, "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=WAIT_SECS,
    )
    assert done.returncode == 0, f"porfiry {' '.join(args)}: {done.stderr}"
    return done.stdout


# Once past its threshold a listener takes this long per call, as a slow
# app would, so the pull is still running when the test pauses the node.
SLOW_LISTENER_SECS = 0.02


class Progress(porfiry.ModelPullListener):
    """Hears a pull; sets `past` once `threshold` bytes are here, and is
    slow from then on."""

    def __init__(self, threshold=None, on_held=None):
        self.seen = []
        self.held = []
        self.threshold = threshold
        self.past = threading.Event()
        self.when_held = on_held

    def on_progress(self, received, total):
        self.seen.append((received, total))
        if self.threshold is not None and received >= self.threshold:
            self.past.set()
            time.sleep(SLOW_LISTENER_SECS)

    def on_held(self, reason):
        self.held.append(reason)
        if self.when_held:
            self.when_held()


@pytest.fixture
def home(tmp_path):
    """A home server process sharing `smol` (and `other`); yields
    (data_dir, peer_id, address, the model file)."""
    data = tmp_path / "home"
    cli(data, "init")
    peer = json.loads(cli(data, "status", "--json"))["peer_id"]
    model = gguf(tmp_path / "smol.gguf", 7)
    cli(data, "llm", "add", "smol", "--file", str(model))
    cli(data, "llm", "add", "other", "--file", str(gguf(tmp_path / "other.gguf", 11)))
    address = f"/ip4/127.0.0.1/tcp/{free_port()}"
    process = subprocess.Popen(
        [PORFIRY, "--data-dir", str(data), "run", "--listen", address, "--no-api", "--share-models"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout.readline().startswith("peer id:")
    yield data, peer, address, model
    process.terminate()
    process.wait(timeout=WAIT_SECS)


def phone_of(make_node, home):
    data, peer, address, _ = home
    phone = make_node("phone")
    heard = Notes()
    phone.set_listener(heard)
    cli(data, "friends", "add", phone.peer_id())
    run(phone.add_friend(peer, [address], "home"))
    heard.wait_link(connected=True)
    return phone, heard


def test_a_model_from_home_refused_then_cut_resumed_and_registered(make_node, home, tmp_path):
    data, peer, _, model = home
    phone, heard = phone_of(make_node, home)
    models = tmp_path / "phone" / "models"

    with pytest.raises(porfiry.PorfiryError.NotFound, match="does not share its models with you"):
        run(phone.pull_model("smol", "home", Progress()))
    assert not models.exists() or list(models.iterdir()) == []

    cli(data, "friends", "models", phone.peer_id(), "on")
    size = model.stat().st_size
    # Cut a third of the way in: the app goes to the background.
    cut = Progress(threshold=size // 3)
    outcome = {}

    def pull():
        try:
            outcome["pulled"] = run(phone.pull_model("smol", "home", cut))
        except porfiry.PorfiryError as e:
            outcome["error"] = e

    puller = threading.Thread(target=pull)
    puller.start()
    assert cut.past.wait(WAIT_SECS)
    phone.pause()
    puller.join(WAIT_SECS)
    assert "error" in outcome, outcome
    parts = list(models.glob("*.part"))
    assert len(parts) == 1
    held = parts[0].stat().st_size
    assert size // 3 <= held < size

    phone.resume()
    heard.wait_link(connected=True)
    resumed = Progress()
    pulled = run(phone.pull_model("smol", "home", resumed))
    assert pulled.resumed_from == held
    assert resumed.seen[0] == (held, size) and resumed.seen[-1] == (size, size)
    assert pulled.bytes == size and pulled.main and pulled.not_registered is None
    assert open(pulled.path, "rb").read() == model.read_bytes()
    assert list(models.glob("*.part")) == []


def test_a_corrupted_byte_is_refused_and_a_metered_phone_waits(make_node, home, tmp_path):
    data, _, _, _ = home
    phone, heard = phone_of(make_node, home)
    cli(data, "friends", "models", phone.peer_id(), "on")
    models = tmp_path / "phone" / "models"

    # Metered: the pull waits, writing nothing, until the app says Wi-Fi.
    phone.set_conditions(True, True, 100, True)

    def on_wifi():
        assert not models.exists() or list(models.iterdir()) == []
        threading.Timer(0.2, lambda: phone.set_conditions(True, True, 100, False)).start()

    waited = Progress(on_held=on_wifi)
    pulled = run(phone.pull_model("smol", "home", waited))
    assert waited.held == ["metered"]
    assert pulled.resumed_from == 0

    # A partial file with one byte flipped: every byte comes, the hash
    # differs, and nothing is kept.
    cut = Progress(threshold=1 << 20)
    outcome = {}
    puller = threading.Thread(
        target=lambda: outcome.update(r=_try(lambda: run(phone.pull_model("other", "home", cut))))
    )
    puller.start()
    assert cut.past.wait(WAIT_SECS)
    phone.pause()
    puller.join(WAIT_SECS)
    (part,) = models.glob("other.gguf.*.part")
    held = bytearray(part.read_bytes())
    held[100] ^= 1
    part.write_bytes(bytes(held))
    phone.resume()
    heard.wait_link(connected=True)
    with pytest.raises(porfiry.PorfiryError.Internal, match="SHA-256"):
        run(phone.pull_model("other", "home", Progress()))
    assert not (models / "other.gguf").exists()
    assert list(models.glob("*.part")) == []


def _try(f):
    try:
        return f()
    except porfiry.PorfiryError as e:
        return e
