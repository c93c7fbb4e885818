"""What a phone app does with the bindings, done from Python through the
generated module: start nodes, make friends by invitation, hear notes
arrive, chat with a streamed and a cancelled answer, pause with no thread
awake, resume and sync within a deadline, keep conversations across a pause
and a restart, and get typed errors."""

import asyncio
import json
import os
import time

import pytest

import porfiry_ffi as porfiry
from conftest import WAIT_SECS, Notes, Turn, settings

# The quiet window of the paused-node test: what the issue asks (30 s).
PAUSED_WINDOW_SECS = 30


def run(coroutine):
    return asyncio.run(coroutine)


def friends_by_invitation(make_node):
    """A home server and a phone that joined it by invitation, linked."""
    server = make_node("server", server=True)
    phone = make_node("phone")
    heard = Notes()
    phone.set_listener(heard)
    server_heard = Notes()
    server.set_listener(server_heard)
    code = run(server.invite("phone", 600))
    friend = run(phone.join(code, "home"))
    assert friend.peer_id == server.peer_id()
    assert friend.name == "home"
    link = heard.wait_link(connected=True)
    assert link.peer_id == server.peer_id()
    # The server met the phone as a guest on the connection it joined over;
    # that connection is the new friend's link at once, not after a redial.
    link = server_heard.wait_link(connected=True)
    assert link.peer_id == phone.peer_id()
    return server, phone, heard, code


def other_threads():
    """{tid: (name, voluntary context switches)} of every thread but the main one."""
    threads = {}
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == os.getpid():
            continue
        try:
            with open(f"/proc/self/task/{tid}/status") as f:
                fields = dict(line.split(":\t", 1) for line in f if ":\t" in line)
        except FileNotFoundError:
            continue  # it ended while we looked
        threads[int(tid)] = (
            fields["Name"].strip(),
            int(fields["voluntary_ctxt_switches"]),
        )
    return threads


def test_a_bad_setting_is_a_config_error_and_creates_nothing(tmp_path):
    where = tmp_path / "never"
    with pytest.raises(porfiry.PorfiryError.Config, match="phone never listens"):
        porfiry.PorfiryNode.start(
            settings(where, porfiry.NodeProfile.PHONE, ["/ip4/127.0.0.1/tcp/0"])
        )
    with pytest.raises(porfiry.PorfiryError.Config, match="language"):
        porfiry.PorfiryNode.start(settings(where, porfiry.NodeProfile.PHONE, language="xx"))
    with pytest.raises(porfiry.PorfiryError.Config, match="missing.gguf"):
        porfiry.PorfiryNode.start(
            settings(
                where,
                porfiry.NodeProfile.PHONE,
                model=porfiry.ModelSource.FILE(path=str(tmp_path / "missing.gguf")),
            )
        )
    assert not where.exists()


def test_invite_join_then_a_note_arrives_through_the_listener(make_node):
    server, phone, heard, code = friends_by_invitation(make_node)
    assert [f.peer_id for f in run(server.friends())] == [phone.peer_id()]
    posted = run(server.post_note("dinner at seven", "friends"))
    assert posted.audience == "friends"
    note = heard.wait_note("dinner at seven")
    assert note.author == server.peer_id()
    assert [n.text for n in run(phone.notes("friends", None))] == ["dinner at seven"]
    # A code is used once: presenting it again is refused, with a reason;
    # what is not a code at all is bad input.
    with pytest.raises(porfiry.PorfiryError.Invitation):
        run(make_node("stranger").join(code, None))
    with pytest.raises(porfiry.PorfiryError.BadInput, match="code"):
        run(phone.join("not a code", None))


def test_a_club_note_reaches_a_member_and_a_member_can_leave(make_node):
    server, phone, heard, _ = friends_by_invitation(make_node)
    club = run(server.create_club("family"))
    assert club == f"family@{server.peer_id()}"
    [listed] = run(server.clubs())
    assert (listed.club, listed.role, listed.members) == (club, "founder", 1)
    with pytest.raises(porfiry.PorfiryError.NotFound, match="no club"):
        run(server.add_to_club("chess", "phone", False))
    with pytest.raises(porfiry.PorfiryError.NotFound):
        run(server.add_to_club("family", "nobody-by-that-name", False))
    # The server calls the phone "phone" (the invitation's name).
    run(server.add_to_club("family", "phone", False))
    assert run(server.clubs())[0].members == 2
    run(server.post_note("club supper at eight", f"club:{club}"))
    note = heard.wait_note("club supper at eight")
    assert note.audience == f"club:{club}"
    deadline = time.monotonic() + WAIT_SECS
    while [(c.club, c.role) for c in run(phone.clubs())] != [(club, "member")]:
        assert time.monotonic() < deadline, run(phone.clubs())
        time.sleep(0.05)
    run(phone.leave_club("family"))
    assert [(c.club, c.role) for c in run(phone.clubs())] == [(club, "outside")]
    deadline = time.monotonic() + WAIT_SECS
    while run(server.clubs())[0].members != 1:
        assert time.monotonic() < deadline, "the server never heard the phone leave"
        time.sleep(0.05)


def test_a_streamed_chat_answer_then_a_cancelled_one(make_node, scripted_model):
    phone = make_node(
        "phone", model=porfiry.ModelSource.URL(url=scripted_model.url, model="scripted")
    )
    scripted_model.answer(["Hello", " from", " the scripted model."])
    turn = Turn()
    handle = phone.chat("kitchen", "say hello", turn)
    assert turn.ended.wait(WAIT_SECS), "the turn never ended"
    assert turn.error is None, turn.error
    assert turn.answer.text == "Hello from the scripted model."
    assert "".join(turn.texts) == "Hello from the scripted model."
    assert handle.is_finished()
    assert scripted_model.requests[0]["stream"] is True
    assert scripted_model.requests[0]["messages"][-1]["content"] == "say hello"

    scripted_model.started.clear()
    scripted_model.hold(["Let me think"])
    cancelled = Turn()
    handle = phone.chat("kitchen", "and now a long one", cancelled)
    assert scripted_model.started.wait(WAIT_SECS), "the second request never came"
    assert not handle.is_finished()
    handle.cancel()
    assert scripted_model.closed.wait(WAIT_SECS), "the server never saw the stream close"
    assert handle.is_finished()
    assert cancelled.answer is None and cancelled.error is None
    # The session kept the first exchange: the held request carried it.
    history = [m["content"] for m in scripted_model.requests[1]["messages"]]
    assert "say hello" in history and "and now a long one" in history


def test_chat_without_a_model_is_a_model_error(make_node):
    phone = make_node("phone")
    with pytest.raises(porfiry.PorfiryError.Model, match="no model"):
        phone.chat("s", "hi", Turn())


def test_paused_nothing_wakes_and_resume_catches_up(make_node):
    server, phone, heard, _ = friends_by_invitation(make_node)
    phone.pause()
    assert run(phone.status()).state == "paused"
    with pytest.raises(porfiry.PorfiryError.NotRunning):
        run(phone.notes(None, None))
    server_heard = Notes()
    server.set_listener(server_heard)
    server.pause()  # so that only the paused phone's threads could wake
    time.sleep(2)  # the runtimes' threads end just after pause returns
    before = other_threads()
    time.sleep(PAUSED_WINDOW_SECS)
    after = other_threads()
    woke = {
        tid: (name, count - before.get(tid, (name, 0))[1])
        for tid, (name, count) in after.items()
        if count != before.get(tid, (name, 0))[1]
    }
    print(f"paused {PAUSED_WINDOW_SECS} s: threads before {before}, after {after}")
    assert woke == {}, f"threads woke while paused: {woke}"

    server.resume()
    run(server.post_note("while you slept", "friends"))
    phone.resume()
    heard.wait_note("while you slept")


def test_sync_now_fetches_within_its_deadline(make_node):
    server, phone, heard, _ = friends_by_invitation(make_node)
    phone.pause()
    for i in range(3):
        run(server.post_note(f"news {i}", "friends"))
    report = run(phone.sync_now(20_000))
    print(f"sync_now on loopback: {report}")
    assert report.notes_received >= 3
    assert report.friends_caught_up == 1
    assert not report.deadline_reached
    assert report.elapsed_ms < 20_000
    assert run(phone.status()).state == "paused"
    phone.resume()
    texts = [n.text for n in run(phone.notes("friends", None))]
    assert texts == ["news 0", "news 1", "news 2"]

    # Its friend gone, a sync ends at its deadline and says so.
    server.shutdown()
    phone.pause()
    began = time.monotonic()
    report = run(phone.sync_now(1_500))
    assert report.deadline_reached
    assert report.friends_caught_up == 0
    assert time.monotonic() - began < 10


def test_nodes_share_a_process_and_a_data_dir_starts_again(make_node, tmp_path):
    first = make_node("one")
    second = make_node("two")
    assert first.peer_id() != second.peer_id()
    with pytest.raises(porfiry.PorfiryError.Start):
        porfiry.PorfiryNode.start(settings(tmp_path / "one", porfiry.NodeProfile.PHONE))
    run(first.post_note("kept", "private"))
    first.shutdown()
    with pytest.raises(porfiry.PorfiryError.NotRunning):
        first.resume()
    again = make_node("one")
    assert again.peer_id() == first.peer_id()
    assert [n.text for n in run(again.notes("own", None))] == ["kept"]


def test_a_conversation_survives_pause_and_a_restart_and_can_be_forgotten(make_node, scripted_model):
    model = porfiry.ModelSource.URL(url=scripted_model.url, model="scripted")
    phone = make_node("phone", model=model)

    def say(session, text):
        turn = Turn()
        phone.chat(session, text, turn)
        assert turn.ended.wait(WAIT_SECS), "the turn never ended"
        assert turn.error is None, turn.error
        return turn.answer.text

    scripted_model.answer(["TOOL_CALL: get_current_time"])
    scripted_model.answer(["It is noon."])
    assert say("kitchen", "what time is it?") == "It is noon."
    phone.pause()
    phone.resume()
    scripted_model.answer(["You asked the time."])
    assert say("kitchen", "what did I ask?") == "You asked the time."
    sent = [m["content"] for m in scripted_model.requests[-1]["messages"]]
    assert "what time is it?" in sent and "It is noon." in sent, sent
    assert any(t.startswith("TOOL_RESULT get_current_time") for t in sent), sent

    # The app is killed: a new node on the same data dir has it all.
    phone.shutdown()
    phone = make_node("phone", model=model)
    scripted_model.answer(["Still here."])
    assert say("kitchen", "are you there?") == "Still here."
    sent = [m["content"] for m in scripted_model.requests[-1]["messages"]]
    assert "what did I ask?" in sent, sent
    history = run(phone.chat_history("kitchen", None))
    kinds = [e.kind for e in history]
    assert kinds == [
        "user", "tool_call", "tool_result", "assistant",
        "user", "assistant", "user", "assistant",
    ], kinds
    assert history[0].text == "what time is it?"
    assert [e.text for e in run(phone.chat_history("kitchen", 2))] == ["are you there?", "Still here."]

    scripted_model.answer(["Hi."])
    assert say("hall", "hello") == "Hi."
    sessions = run(phone.chat_sessions())
    assert [(s.session, s.messages) for s in sessions] == [("hall", 2), ("kitchen", 8)]
    assert run(phone.forget_session("kitchen")) == 8
    assert run(phone.chat_history("kitchen", None)) == []
    assert [s.session for s in run(phone.chat_sessions())] == ["hall"]
    scripted_model.answer(["Nice to meet you."])
    assert say("kitchen", "who are you?") == "Nice to meet you."
    sent = [m["content"] for m in scripted_model.requests[-1]["messages"]]
    assert "what time is it?" not in sent, "a forgotten conversation stays forgotten"


def test_tool_events_come_in_order_and_in_the_answer_and_constrained_is_a_setting(
    make_node, scripted_model, tmp_path
):
    phone = make_node(
        "phone", model=porfiry.ModelSource.URL(url=scripted_model.url, model="scripted")
    )
    scripted_model.answer(["TOOL_CALL: show_text|Dinner at 7"])
    scripted_model.answer(["TOOL_CALL: show_text|Bring bread"])
    scripted_model.answer(["Shown."])
    turn = Turn()
    phone.chat("s", "remind me", turn)
    assert turn.ended.wait(WAIT_SECS) and turn.error is None, turn.error
    shown = [{"kind": "show_text", "text": "Dinner at 7"}, {"kind": "show_text", "text": "Bring bread"}]
    assert turn.events == shown
    assert [json.loads(e) for e in turn.answer.events] == shown
    # auto: a server is not sent the reply grammar.
    assert "grammar" not in scripted_model.requests[-1]
    # The node's chat sets, as the API and the terminal have them; no media
    # set on a phone unless the app asks for one.
    system = scripted_model.requests[-1]["messages"][0]["content"]
    for chat_set in ["diary", "goals", "messages", "notes", "tasks"]:
        assert f"\n{chat_set} — " in system, system
    assert "media" not in system, system

    on = settings(
        tmp_path / "strict",
        porfiry.NodeProfile.PHONE,
        model=porfiry.ModelSource.URL(url=scripted_model.url, model="scripted"),
    )
    on.constrained = "on"
    on.toolset_idle_secs = 60
    on.media_catalog = "sample"
    strict = porfiry.PorfiryNode.start(on)
    try:
        scripted_model.answer(["Hello."])
        turn = Turn()
        strict.chat("s", "hi", turn)
        assert turn.ended.wait(WAIT_SECS) and turn.error is None, turn.error
        assert "grammar" in scripted_model.requests[-1], "on: the server is sent the grammar"
        system = scripted_model.requests[-1]["messages"][0]["content"]
        assert "media" in system, system
    finally:
        strict.shutdown()
    on.constrained = "sometimes"
    with pytest.raises(porfiry.PorfiryError.Config, match="constrained"):
        porfiry.PorfiryNode.start(on)


class Lamp(porfiry.ToolsetHandler):
    """The app's own tool: records its calls; "off" fails."""

    def __init__(self):
        self.calls = []

    def call(self, tool, args):
        self.calls.append((tool, args))
        if args[0] == "off":
            raise porfiry.ToolError.Failed("the lamp is unplugged")
        return "the lamp is on"


def lamp_spec():
    return porfiry.ToolsetSpec(
        name="lamp",
        summary="the room's lamp",
        tools=[
            porfiry.ToolSpec(
                name="lamp_set",
                description="turn the lamp on or off",
                args=[
                    porfiry.ArgSpec(
                        name="state",
                        kind=porfiry.ArgKind.CHOICE(values=["on", "off"]),
                        required=True,
                    )
                ],
            )
        ],
    )


def test_an_apps_own_toolset_is_enabled_checked_and_called(make_node, scripted_model):
    phone = make_node(
        "phone", model=porfiry.ModelSource.URL(url=scripted_model.url, model="scripted")
    )
    lamp = Lamp()
    phone.register_toolset(lamp_spec(), lamp)
    with pytest.raises(porfiry.PorfiryError.BadInput, match="already"):
        phone.register_toolset(lamp_spec(), lamp)

    def say(text):
        turn = Turn()
        phone.chat("s", text, turn)
        assert turn.ended.wait(WAIT_SECS) and turn.error is None, turn.error
        return turn.answer

    # An acting tool of an inactive set: the set is enabled, the call waits
    # for the model to make it again; a bad argument never reaches the app.
    scripted_model.answer(["TOOL_CALL: lamp_set|on"])
    scripted_model.answer(["TOOL_CALL: lamp_set|purple"])
    scripted_model.answer(["TOOL_CALL: lamp_set|on"])
    scripted_model.answer(["TOOL_CALL: lamp_set|off"])
    scripted_model.answer(["Done."])
    answer = say("light please")
    assert answer.text == "Done."
    assert lamp.calls == [("lamp_set", ["on"]), ("lamp_set", ["off"])], lamp.calls
    sent = [m["content"] for m in scripted_model.requests[-1]["messages"]]
    results = [t for t in sent if t.startswith("TOOL_RESULT lamp_set")]
    assert len(results) == 4, sent
    assert "NOT executed" in results[0], results[0]
    assert "invalid" in results[1] and "on/off" in results[1], results[1]
    assert results[2].endswith("the lamp is on"), results[2]
    assert "the lamp is unplugged" in results[3], results[3]
    system = scripted_model.requests[0]["messages"][0]["content"]
    assert "lamp — the room's lamp" in system or "lamp: the room's lamp" in system, system

    # It stays across pause and resume.
    phone.pause()
    phone.resume()
    scripted_model.answer(["TOOL_CALL: lamp_set|on"])
    scripted_model.answer(["TOOL_CALL: lamp_set|on"])
    scripted_model.answer(["On again."])
    assert say("again").text == "On again."
    assert lamp.calls[-1] == ("lamp_set", ["on"])


def test_the_phone_thinks_only_when_its_conditions_and_budget_allow(make_node, scripted_model):
    phone = make_node(
        "phone",
        model=porfiry.ModelSource.URL(url=scripted_model.url, model="scripted"),
        think_ticks_per_hour=1,
    )
    heard = Notes()
    phone.set_listener(heard)
    status = phone.thinking_status()
    assert (status.running, status.held_by, status.ticks_per_hour) == (True, "no conditions", 1)
    assert scripted_model.requests == [], "no tick before the app says the conditions"

    phone.set_conditions(False, False, 80, False)
    assert phone.thinking_status().held_by == "background"
    phone.set_conditions(True, False, 10, False)
    assert phone.thinking_status().held_by == "battery"
    with pytest.raises(porfiry.PorfiryError.BadInput, match="battery"):
        phone.set_conditions(True, False, 101, False)

    scripted_model.answer(["I will plan the week.\nTOOL_CALL: goals_add|plan the week"])
    phone.set_conditions(True, False, 80, False)
    tick = heard.wait_tick()
    assert tick.tick == 1
    assert tick.error is None, tick.error
    assert (tick.commands_found, tick.commands_run) == (1, 1)
    system = scripted_model.requests[0]["messages"][0]["content"]
    assert "TOOL_CALL" in system or "goals" in system, "the core's own prompt"
    status = phone.thinking_status()
    assert (status.held_by, status.ticks_last_hour) == ("budget", 1)
    assert status.next_tick_ms > time.time() * 1000

    # The budget holds across pause and resume, and a metered link stops a
    # model that is across the network.
    phone.pause()
    phone.resume()
    assert phone.thinking_status().held_by == "budget"
    phone.set_conditions(True, True, 80, True)
    assert phone.thinking_status().held_by == "metered"


def test_a_sync_wake_runs_one_due_tick_in_the_background(make_node, scripted_model):
    phone = make_node(
        "phone",
        model=porfiry.ModelSource.URL(url=scripted_model.url, model="scripted"),
        think_ticks_per_hour=60,
    )
    phone.set_conditions(False, False, 80, False)
    assert phone.thinking_status().held_by == "background"
    phone.pause()
    scripted_model.answer(["A thought while the phone slept."])
    report = run(phone.sync_now(8_000))
    print(f"sync_now with a due tick: {report}")
    assert report.thought, report
    assert run(phone.status()).state == "paused"
    status = phone.thinking_status()
    assert (status.held_by, status.ticks_last_hour) == ("background", 1), status
    # On a low battery the wake thinks nothing.
    phone.set_conditions(False, False, 10, False)
    report = run(phone.sync_now(3_000))
    assert not report.thought, report
    assert phone.thinking_status().ticks_last_hour == 1
