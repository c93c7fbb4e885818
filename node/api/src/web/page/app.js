// The family page: feed, chat with the node's agent, friends and
// invitations, the node's facts and its backup. Plain JavaScript, no build
// step; every request goes to this node's own API with the session cookie. Texts come
// from the JSON the server writes into the page (English or Russian).
"use strict";

const T = JSON.parse(document.getElementById("texts").textContent);
const $ = (id) => document.getElementById(id);
const TABS = ["feed", "chat", "friends", "mind", "node"];
const CHAT_KEY = "porfiry.chat";
// Links (direct, relayed, not connected) live in a file the mesh rewrites,
// not in the database whose changes the event stream reports: the open
// Friends tab looks again this often.
const FRIENDS_REFRESH_MS = 3000;
// Notes the feed shows: the newest 200 (the API's cap is 500) are a long
// scroll on a phone and one bounded request.
const FEED_LIMIT = 200;
let friends = [];
let clubs = [];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

async function api(path, options) {
  const init = Object.assign({ headers: {} }, options || {});
  if (init.body && typeof init.body !== "string") {
    init.body = JSON.stringify(init.body);
    init.headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

// A refused request's error: the API's message, else its status.
async function failure(response) {
  let message = response.status + " " + response.statusText;
  try { message = (await response.json()).error.message; } catch (_) { /* not JSON */ }
  return new Error(message);
}

function showError(id, error) {
  const p = $(id);
  p.hidden = !error;
  p.textContent = error ? T.failed + " " + error.message : "";
}

function when(ms) {
  return ms ? new Date(ms).toLocaleString() : "";
}

// The model and where it runs: "SmolLM2 (on this device, smollm2.gguf)".
function modelText(s) {
  if (!s.model) return "—";
  const src = s.model_source;
  const how = src && T["source_" + src.kind];
  if (!how) return s.model;
  const detail = src.kind === "friend" ? friendName(src.detail) : src.detail;
  return s.model + " (" + how.replace("{detail}", detail) + ")";
}

// Bytes as people read them: "20.3 MB", "512 KB".
function megabytes(bytes) {
  if (typeof bytes !== "number") return "—";
  return bytes >= 1e6 ? (bytes / 1e6).toFixed(1) + " MB" : Math.round(bytes / 1e3) + " KB";
}

function friendName(peer) {
  const f = friends.find((x) => x.peer_id === peer);
  return (f && f.name) || peer.slice(0, 12) + "…";
}

// ---- tabs ----
function showTab(name) {
  for (const t of TABS) {
    $(t).hidden = t !== name;
    $("tab-" + t).setAttribute("aria-selected", String(t === name));
  }
  location.hash = name;
  if (name === "node") loadNode();
  if (name === "mind") loadMind();
}

// ---- feed ----
function audienceOptions() {
  const select = $("note-audience");
  const keep = select.value;
  select.replaceChildren(
    el("option", { value: "friends" }, T.all_friends),
    el("option", { value: "private" }, T.private),
    el("option", { value: "public" }, T.public));
  const groups = [...new Set(friends.flatMap((f) => f.groups || []))].sort();
  for (const g of groups) select.append(el("option", { value: "group:" + g }, T.group + ": " + g));
  for (const c of clubs.filter((c) => c.role !== "outside")) {
    select.append(el("option", { value: "club:" + c.club }, T.club + ": " + c.name));
  }
  for (const f of friends) {
    select.append(el("option", { value: "peer:" + f.peer_id }, T.only + ": " + friendName(f.peer_id)));
  }
  // A reply's audience stays pickable while the page refreshes.
  if (replyTo && ![...select.options].some((o) => o.value === replyTo.audience)) {
    select.append(el("option", { value: replyTo.audience }, replyTo.audience));
  }
  if ([...select.options].some((o) => o.value === keep)) select.value = keep;
}

function filterOptions() {
  const select = $("feed-filter");
  const keep = select.value || "all";
  select.replaceChildren(
    el("option", { value: "all" }, T.everything),
    el("option", { value: "own" }, T.mine),
    el("option", { value: "friends" }, T.from_friends));
  // By audience: what a note was for (the API filters: audience=…).
  const byAudience = el("optgroup", { label: T.by_audience },
    el("option", { value: "audience:friends" }, T.all_friends),
    el("option", { value: "audience:public" }, T.public));
  const groups = [...new Set(friends.flatMap((f) => f.groups || []))].sort();
  for (const g of groups) byAudience.append(el("option", { value: "audience:group:" + g }, T.group + ": " + g));
  for (const c of clubs.filter((c) => c.role !== "outside")) {
    byAudience.append(el("option", { value: "audience:club:" + c.club }, T.club + ": " + c.name));
  }
  select.append(byAudience);
  // By friend: whose note it is (filtered here, from friends' notes).
  if (friends.length > 0) {
    const byFriend = el("optgroup", { label: T.by_friend });
    for (const f of friends) byFriend.append(el("option", { value: "peer:" + f.peer_id }, friendName(f.peer_id)));
    select.append(byFriend);
  }
  select.value = [...select.options].some((o) => o.value === keep) ? keep : "all";
}

// The note the New note box answers, while "Reply" is on: {item, audience, line}.
let replyTo = null;

function authorOf(n) {
  return n.author ? (n.author_name || friendName(n.author)) : T.me;
}

// Who a reply goes to: the answered note's audience, except a direct
// message, whose answer goes back to its author.
function replyAudience(n) {
  if (n.audience.startsWith("peer:") && n.author) return "peer:" + n.author;
  return n.audience;
}

function replyLine(who, what) {
  // Functions, not strings: a note's "$&" is text, not a pattern.
  return T.reply_to.replace("{who}", () => who).replace("{what}", () => what);
}

function startReply(n) {
  replyTo = { item: n.item_id, audience: replyAudience(n), line: replyLine(authorOf(n), n.text) };
  const select = $("note-audience");
  if (![...select.options].some((o) => o.value === replyTo.audience)) {
    select.append(el("option", { value: replyTo.audience }, replyTo.audience));
  }
  select.value = replyTo.audience;
  showReply();
  $("note-text").focus();
}

function showReply() {
  $("replying").hidden = !replyTo;
  $("replying-to").textContent = replyTo ? replyTo.line : "";
}

function noteItem(n) {
  const item = el("li", { "data-note": n.id, class: n.reply_to ? "reply" : "" },
    el("div", { class: "meta" }, authorOf(n) + " · " + when(n.created_ms) + " · " + n.audience));
  if (n.reply_to) {
    const p = n.reply_to_note;
    const line = p ? replyLine(p.author ? (p.author_name || friendName(p.author)) : T.me, p.excerpt)
      : T.reply_to_unknown;
    item.append(el("div", { class: "meta in-reply" }, "↪ " + line));
  }
  item.append(el("div", { class: "text" }, n.text));
  // Only a published note (one with an item id) can be answered.
  if (n.item_id) {
    const reply = el("button", { type: "button", class: "small", "aria-label": T.reply + " (" + authorOf(n) + ")" }, T.reply);
    reply.addEventListener("click", () => startReply(n));
    item.append(reply);
  }
  return item;
}

async function loadFeed() {
  try {
    const show = $("feed-filter").value || "all";
    const author = show.startsWith("peer:") ? show.slice(5) : null;
    let path = "/api/notes?newest=true&limit=" + FEED_LIMIT;
    if (show.startsWith("audience:")) path += "&audience=" + encodeURIComponent(show.slice(9));
    else path += "&origin=" + (author ? "friends" : show);
    let notes = await api(path);
    if (author) notes = notes.filter((n) => n.author === author);
    const list = $("notes");
    list.replaceChildren();
    if (notes.length === 0) list.append(el("li", { class: "meta" }, T.no_notes));
    for (const n of notes.slice().reverse()) list.append(noteItem(n));
    list.dataset.shown = show;
    showError("feed-error", null);
  } catch (e) { showError("feed-error", e); }
}

async function postNote(event) {
  event.preventDefault();
  const text = $("note-text").value.trim();
  if (!text) return;
  try {
    const body = { text, audience: $("note-audience").value };
    if (replyTo) body.reply_to = replyTo.item;
    await api("/api/notes", { method: "POST", body });
    $("note-text").value = "";
    replyTo = null;
    showReply();
    await loadFeed();
  } catch (e) { showError("feed-error", e); }
}

// ---- friends ----
function linkText(f) {
  const l = f.link || {};
  const kind = l.link === "direct" ? T.direct : l.link === "relayed" ? T.relayed : T.not_connected;
  let text = kind;
  if (l.via) text += " (" + friendName(l.via) + ")";
  if (l.why) text += " (" + l.why + ")";
  if (l.since_ms) text += ", " + T.since + " " + when(l.since_ms);
  return text;
}

async function loadFriends() {
  try {
    const [known, status, held] = await Promise.all(
      [api("/api/friends"), api("/api/status"), api("/api/clubs")]);
    clubs = held;
    const catchups = new Map((status.friends || []).map((f) => [f.peer_id, f.last_catchup_ms]));
    friends = known.map((f) => Object.assign(f, { last_catchup_ms: catchups.get(f.peer_id) }));
    filterOptions();
    audienceOptions();
    const list = $("friend-list");
    list.replaceChildren();
    if (friends.length === 0) list.append(el("li", { class: "meta" }, T.no_friends));
    for (const f of friends) list.append(friendItem(f));
    showError("friends-error", null);
  } catch (e) { showError("friends-error", e); }
}

function friendItem(f) {
  const name = friendName(f.peer_id);
  const kind = (f.link && f.link.link) || "none";
  const link = el("span", { class: "link-" + (kind === "not connected" ? "none" : kind) }, linkText(f));
  const offload = el("input", { type: "checkbox", id: "offload-" + f.peer_id });
  offload.checked = !!f.allow_offload;
  offload.addEventListener("change", () => changeFriend(f.peer_id, { allow_offload: offload.checked }));
  const models = el("input", { type: "checkbox", id: "models-" + f.peer_id });
  models.checked = !!f.allow_models;
  models.addEventListener("change", () => changeFriend(f.peer_id, { allow_models: models.checked }));
  const rename = el("button", { type: "button", "aria-label": T.rename + " " + name }, T.rename);
  rename.addEventListener("click", () => {
    const to = prompt(T.rename, f.name || "");
    if (to && to.trim()) changeFriend(f.peer_id, { name: to.trim() });
  });
  const remove = el("button", { type: "button", "aria-label": T.remove + " " + name }, T.remove);
  remove.addEventListener("click", async () => {
    if (!confirm(T.confirm_remove)) return;
    try { await api("/api/friends/" + encodeURIComponent(f.peer_id), { method: "DELETE" }); await loadFriends(); }
    catch (e) { showError("friends-error", e); }
  });
  const catchup = f.last_catchup_ms ? " · " + T.last_catchup + " " + when(f.last_catchup_ms) : "";
  return el("li", { "data-peer": f.peer_id },
    el("div", {}, el("strong", {}, name), " · ", link),
    el("div", { class: "meta" }, f.peer_id + catchup),
    el("div", { class: "row" },
      offload, el("label", { for: "offload-" + f.peer_id }, T.may_use_model),
      models, el("label", { for: "models-" + f.peer_id }, T.may_pull_models), rename, remove));
}

async function changeFriend(peer, body) {
  try { await api("/api/friends/" + encodeURIComponent(peer), { method: "PATCH", body }); await loadFriends(); }
  catch (e) { showError("friends-error", e); }
}

async function invite() {
  try {
    const made = await api("/api/invitations", { method: "POST", body: { name: $("invite-name").value.trim() } });
    $("invitation-code").value = made.code;
    $("invitation-qr").src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(made.qr_svg);
    $("invitation-qr").alt = T.invitation_code;
    $("invitation").hidden = false;
    showError("friends-error", null);
  } catch (e) { showError("friends-error", e); }
}

async function joinWith(event) {
  event.preventDefault();
  const code = $("join-code").value.trim();
  if (!code) return;
  try {
    await api("/api/join", { method: "POST", body: { code } });
    $("join-code").value = "";
    await loadFriends();
  } catch (e) { showError("friends-error", e); }
}

// ---- mind ----
function fill(id, rows, draw) {
  const list = $(id);
  list.replaceChildren();
  if (rows.length === 0) list.append(el("li", { class: "meta" }, T.nothing_yet));
  for (const r of rows) list.append(draw(r));
}

async function loadMind() {
  try {
    const m = await api("/api/mind");
    $("thinking").checked = !m.paused;
    // Where another of the person's devices wrote a row: " · written on NAME".
    const on = (kind, id) => {
      const peer = ((m.written_on || {})[kind] || {})[id];
      return peer ? " · " + T.written_on + " " + friendName(peer) : "";
    };
    fill("goals", m.goals, (g) => {
      const tasks = m.tasks.filter((t) => t.goal_id === g.id);
      return el("li", {},
        el("strong", {}, g.title), " · ", el("span", { class: "meta" }, g.status + on("goals", g.id)),
        el("ul", {}, ...tasks.map((t) => el("li", { class: "meta" }, t.title + " · " + t.status + on("tasks", t.id)))));
    });
    fill("ticks", m.ticks, (t) => el("li", {},
      el("div", { class: "meta" }, "#" + t.tick + " · " + t.mode + " · " + when(t.created_ms) + " · " +
        T.commands_run + " " + t.commands_executed + "/" + t.commands_total),
      el("div", { class: t.error ? "error" : "text" }, t.error || t.summary)));
    fill("diary", m.diary, (d) => el("li", {},
      el("div", { class: "meta" }, when(d.created_ms) + on("diary", d.id)), el("div", { class: "text" }, d.text)));
  } catch (e) { $("goals").replaceChildren(el("li", { class: "error" }, T.failed + " " + e.message)); }
}

async function switchThinking() {
  try { await api("/api/mind", { method: "POST", body: { paused: !$("thinking").checked } }); await loadMind(); }
  catch (e) { $("goals").replaceChildren(el("li", { class: "error" }, T.failed + " " + e.message)); }
}

// ---- node ----
async function loadNode() {
  try {
    const s = await api("/api/status");
    const devices = await api("/api/devices").catch(() => []);
    const facts = $("node-facts");
    facts.replaceChildren();
    for (const [k, v] of [[T.peer_id, s.peer_id], [T.model, modelText(s)],
      [T.items, String(s.items_held)], [T.database, megabytes(s.database_bytes)],
      [T.refused, refusedText(s.refused || [])],
      [T.devices, devicesText(devices)],
      [T.version, s.version || ""]]) {
      facts.append(el("dt", {}, k), el("dd", {}, v));
    }
    $("node-qr").src = "/api/peer-qr";
    $("node-qr").alt = T.peer_id + " (QR)";
  } catch (e) { $("node-facts").replaceChildren(el("p", { class: "error" }, T.failed + " " + e.message)); }
}

// ---- backup ----
// The node seals its backup with the passphrase and answers the file; the
// page keeps it as a blob (a backup is tens of MB at most) behind a download
// link, which it clicks once and leaves on the page to save it again.
let backupUrl = null;

async function downloadBackup(event) {
  event.preventDefault();
  const passphrase = $("backup-pass").value;
  if (passphrase !== $("backup-again").value) {
    showError("backup-error", new Error(T.backup_mismatch));
    return;
  }
  $("backup-button").disabled = true;
  $("backup-making").hidden = false;
  try {
    const response = await fetch("/api/backup", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ passphrase }),
    });
    if (!response.ok) throw await failure(response);
    const blob = await response.blob();
    const named = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "");
    const name = named ? named[1] : "porfiry.porfiry-backup";
    if (backupUrl) URL.revokeObjectURL(backupUrl);
    backupUrl = URL.createObjectURL(blob);
    const link = $("backup-link");
    link.href = backupUrl;
    link.download = name;
    link.textContent = T.backup_ready.replace("{name}", () => name);
    $("backup-done").hidden = false;
    $("backup-pass").value = "";
    $("backup-again").value = "";
    showError("backup-error", null);
    link.click();
  } catch (e) { showError("backup-error", e); }
  finally {
    $("backup-button").disabled = false;
    $("backup-making").hidden = true;
  }
}

// "phone (3 behind), laptop (0 behind)": this person's other devices and how
// many memory versions written here each has yet to get.
function devicesText(devices) {
  if (devices.length === 0) return T.no_devices;
  return devices.map((d) => (d.name || friendName(d.peer)) + " (" +
    T.behind.replace("{n}", String(d.behind)) + ")").join(", ");
}

// "40 items from 2 authors": what the quotas refused since the node started
// (`porfiry status` lists the authors).
function refusedText(refused) {
  const items = refused.reduce((n, r) => n + r.items, 0);
  return T.refused_count.replace("{items}", String(items)).replace("{authors}", String(refused.length));
}

// ---- chat ----
function chatState() {
  try {
    const saved = JSON.parse(localStorage.getItem(CHAT_KEY));
    if (saved && saved.session && Array.isArray(saved.messages)) return saved;
  } catch (_) { /* a fresh chat */ }
  return { session: "web-" + crypto.getRandomValues(new Uint32Array(2)).join("-"), messages: [] };
}
let chat = chatState();
let running = null;

function saveChat() { localStorage.setItem(CHAT_KEY, JSON.stringify(chat)); }

// "via anna's server" under an answer a friend's model wrote.
function viaLine(name) { return el("li", { class: "tool via" }, T.via.replace("{name}", name)); }

function drawChat() {
  const list = $("messages");
  list.replaceChildren();
  for (const m of chat.messages) {
    list.append(el("li", { class: m.role }, m.content));
    if (m.via) list.append(viaLine(m.via));
  }
}

async function send(event) {
  event.preventDefault();
  const text = $("chat-text").value.trim();
  if (!text || running) return;
  $("chat-text").value = "";
  chat.messages.push({ role: "user", content: text });
  saveChat();
  drawChat();
  const answer = el("li", { class: "assistant", "data-streaming": "true" }, "");
  $("messages").append(answer);
  running = new AbortController();
  $("stop").disabled = false;
  $("send").disabled = true;
  let shown = "";
  let via = null;
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST",
      signal: running.signal,
      headers: { "Content-Type": "application/json", "X-Porfiry-Session": chat.session },
      body: JSON.stringify({
        stream: true,
        messages: chat.messages.filter((m) => m.role !== "tool").map((m) => ({ role: m.role, content: m.content })),
      }),
    });
    if (!response.ok) {
      let message = response.status + "";
      try { message = (await response.json()).error.message; } catch (_) { /* not JSON */ }
      throw new Error(message);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (!frame.startsWith("data: ")) continue;
        const data = frame.slice(6);
        if (data === "[DONE]") continue;
        const chunk = JSON.parse(data);
        if (chunk.error) throw new Error(chunk.error.message);
        for (const c of chunk.choices || []) {
          const d = c.delta || {};
          if (d.content) { shown += d.content; answer.textContent = shown; }
          for (const e of (d.porfiry && d.porfiry.events) || []) {
            const line = e.type === "show_text" ? e.text : e.type === "action" ? e.tool + " " + e.value : JSON.stringify(e);
            answer.before(el("li", { class: "tool" }, "· " + line));
          }
          for (const t of (d.porfiry && d.porfiry.tools) || []) {
            answer.before(el("li", { class: "tool" }, "· " + t.name + (t.ok ? " ✓" : " ✗")));
          }
          if (d.porfiry && d.porfiry.via) {
            via = d.porfiry.via.name;
            answer.after(viaLine(via));
          }
        }
      }
    }
  } catch (e) {
    if (e.name !== "AbortError") answer.after(el("li", { class: "tool error" }, T.failed + " " + e.message));
  } finally {
    answer.removeAttribute("data-streaming");
    if (shown) chat.messages.push(via ? { role: "assistant", content: shown, via } : { role: "assistant", content: shown });
    saveChat();
    running = null;
    $("stop").disabled = true;
    $("send").disabled = false;
  }
}

// ---- start ----
function start() {
  document.title = T.title;
  $("title").textContent = T.title;
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];
  for (const t of TABS) {
    const b = el("button", { type: "button", role: "tab", id: "tab-" + t, "aria-controls": t }, T[t]);
    b.addEventListener("click", () => showTab(t));
    $("tabs").append(b);
  }
  filterOptions();
  $("feed-filter").addEventListener("change", loadFeed);
  $("note-form").addEventListener("submit", postNote);
  $("cancel-reply").addEventListener("click", () => { replyTo = null; showReply(); });
  $("chat-form").addEventListener("submit", send);
  $("stop").addEventListener("click", () => running && running.abort());
  $("new-chat").addEventListener("click", () => { localStorage.removeItem(CHAT_KEY); chat = chatState(); drawChat(); });
  $("invite").addEventListener("click", invite);
  $("join-form").addEventListener("submit", joinWith);
  $("thinking").addEventListener("change", switchThinking);
  $("backup-form").addEventListener("submit", downloadBackup);
  drawChat();
  showTab(TABS.includes(location.hash.slice(1)) ? location.hash.slice(1) : "feed");
  audienceOptions();
  const refresh = async () => {
    await loadFriends();
    await loadFeed();
    if (!$("mind").hidden) await loadMind();
  };
  refresh();
  const events = new EventSource("/api/events");
  events.addEventListener("changed", refresh);
  setInterval(() => { if (!$("friends").hidden) loadFriends(); }, FRIENDS_REFRESH_MS);
}

start();
