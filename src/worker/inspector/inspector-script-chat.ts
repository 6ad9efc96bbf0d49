/**
 * The inspector script's agent card and credential bar, task cancelling, and the chat: a
 * message sent, its task's events streamed into bubbles. A fragment of the script's one
 * function (see inspector-script.ts).
 */
// biome-ignore lint/complexity/noUselessStringRaw: every part is raw, so a backslash added later reaches the script as written
export const INSPECTOR_CHAT = String.raw`
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
`;
