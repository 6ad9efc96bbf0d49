/**
 * The inspector script's task list and task view: its event timeline (replayed from the
 * first event, then live) and its waterfall of model calls, tool calls, delegations and
 * webhook attempts. A fragment of the script's one function (see inspector-script.ts).
 */
export const INSPECTOR_TASKS = String.raw`
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
  // ---- Waterfall: the task's model calls and tool calls (from its result's metadata), its
  // delegations and webhook attempts (from its steps, which only the inspector serves: they
  // stay out of the task), placed in time (no tracing needed).
  function steps(task, recorded) {
    const r = (task.metadata || {}).result || {};
    const m = recorded || {};
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
  function waterfall(task, recorded) {
    const list = steps(task, recorded);
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
      const stepsOf = () => api("/inspector/tasks/" + encodeURIComponent(id) + "/steps").catch(() => null);
      const [task, recorded] = await Promise.all([api("/tasks/" + encodeURIComponent(id) + "?historyLength=20"), stepsOf()]);
      const timeline = el("ol", { class: "timeline", "aria-label": "Event timeline" });
      const note = el("span", { role: "status" });
      const stop = el("button", { type: "button", onclick: () => cancel(id, stop, note) }, "Cancel task");
      let badge = stateBadge(task.status.state);
      let fall = waterfall(task, recorded);
      const held = el("div", { class: "held-calls" });
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
        held,
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
      showHeld(held, task, task.status);
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
        if (event.statusUpdate) {
          const status = event.statusUpdate.status;
          setState(status.state);
          // Replayed statuses older than the task read above would redraw stale calls.
          if (!(status.timestamp && task.status.timestamp && status.timestamp <= task.status.timestamp)) showHeld(held, task, status);
        }
        // A run that ends while watched: its calls are recorded with its end, so draw again.
        if (event.statusUpdate && isTerminal(event.statusUpdate.status.state) && !isTerminal(task.status.state)) {
          Promise.all([api("/tasks/" + encodeURIComponent(id) + "?historyLength=0"), stepsOf()]).then(([t, r]) => fall.replaceWith((fall = waterfall(t, r)))).catch(() => {});
        }
        timeline.append(el("li", { value: eventId || "" }, el("strong", {}, label), text ? " " + text : ""));
      });
    } catch (error) {
      if (error.name !== "AbortError") box.append(el("p", { class: "error" }, error.message));
    }
  }
`;
