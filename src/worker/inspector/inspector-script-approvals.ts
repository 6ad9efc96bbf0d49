/**
 * The inspector script's held calls: a task's pending approvals and questions, read from
 * its `input-required` status, each with its controls (approve, approve with edited
 * arguments, reject with a reason; a question's choices or an answer box). A decision goes
 * to the agent as the ordinary decision message any A2A client sends. A fragment of the
 * script's one function (see inspector-script.ts).
 */
// biome-ignore lint/complexity/noUselessStringRaw: every part is raw, so a backslash added later reaches the script as written
export const INSPECTOR_APPROVALS = String.raw`
  // ---- Held calls
  /** The approval request in a status, or null: the data part the task waits with. */
  function heldRequest(status) {
    if (!status || status.state !== "TASK_STATE_INPUT_REQUIRED") return null;
    for (const part of (status.message && status.message.parts) || []) {
      const d = part.data;
      if (d && typeof d === "object" && d.kind === "edgelink.approval.request" && Array.isArray(d.calls)) return d;
    }
    return null;
  }
  /**
   * Draws a status's held calls into box. Every pending call needs a decision in the same
   * message, so each control records its call's decision and the message goes once every
   * call has one (at once when the task waits on one call).
   */
  function showHeld(box, task, status) {
    const request = heldRequest(status);
    // The same request again (a live status repeating it) keeps what is being typed.
    const key = request ? JSON.stringify(request) : "";
    if (key === box.dataset.request) return;
    box.dataset.request = key;
    if (!request) return box.replaceChildren();
    const decisions = new Map(); // callId -> decision
    const controls = [];
    const sent = el("p", { role: "status", class: "held-note" });
    const submit = async () => {
      for (const c of controls) c.disabled = true;
      sent.textContent = "Sending…";
      const message = {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        taskId: task.id,
        contextId: task.contextId,
        parts: request.calls.map((c) => ({ data: { kind: "edgelink.approval.decision", ...decisions.get(c.callId) } })),
      };
      try {
        await api("/message:send", { method: "POST", body: JSON.stringify({ message }) });
        loadTasks();
        await selectTask(task.id);
      } catch (error) {
        // Refused whole: nothing was applied, so every call is undecided again.
        decisions.clear();
        for (const c of controls) c.disabled = false;
        sent.replaceChildren(errorText("Refused: " + error.message));
      }
    };
    const decide = (note, decision) => {
      decisions.set(decision.callId, decision);
      const left = request.calls.length - decisions.size;
      note.textContent = left ? "Decided (" + decision.decision + "); " + left + " more to decide before it is sent." : "";
      if (!left) submit();
    };
    const button = (text, onclick, extra) => {
      const b = el("button", { type: "button", onclick, ...extra }, text);
      controls.push(b);
      return b;
    };
    const cards = request.calls.map((call) => {
      const id = String(call.callId);
      const note = el("span", { role: "status" });
      const what = call.type === "question" ? "question" : "approval";
      const head = el("p", {}, el("strong", {}, String(call.tool)), " ", el("span", { class: "muted" }, what + " · call " + id));
      if (request.relayed) head.append(el("span", { class: "muted" }, " · relayed from agent " + String(request.relayed.agent)));
      const parts = [head];
      if (call.reason) parts.push(el("p", {}, String(call.reason)));
      if (call.deadline) parts.push(el("p", { class: "muted" }, "Deadline: " + new Date(call.deadline).toLocaleString() + " (" + String(call.deadline) + ")"));
      if (what === "question") {
        if (Array.isArray(call.choices) && call.choices.length) {
          parts.push(el("div", { class: "row choices" }, ...call.choices.map((choice) =>
            button(String(choice), () => decide(note, { callId: id, decision: "answer", answer: String(choice) })))));
        } else {
          const input = el("input", { id: "answer-" + id });
          parts.push(el("label", { for: "answer-" + id }, "Answer"),
            el("div", { class: "row" }, input, button("Answer", () => {
              if (!input.value.trim()) return note.replaceChildren(errorText("Type an answer first."));
              decide(note, { callId: id, decision: "answer", answer: input.value });
            })));
        }
      } else {
        parts.push(json(call.arguments || {}));
        const edited = el("textarea", { id: "edit-" + id, rows: "4", spellcheck: "false" });
        edited.value = JSON.stringify(call.arguments || {}, null, 2);
        const reason = el("input", { id: "reason-" + id, placeholder: "told to the model" });
        parts.push(
          el("div", {}, button("Approve", () => decide(note, { callId: id, decision: "approve" }), { class: "primary" })),
          el("details", {}, el("summary", {}, "Approve with edited arguments"),
            el("label", { for: "edit-" + id }, "Edited arguments (a JSON object)"), edited,
            button("Approve edited", () => {
              let value;
              try {
                value = JSON.parse(edited.value);
              } catch (error) {
                return note.replaceChildren(errorText("Edited arguments: " + error.message));
              }
              if (!value || typeof value !== "object" || Array.isArray(value)) {
                return note.replaceChildren(errorText("Edited arguments must be a JSON object."));
              }
              decide(note, { callId: id, decision: "approve", arguments: value });
            })),
          el("label", { for: "reason-" + id }, "Reason for rejecting"),
          el("div", { class: "row" }, reason, button("Reject", () => {
            const d = { callId: id, decision: "reject" };
            if (reason.value.trim()) d.reason = reason.value.trim();
            decide(note, d);
          })),
        );
      }
      parts.push(note);
      return el("div", { class: "held", "data-call": id }, ...parts);
    });
    const waiting = (request.waiting || []).length;
    box.replaceChildren(
      el("h3", {}, "Waiting for a decision"),
      ...cards,
      waiting ? el("p", { class: "muted" }, waiting + " other call(s) of the same round wait with these (they need no decision).") : "",
      sent,
    );
  }
`;
