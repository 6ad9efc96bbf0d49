/**
 * The inspector's script, served as `inspector/app.js`. Plain browser JavaScript (no
 * build step): it talks to the agent's own HTTP+JSON binding, relative to where the page
 * is mounted, with the credential typed into the page. Every value from the agent is
 * written with `textContent`, never parsed as HTML.
 */
export const INSPECTOR_SCRIPT = String.raw`"use strict";
(() => {
  const base = location.pathname.replace(/\/inspector\/?$/, "");
  const $ = (id) => document.getElementById(id);
  const TERMINAL = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"];
  // The credential and the header it goes in (from the card's security schemes): kept for
  // this tab only, sent as a header on every request, never put in a URL.
  let auth = JSON.parse(sessionStorage.getItem("edgelink-auth") || "{}");
  let contextId = null;
  let taskId = null; // set while a task waits for input
  let running = null; // the chat's task while it can be canceled
  let timelineAbort = null;
  const toolNames = new Map(); // callId -> tool name, for results that carry only the call id

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  const isTerminal = (state) => TERMINAL.includes(state);
  const stateName = (state) => String(state || "").replace("TASK_STATE_", "").replace("_", " ").toLowerCase();
  const stateBadge = (state) => el("span", { class: "state " + state }, stateName(state));
  const json = (value) => el("pre", {}, JSON.stringify(value, null, 2));
  const errorText = (text) => el("span", { class: "error" }, text);

  function headers(extra) {
    const h = { "A2A-Version": "1.0", ...extra };
    if (auth.value) h[auth.header] = auth.header === "Authorization" ? "Bearer " + auth.value : auth.value;
    return h;
  }
  function failure(response, body) {
    const message = (body.error && body.error.message) || response.status + " " + response.statusText;
    return new Error(response.status === 401 ? message + " (enter a credential at the top)" : message);
  }
  async function api(path, init) {
    const response = await fetch(base + path, {
      ...init,
      headers: headers(init && init.body ? { "Content-Type": "application/json" } : {}),
    });
    const text = await response.text();
    const body = text ? JSON.parse(text) : {};
    if (!response.ok) throw failure(response, body);
    return body;
  }
  /** Reads an SSE response (fetch, so it carries the credential header), calling onEvent with each data object. */
  async function readSse(response, onEvent) {
    if (!response.ok) throw failure(response, await response.json().catch(() => ({})));
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let data = "";
        let id = null;
        for (const line of frame.split("\n")) {
          if (line.startsWith("data:")) data += line.slice(5).trimStart();
          else if (line.startsWith("id:")) id = line.slice(3).trim();
        }
        if (data) onEvent(JSON.parse(data), id);
      }
    }
  }

  // ---- Parts: [label, text]; the label is "" for plain text. A part is in the wire's shape
  // ({text} or {data} marked with its Edgelink type) or the history's ({type, content}).
  function describePart(p) {
    const kind = p.type || (p.metadata && p.metadata["edgelink/part"]) || (p.text !== undefined ? "text" : p.data !== undefined ? "data" : "file");
    const v = p.content !== undefined ? p.content : p.text !== undefined ? p.text : p.data;
    const o = v || {};
    if (kind === "text") return ["", String(v)];
    if (kind === "tool_call") {
      toolNames.set(o.callId, o.toolName);
      return ["tool call", o.toolName + " " + JSON.stringify(o.args || {})];
    }
    if (kind === "tool_output") {
      const name = o.toolName || toolNames.get(o.callId) || o.callId;
      return o.error != null ? ["tool error", name + ": " + o.error] : ["tool result", name + " → " + JSON.stringify(o.result)];
    }
    if (kind === "reasoning") return ["thinking", String(o.text)];
    if (kind === "file") return ["file", o.filename || p.filename || o.url || p.url || p.mediaType || ""];
    return [kind.replace("_", " "), JSON.stringify(v)];
  }
  /** Text parts run on (an answer streamed in chunks); each other part on a line of its own. */
  function describeParts(parts) {
    let out = "";
    let labelled = false;
    for (const p of parts || []) {
      const [label, text] = describePart(p);
      if (out && (label || labelled)) out += "\n";
      out += label ? label + ": " + text : text;
      labelled = !!label;
    }
    return out;
  }
  const partText = (parts) => (parts || []).map((p) => (typeof p.text === "string" ? p.text : "")).join("");

  // ---- Card and credential
  function showAuth(options) {
    $("auth-form").hidden = options.size === 0 && !auth.value;
    $("auth-scheme").replaceChildren(...[...options].map(([header, text]) => el("option", { value: header }, text)));
    if (options.has(auth.header)) $("auth-scheme").value = auth.header;
  }
  async function loadCard() {
    const box = $("card");
    try {
      const card = await api("/.well-known/agent-card.json");
      $("agent-name").textContent = card.name + (card.version ? " " + card.version : "");
      // What the page can send: API keys in a header (the card names it), bearer tokens.
      const options = new Map();
      for (const scheme of Object.values(card.securitySchemes || {})) {
        const key = scheme.apiKeySecurityScheme;
        if (key) {
          if (key.location === "header") options.set(key.name, "API key (" + key.name + ")");
        } else if (!scheme.mtlsSecurityScheme) options.set("Authorization", "Bearer token");
      }
      showAuth(options);
      const caps = card.capabilities || {};
      box.replaceChildren(
        el("p", {}, el("strong", {}, card.name), " — ", card.description || ""),
        el("p", { class: "muted" }, "streaming: " + !!caps.streaming + ", push: " + !!caps.pushNotifications),
        el("h3", {}, "Skills"),
        el("ul", {}, ...(card.skills || []).map((s) => el("li", {}, el("strong", {}, s.name || s.id), " ", s.description || ""))),
        el("h3", {}, "Interfaces"),
        el("ul", {}, ...(card.supportedInterfaces || []).map((i) => el("li", {}, i.protocolBinding + " " + i.url))),
        el("details", {}, el("summary", {}, "Raw card"), json(card)),
      );
    } catch (error) {
      showAuth(new Map([["Authorization", "Bearer token"]]));
      box.replaceChildren(el("p", { class: "error" }, "Card: " + error.message));
    }
  }

  async function cancel(id, button, note) {
    button.disabled = true;
    try {
      await api("/tasks/" + encodeURIComponent(id) + ":cancel", { method: "POST", body: "{}" });
    } catch (error) {
      button.disabled = false;
      note.replaceChildren(errorText("Cancel: " + error.message));
    }
  }

  // ---- Chat
  function bubble(kind, text) {
    const node = el("div", { class: "bubble " + kind }, text);
    $("chat-log").append(node);
    node.scrollIntoView({ block: "end" });
    return node;
  }
  function showContext() {
    $("chat-context").textContent = contextId ? "Context " + contextId.slice(0, 12) + "…" + (taskId ? " (answering task)" : "") : "New conversation";
  }
  function showRunning(id, state) {
    running = isTerminal(state) ? null : id;
    $("cancel").disabled = !running;
  }
  async function send(parts) {
    bubble("user", describeParts(parts));
    const message = { messageId: crypto.randomUUID(), role: "ROLE_USER", parts };
    if (contextId) message.contextId = contextId;
    if (taskId) message.taskId = taskId;
    const answers = new Map(); // artifactId -> bubble
    let thinking = null; // the bubble streamed reasoning goes into, until something else comes
    const shown = new Set(); // calls whose result a status showed: not again from the artifact
    $("send").disabled = true;
    $("chat-status").textContent = "Sending…";
    let current = null;
    try {
      const response = await fetch(base + "/message:stream", {
        method: "POST",
        headers: headers({ "Content-Type": "application/json" }),
        body: JSON.stringify({ message }),
      });
      await readSse(response, (event) => {
        if (event.task) {
          current = event.task;
          contextId = current.contextId;
          showRunning(current.id, current.status.state);
          $("chat-status").replaceChildren("Task ", stateBadge(current.status.state));
        } else if (event.artifactUpdate) {
          thinking = null;
          const artifact = event.artifactUpdate.artifact;
          for (const part of artifact.parts || []) {
            const [label, text] = describePart(part);
            if (label) {
              if (!shown.has((part.data || {}).callId)) bubble("tool", (artifact.name || "artifact") + " · " + label + ": " + text);
            } else {
              let node = answers.get(artifact.artifactId);
              if (!node) answers.set(artifact.artifactId, (node = bubble("agent", "")));
              node.textContent += text;
            }
          }
        } else if (event.statusUpdate) {
          const status = event.statusUpdate.status;
          const parts = (status.message && status.message.parts) || [];
          const note = partText(parts);
          showRunning(event.statusUpdate.taskId, status.state);
          for (const part of parts) {
            const [label, text] = describePart(part);
            if (label === "thinking") (thinking = thinking || bubble("thinking", "")).textContent += text;
            else if (label) {
              thinking = null;
              shown.add((part.data || {}).callId);
              bubble("tool", label + ": " + text);
            }
          }
          $("chat-status").replaceChildren("Task ", stateBadge(status.state), note ? " " + note : "");
          if (status.state === "TASK_STATE_INPUT_REQUIRED" || status.state === "TASK_STATE_AUTH_REQUIRED") {
            if (note) bubble("agent", note);
            taskId = event.statusUpdate.taskId;
          } else if (isTerminal(status.state)) {
            taskId = null;
            if (status.state !== "TASK_STATE_COMPLETED" && note) bubble("agent", note);
          }
        } else if (event.message) {
          bubble("agent", describeParts(event.message.parts));
        }
      });
    } catch (error) {
      $("chat-status").replaceChildren(errorText("Error: " + error.message));
    } finally {
      $("send").disabled = false;
      showContext();
    }
    // The task list comes from the tenant index, which hears of a task within the agent's
    // limits.indexFlushMs (about a second): list again until the new task shows.
    loadTasks(current && current.id);
    if (current) await selectTask(current.id);
  }

  // ---- Tasks
  /** A task by what the user asked first: the first words of its first user message. */
  function taskLabel(task) {
    const first = (task.history || []).find((m) => m.role === "ROLE_USER");
    const text = first ? describeParts(first.parts).replace(/\s+/g, " ") : "";
    return text.length > 40 ? text.slice(0, 39) + "…" : text || "task …" + task.id.slice(-8);
  }
  async function loadTasks(expected, attempt = 0) {
    try {
      const page = await api("/tasks?pageSize=50");
      if (typeof expected === "string" && attempt < 10 && !(page.tasks || []).some((t) => t.id === expected)) {
        setTimeout(() => loadTasks(expected, attempt + 1), 500);
      }
      const rows = (page.tasks || []).map((task) =>
        el("tr", { "data-task": task.id },
          el("td", {}, el("button", { type: "button", title: "Inspect task " + task.id, onclick: () => selectTask(task.id) }, taskLabel(task))),
          el("td", {}, stateBadge(task.status.state)),
          el("td", {}, task.status.timestamp ? new Date(task.status.timestamp).toLocaleTimeString() : ""),
        ),
      );
      $("tasks").replaceChildren(...rows);
      $("tasks-note").textContent = rows.length ? "" : "No tasks yet.";
    } catch (error) {
      $("tasks-note").replaceChildren(errorText("Tasks: " + error.message));
    }
  }
  /** One timeline row's [label, text]; chunks names appended artifact chunks, which carry only the id. */
  function describeEvent(event, chunks) {
    if (event.task) return ["task", stateName(event.task.status.state)];
    if (event.statusUpdate) {
      const status = event.statusUpdate.status;
      return [stateName(status.state), describeParts(status.message && status.message.parts)];
    }
    if (event.artifactUpdate) {
      const update = event.artifactUpdate;
      const a = update.artifact;
      const seen = chunks.get(a.artifactId) || { name: a.name || "artifact " + (chunks.size + 1), n: 0 };
      chunks.set(a.artifactId, seen);
      seen.n++;
      const label = seen.name + (update.append || seen.n > 1 ? ", chunk " + seen.n : "") + (update.lastChunk ? " (last)" : "");
      return [label, describeParts(a.parts)];
    }
    if (event.message) return ["message", describeParts(event.message.parts)];
    return ["event", JSON.stringify(event)];
  }
  // ---- Waterfall: the task's model calls, tool calls, delegations and webhook attempts,
  // placed in time from what the agent recorded in the task's metadata (no tracing needed).
  function steps(task) {
    const m = task.metadata || {};
    const r = m.result || {};
    const t0 = r.startedAt;
    const out = [];
    if (typeof t0 === "number") {
      for (const c of r.modelsUsed || []) {
        const u = c.usage || {};
        out.push({ kind: "model", label: c.provider + "/" + c.model, at: t0 + (c.atMs || 0), ms: c.latencyMs,
          note: (u.totalTokens != null ? u.totalTokens + " tokens" : "") + (c.cost != null ? " · $" + c.cost.toFixed(6) : "") });
      }
      for (const c of r.toolsUsed || []) {
        out.push({ kind: "tool", label: c.name, at: t0 + (c.atMs || 0), ms: c.durationMs, bad: c.outcome === "error" });
      }
    }
    for (const d of m.delegations || []) {
      out.push({ kind: "delegation", label: "→ " + (d.target || d.key), at: d.at, ms: d.ms, note: (d.childTaskId ? "task " + d.childTaskId.slice(-8) + " " : "") + (d.state || "") });
    }
    for (const p of m.pushAttempts || []) {
      out.push({ kind: "push", label: "webhook " + p.config, at: p.at, ms: p.ms, bad: !p.ok, note: p.status ? "HTTP " + p.status : "no answer" });
    }
    // Workers' clock stands still between I/O: a tool that took no time starts when the next
    // model call does, so at the same start the one that ends first goes first.
    const end = (s) => s.at + (s.ms || 0);
    return out.filter((s) => typeof s.at === "number").sort((a, b) => a.at - b.at || end(a) - end(b));
  }
  function waterfall(task) {
    const list = steps(task);
    if (!list.length) return el("p", { class: "muted" }, "No model calls, tool calls, delegations or webhook attempts recorded.");
    const start = list[0].at;
    const end = Math.max(...list.map((s) => s.at + (s.ms || 0)), start + 1);
    const pct = (v) => ((100 * v) / (end - start)).toFixed(2) + "%";
    return el("div", { class: "waterfall", role: "list", "aria-label": "Waterfall" }, ...list.map((s) => {
      const bar = el("span", { class: "bar" + (s.bad ? " bad" : "") });
      bar.style.left = pct(s.at - start);
      bar.style.width = pct(Math.max(s.ms || 0, (end - start) / 200));
      return el("div", { class: "step " + s.kind, role: "listitem", "data-kind": s.kind },
        el("span", { class: "what", title: s.label }, s.kind + " " + s.label),
        el("span", { class: "track" }, bar),
        el("span", { class: "muted" }, (s.ms != null ? s.ms + " ms" : "running") + (s.note ? " · " + s.note : "")));
    }));
  }
  async function selectTask(id) {
    const box = $("task");
    if (timelineAbort) timelineAbort.abort();
    timelineAbort = new AbortController();
    try {
      const task = await api("/tasks/" + encodeURIComponent(id) + "?historyLength=20");
      const timeline = el("ol", { class: "timeline", "aria-label": "Event timeline" });
      const note = el("span", { role: "status" });
      const stop = el("button", { type: "button", onclick: () => cancel(id, stop, note) }, "Cancel task");
      let badge = stateBadge(task.status.state);
      let fall = waterfall(task);
      const setState = (state) => {
        const next = stateBadge(state);
        badge.replaceWith(next);
        badge = next;
        stop.hidden = isTerminal(state);
        // The list's row too, so a task canceled here does not read "working" there.
        const row = [...$("tasks").rows].find((r) => r.dataset.task === id);
        if (row) row.cells[1].replaceChildren(stateBadge(state));
      };
      box.replaceChildren(
        el("p", {}, el("code", {}, task.id), " ", badge, " ", stop, " ", note),
        el("p", { class: "muted" }, "Context " + task.contextId),
        el("h3", {}, "Waterfall"),
        fall,
        el("h3", {}, "Event timeline"),
        timeline,
        el("h3", {}, "Artifacts"),
        ...((task.artifacts || []).length
          ? task.artifacts.map((a, i) => el("div", {}, el("strong", {}, a.name || "artifact " + (i + 1)), el("pre", {}, describeParts(a.parts))))
          : [el("p", { class: "muted" }, "None.")]),
        el("details", {}, el("summary", {}, "Raw task"), json(task)),
      );
      setState(task.status.state);
      loadHistory(task.contextId);
      loadPush(task.id);
      // Every event of the task from the first (Last-Event-ID 0); live ones follow while it runs.
      const response = await fetch(base + "/tasks/" + encodeURIComponent(id) + ":subscribe", {
        headers: headers({ "Last-Event-ID": "0" }),
        signal: timelineAbort.signal,
      });
      const chunks = new Map();
      await readSse(response, (event, eventId) => {
        const [label, text] = describeEvent(event, chunks);
        if (event.statusUpdate) setState(event.statusUpdate.status.state);
        // A run that ends while watched: its calls are recorded with its end, so draw again.
        if (event.statusUpdate && isTerminal(event.statusUpdate.status.state) && !isTerminal(task.status.state)) {
          api("/tasks/" + encodeURIComponent(id) + "?historyLength=0").then((t) => fall.replaceWith((fall = waterfall(t)))).catch(() => {});
        }
        timeline.append(el("li", { value: eventId || "" }, el("strong", {}, label), text ? " " + text : ""));
      });
    } catch (error) {
      if (error.name !== "AbortError") box.append(el("p", { class: "error" }, error.message));
    }
  }

  // ---- Conversation history
  function describeItem(item) {
    const extra = item.extra || {};
    if (item.type === "function_call") return ["tool call", item.name + " " + (item.arguments || "{}")];
    if (item.type === "function_call_output") return [item.isError ? "tool error" : "tool result", item.name + " → " + item.output];
    if (item.type === "message") {
      const content = (item.content || []).map((c) => (typeof c === "string" ? c : "[image]")).join("");
      return [
        item.role + (extra.summary ? " (summary)" : ""),
        (content || (extra.a2a ? describeParts(extra.a2a.parts) : "")) + (extra.thinking ? "\n(thinking: " + extra.thinking + ")" : ""),
      ];
    }
    return [item.type.replace(/_/g, " "), item.toAgent || item.instructions || ""];
  }
  async function loadHistory(cid) {
    const list = $("history");
    try {
      const page = await api("/contexts/" + encodeURIComponent(cid) + "/history?pageSize=200");
      $("history-note").textContent = page.totalSize + (page.totalSize === 1 ? " item" : " items") + " in context " + cid.slice(0, 12) + "…";
      list.replaceChildren(...(page.items || []).map((item) => {
        const [label, text] = describeItem(item);
        return el("li", {}, el("strong", {}, label + ": "), String(text));
      }));
      list.dataset.contextId = cid;
    } catch (error) {
      $("history-note").replaceChildren(errorText("History: " + error.message));
    }
  }
  async function compact() {
    const cid = $("history").dataset.contextId || contextId;
    if (!cid) return ($("history-note").textContent = "Choose a task or chat first.");
    try {
      const result = await api("/contexts/" + encodeURIComponent(cid) + "/history:compact", {
        method: "POST",
        body: JSON.stringify({ strategy: "recent", maxMessages: Number($("keep").value) }),
      });
      await loadHistory(cid);
      $("history-note").textContent = "Compacted: " + result.beforeMessages + " → " + result.afterMessages + " messages (" + result.removed + " items removed).";
    } catch (error) {
      $("history-note").replaceChildren(errorText("Compact: " + error.message));
    }
  }

  // ---- Push deliveries
  async function loadPush(id) {
    const box = $("push");
    const path = "/tasks/" + encodeURIComponent(id);
    try {
      const configs = await api(path + "/pushNotificationConfigs");
      const dead = await api(path + "/deadLetters");
      const list = Array.isArray(configs) ? configs : configs.configs || [];
      box.replaceChildren(
        el("h3", {}, "Webhooks"),
        list.length ? el("ul", {}, ...list.map((c) => el("li", {}, (c.id || "") + " → " + ((c.pushNotificationConfig || c).url || "")))) : el("p", { class: "muted" }, "No webhook registered for this task."),
        el("h3", {}, "Dead letters"),
        (dead.deliveries || []).length
          ? el("div", {}, json(dead.deliveries), el("button", { type: "button", onclick: async () => { await api(path + "/deadLetters:redeliver", { method: "POST", body: "{}" }); loadPush(id); } }, "Redeliver"))
          : el("p", { class: "muted" }, "None: every delivery arrived or is still being retried."),
      );
    } catch (error) {
      box.replaceChildren(el("p", { class: "muted" }, "Push: " + error.message));
    }
  }

  // ---- Wiring
  $("credential").value = auth.value || "";
  $("auth-form").addEventListener("submit", (event) => {
    event.preventDefault();
    auth = { header: $("auth-scheme").value || "Authorization", value: $("credential").value.trim() };
    sessionStorage.setItem("edgelink-auth", JSON.stringify(auth));
    loadCard();
    loadTasks();
  });
  $("chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("chat-input").value.trim();
    if (!text) return;
    let parts;
    try {
      // "Parts as JSON": one A2A part or an array of them, e.g. a tool_call data part.
      parts = $("as-json").checked ? [].concat(JSON.parse(text)) : [{ text }];
    } catch (error) {
      return $("chat-status").replaceChildren(errorText("Parts as JSON: " + error.message));
    }
    $("chat-input").value = "";
    send(parts);
  });
  $("chat-input").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("chat-form").requestSubmit();
    }
  });
  $("cancel").addEventListener("click", () => running && cancel(running, $("cancel"), $("chat-status")));
  $("new-chat").addEventListener("click", () => {
    contextId = null;
    taskId = null;
    showRunning(null, TERMINAL[0]);
    $("chat-log").replaceChildren();
    $("chat-status").textContent = "";
    showContext();
  });
  $("refresh-tasks").addEventListener("click", () => loadTasks());
  $("compact").addEventListener("click", compact);
  loadCard();
  loadTasks();
})();
`;
