"""Fixtures of the binding tests: nodes started through the generated
module (shut down after each test), listeners that hand what they hear to
the test thread, and a scripted OpenAI-compatible model server."""

import http.server
import json
import queue
import socket
import threading
import time

import pytest

import porfiry_ffi as porfiry

# How long a test waits for something the mesh does on loopback (a link, a
# note crossing); far above what it takes (well under a second) so a slow
# CI machine does not fail, and reached only when the behaviour is broken.
WAIT_SECS = 30


def settings(data_dir, profile, listen=(), model=None, language="en"):
    return porfiry.NodeSettings(
        data_dir=str(data_dir),
        profile=profile,
        listen=list(listen),
        model=model,
        language=language,
    )


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def make_node(tmp_path):
    """make_node(name, server=False, model=None, **settings) -> a started PorfiryNode.
    A server listens on a loopback port of its own, the same one again
    after a pause (as a home server's port stays put)."""
    started = []

    def make(name, server=False, model=None, **extra):
        chosen = settings(
            tmp_path / name,
            porfiry.NodeProfile.SERVER if server else porfiry.NodeProfile.PHONE,
            [f"/ip4/127.0.0.1/tcp/{free_port()}"] if server else [],
            model,
        )
        for key, value in extra.items():
            setattr(chosen, key, value)
        node = porfiry.PorfiryNode.start(chosen)
        started.append(node)
        return node

    yield make
    for node in started:
        node.shutdown()


class Notes(porfiry.NodeListener):
    """A NodeListener that queues what it hears (called on a node thread)."""

    def __init__(self):
        self.notes = queue.Queue()
        self.links = queue.Queue()
        self.ticks = queue.Queue()

    def on_note(self, note):
        self.notes.put(note)

    def on_link(self, link):
        self.links.put(link)

    def on_tick(self, tick):
        self.ticks.put(tick)

    def wait_tick(self, secs=WAIT_SECS):
        return wait_for(self.ticks, lambda t: True, "tick", secs)

    def wait_note(self, text, secs=WAIT_SECS):
        return wait_for(self.notes, lambda n: n.text == text, f"note {text!r}", secs)

    def wait_link(self, connected, secs=WAIT_SECS):
        return wait_for(
            self.links, lambda l: l.connected == connected, f"link connected={connected}", secs
        )


def wait_for(heard, wanted, what, secs):
    """The first item of queue `heard` that is `wanted`, within `secs`."""
    deadline = time.monotonic() + secs
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {what} in {secs} s")
        try:
            item = heard.get(timeout=left)
        except queue.Empty:
            continue
        if wanted(item):
            return item


class Turn(porfiry.ChatListener):
    """A ChatListener that records one turn."""

    def __init__(self):
        self.texts = []
        self.events = []
        self.answer = None
        self.error = None
        self.ended = threading.Event()

    def on_text(self, text):
        self.texts.append(text)

    def on_tool_event(self, event_json):
        self.events.append(json.loads(event_json))

    def on_done(self, answer):
        self.answer = answer
        self.ended.set()

    def on_error(self, error):
        self.error = error
        self.ended.set()


class ScriptedModel:
    """An OpenAI-compatible server on loopback whose answers are scripted:
    `answer(chunks)` streams those chunks and ends (a plain request gets
    them joined, as one JSON answer); `hold()` streams a
    first chunk then keeps the stream open, one chunk every 50 ms, until
    the client closes the connection, which sets `closed`."""

    def __init__(self):
        self.script = queue.Queue()
        self.requests = []
        self.started = threading.Event()
        self.closed = threading.Event()
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    # No embeddings here: the node does without them.
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                model.requests.append(body)
                try:
                    step = model.script.get_nowait()
                except queue.Empty:
                    step = ("answer", ["(the script has no more answers)"])
                if not body.get("stream"):
                    # A plain request (the cognitive core's) gets one JSON answer.
                    answer = json.dumps({
                        "choices": [{
                            "index": 0,
                            "message": {"role": "assistant", "content": "".join(step[1])},
                            "finish_reason": "stop",
                        }]
                    }).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                kind, chunks = step
                try:
                    for chunk in chunks:
                        self.event({"choices": [{"index": 0, "delta": {"content": chunk}}]})
                    model.started.set()
                    if kind == "hold":
                        deadline = time.monotonic() + 60
                        while time.monotonic() < deadline:
                            time.sleep(0.05)
                            self.event({"choices": [{"index": 0, "delta": {"content": "."}}]})
                        return
                    self.event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    model.closed.set()
                self.close_connection = True

            def event(self, data):
                self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
                self.wfile.flush()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, chunks):
        self.script.put(("answer", chunks))

    def hold(self, chunks):
        self.script.put(("hold", chunks))

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted_model():
    model = ScriptedModel()
    yield model
    model.stop()
