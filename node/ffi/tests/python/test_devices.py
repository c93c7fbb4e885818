"""A person's devices through the generated module (issue 45): a home
server's device code links a phone, a diary entry another process writes
into the phone's database reaches the server's, both list each other, a
friend's invitation is refused as a device code with its reason, and an
unlink empties both lists."""

import asyncio
import json
import subprocess
import sys
import time

import pytest

import porfiry_ffi as porfiry
from conftest import WAIT_SECS

# The database file in a node's data dir (`porfiry_mesh::data_dir::DB_FILE`).
DB_FILE = "porfiry.db"

# Another process's SQL: its own sqlite3, never a second SQLite library in
# this process beside the node's (POSIX locks are per process: closing one
# library's handle would drop the other's locks on the same file).
SQL_SCRIPT = """
import json, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], timeout=30)
with conn:
    rows = conn.execute(sys.argv[2], json.loads(sys.argv[3])).fetchall()
print(json.dumps(rows))
"""


def run(coroutine):
    return asyncio.run(coroutine)


def sql(data_dir, statement, params=()):
    """Runs `statement` on the node's database file in another process;
    returns its rows."""
    done = subprocess.run(
        [sys.executable, "-c", SQL_SCRIPT, str(data_dir / DB_FILE), statement, json.dumps(params)],
        capture_output=True,
        text=True,
        timeout=WAIT_SECS,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def eventually(what, check):
    """The first truthy value of `check()` within WAIT_SECS."""
    deadline = time.monotonic() + WAIT_SECS
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"no {what} in {WAIT_SECS} s"
        time.sleep(0.05)


def wait_listening(node):
    eventually("listening address", lambda: run(node.status()).listening)


def test_linked_devices_share_the_diary_and_an_unlink_empties_the_lists(make_node, tmp_path):
    server = make_node("server", server=True)
    phone = make_node("phone")
    wait_listening(server)

    # A friend's invitation is not a device code: refused, with the reason.
    friend_code = run(server.invite("a friend", 600))
    with pytest.raises(porfiry.PorfiryError.Invitation, match="invites a friend"):
        run(phone.join_device(friend_code))
    assert run(phone.devices()) == []

    code = run(server.link_device(600))
    device = run(phone.join_device(code))
    assert device.peer_id == server.peer_id()

    [on_phone] = run(phone.devices())
    assert on_phone.peer_id == server.peer_id()
    assert on_phone.linked_since_ms == device.linked_since_ms
    [on_server] = eventually("the phone in the server's list", lambda: run(server.devices()))
    assert on_server.peer_id == phone.peer_id()
    assert on_server.linked_since_ms == device.linked_since_ms

    # A memory row written straight into the phone's file, as another
    # process would, reaches the server's file.
    now = int(time.time())
    sql(
        tmp_path / "phone",
        "INSERT INTO diary_entries (text, created, updated) VALUES (?, ?, ?)",
        ["went to the sea", now, now],
    )
    eventually(
        "the phone's diary entry on the server",
        lambda: ["went to the sea"] in sql(tmp_path / "server", "SELECT text FROM diary_entries"),
    )
    # Once the two have met, each says when it last saw the other.
    eventually(
        "the server's last sync with the phone",
        lambda: run(server.devices())[0].last_sync_ms is not None,
    )

    run(phone.unlink_device(server.peer_id()))
    assert run(phone.devices()) == []
    eventually("the unlink on the server", lambda: run(server.devices()) == [])
    with pytest.raises(porfiry.PorfiryError.NotFound, match="not a device"):
        run(phone.unlink_device(server.peer_id()))
