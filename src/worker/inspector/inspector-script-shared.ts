/**
 * The inspector script's part that every panel uses: the page's state, building elements,
 * requests with the credential (JSON and SSE), and how a part reads. A fragment of the
 * script's one function (see inspector-script.ts): it names what the other parts define.
 */
export const INSPECTOR_SHARED = String.raw`
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
`;
