/**
 * The inspector's script, served as `inspector/app.js`. Plain browser JavaScript (no
 * build step): it talks to the agent's own HTTP+JSON binding, relative to where the page
 * is mounted, with the bearer token typed into the page. Every value from the agent is
 * written with `textContent`, never parsed as HTML.
 */
export const INSPECTOR_SCRIPT = String.raw`"use strict";
(() => {
  const base = location.pathname.replace(/\/inspector\/?$/, "");
  const $ = (id) => document.getElementById(id);
  const TERMINAL = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"];
  let token = sessionStorage.getItem("edgelink-token") || "";
  let contextId = null;
  let taskId = null; // set while a task waits for input
  let selected = null; // the task shown in the Task panel
  let timelineAbort = null;

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
  const stateBadge = (state) => el("span", { class: "state " + state }, String(state || "").replace("TASK_STATE_", "").toLowerCase());
  const json = (value) => el("pre", {}, JSON.stringify(value, null, 2));

  function headers(extra) {
    const h = { "A2A-Version": "1.0", ...extra };
    if (token) h.Authorization = "Bearer " + token;
    return h;
  }
  async function api(path, init) {
    const response = await fetch(base + path, {
      ...init,
      headers: headers(init && init.body ? { "Content-Type": "application/json" } : {}),
    });
    const text = await response.text();
    const body = text ? JSON.parse(text) : {};
    if (!response.ok) throw new Error((body.error && body.error.message) || response.status + " " + response.statusText);
    return body;
  }
  /** Reads an SSE response, calling onEvent with each data object. */
  async function readSse(response, onEvent) {
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      throw new Error((body.error && body.error.message) || String(response.status));
    }
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
  const partText = (parts) => (parts || []).map((p) => (typeof p.text === "string" ? p.text : "")).join("");
  const partKind = (p) => (p.metadata && p.metadata["edgelink/part"]) || (p.data !== undefined ? "data" : p.text !== undefined ? "text" : "file");

  // ---- Card
  async function loadCard() {
    const box = $("card");
    try {
      const card = await api("/.well-known/agent-card.json");
      $("agent-name").textContent = card.name + (card.version ? " " + card.version : "");
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
      box.replaceChildren(el("p", { class: "error" }, "Card: " + error.message));
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
  async function send(text) {
    bubble("user", text);
    const message = { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] };
    if (contextId) message.contextId = contextId;
    if (taskId) message.taskId = taskId;
    const answers = new Map(); // artifactId -> bubble
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
          $("chat-status").replaceChildren("Task ", stateBadge(current.status.state));
        } else if (event.artifactUpdate) {
          const artifact = event.artifactUpdate.artifact;
          for (const part of artifact.parts || []) {
            const kind = partKind(part);
            if (kind === "text") {
              let node = answers.get(artifact.artifactId);
              if (!node) answers.set(artifact.artifactId, (node = bubble("agent", "")));
              node.textContent += part.text;
            } else {
              bubble("tool", kind + ": " + JSON.stringify(part.data !== undefined ? part.data : part));
            }
          }
        } else if (event.statusUpdate) {
          const status = event.statusUpdate.status;
          const note = partText(status.message && status.message.parts);
          $("chat-status").replaceChildren("Task ", stateBadge(status.state), note ? " " + note : "");
          if (status.state === "TASK_STATE_INPUT_REQUIRED" || status.state === "TASK_STATE_AUTH_REQUIRED") {
            if (note) bubble("agent", note);
            taskId = event.statusUpdate.taskId;
          } else if (TERMINAL.includes(status.state)) {
            taskId = null;
            if (status.state !== "TASK_STATE_COMPLETED" && note) bubble("agent", note);
          }
        } else if (event.message) {
          bubble("agent", partText(event.message.parts));
        }
      });
    } catch (error) {
      $("chat-status").replaceChildren(el("span", { class: "error" }, "Error: " + error.message));
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
  async function loadTasks(expected, attempt = 0) {
    try {
      const page = await api("/tasks?pageSize=50");
      if (typeof expected === "string" && attempt < 10 && !(page.tasks || []).some((t) => t.id === expected)) {
        setTimeout(() => loadTasks(expected, attempt + 1), 500);
      }
      const rows = (page.tasks || []).map((task) =>
        el("tr", {},
          el("td", {}, el("button", { type: "button", "aria-label": "Inspect task " + task.id, onclick: () => selectTask(task.id) }, task.id.slice(-10))),
          el("td", {}, stateBadge(task.status.state)),
          el("td", {}, task.status.timestamp ? new Date(task.status.timestamp).toLocaleTimeString() : ""),
        ),
      );
      $("tasks").replaceChildren(...rows);
      $("tasks-note").textContent = rows.length ? "" : "No tasks yet.";
    } catch (error) {
      $("tasks-note").replaceChildren(el("span", { class: "error" }, "Tasks: " + error.message));
    }
  }
  function describeEvent(event) {
    if (event.task) return ["task", event.task.status.state];
    if (event.statusUpdate) return ["status", event.statusUpdate.status.state + " " + partText(event.statusUpdate.status.message && event.statusUpdate.status.message.parts)];
    if (event.artifactUpdate) {
      const a = event.artifactUpdate;
      return ["artifact", (a.artifact.name || a.artifact.artifactId) + (a.append ? " +" : " ") + JSON.stringify(partText(a.artifact.parts)) + (a.lastChunk ? " (last)" : "")];
    }
    if (event.message) return ["message", partText(event.message.parts)];
    return ["event", JSON.stringify(event)];
  }
  async function selectTask(id) {
    selected = id;
    const box = $("task");
    if (timelineAbort) timelineAbort.abort();
    timelineAbort = new AbortController();
    try {
      const task = await api("/tasks/" + encodeURIComponent(id) + "?historyLength=20");
      const timeline = el("ol", { class: "timeline", "aria-label": "Event timeline" });
      box.replaceChildren(
        el("p", {}, el("code", {}, task.id), " ", stateBadge(task.status.state)),
        el("p", { class: "muted" }, "Context " + task.contextId),
        el("h3", {}, "Event timeline"),
        timeline,
        el("h3", {}, "Artifacts"),
        ...(task.artifacts || []).map((a) => el("div", {}, el("strong", {}, a.name || a.artifactId), el("pre", {}, partText(a.parts) || JSON.stringify(a.parts, null, 2)))),
        el("details", {}, el("summary", {}, "Raw task"), json(task)),
      );
      loadHistory(task.contextId);
      loadPush(task.id);
      // Every event of the task from the first (Last-Event-ID 0); live ones follow while it runs.
      const response = await fetch(base + "/tasks/" + encodeURIComponent(id) + ":subscribe", {
        headers: headers({ "Last-Event-ID": "0" }),
        signal: timelineAbort.signal,
      });
      await readSse(response, (event, eventId) => {
        const [kind, text] = describeEvent(event);
        timeline.append(el("li", {}, el("span", { class: "muted" }, "#" + eventId + " "), el("strong", {}, kind + " "), text));
      });
    } catch (error) {
      if (error.name !== "AbortError") box.append(el("p", { class: "error" }, error.message));
    }
  }

  // ---- Conversation history
  async function loadHistory(cid) {
    const list = $("history");
    try {
      const page = await api("/contexts/" + encodeURIComponent(cid) + "/history?pageSize=200");
      $("history-note").textContent = page.totalSize + " items in context " + cid.slice(0, 12) + "…";
      list.replaceChildren(...(page.items || []).map((item) => {
        const content = Array.isArray(item.content) ? item.content.map((c) => (typeof c === "string" ? c : c.text || "")).join("") : "";
        const label = item.type === "message" ? item.role : item.type;
        const detail = content || (item.name ? item.name + " " + (item.arguments || "") : "") || item.output || "";
        return el("li", {}, el("strong", {}, label + (item.extra && item.extra.summary ? " (summary)" : "") + ": "), String(detail));
      }));
      list.dataset.contextId = cid;
    } catch (error) {
      $("history-note").replaceChildren(el("span", { class: "error" }, "History: " + error.message));
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
      $("history-note").replaceChildren(el("span", { class: "error" }, "Compact: " + error.message));
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
  $("token").value = token;
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem("edgelink-token", token);
    loadCard();
    loadTasks();
  });
  $("chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("chat-input").value.trim();
    if (!text) return;
    $("chat-input").value = "";
    send(text);
  });
  $("chat-input").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("chat-form").requestSubmit();
    }
  });
  $("new-chat").addEventListener("click", () => {
    contextId = null;
    taskId = null;
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
