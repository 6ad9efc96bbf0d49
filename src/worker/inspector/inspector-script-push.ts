/**
 * The inspector script's webhook panel: a task's push configs and dead letters, and
 * redelivering them. A fragment of the script's one function (see inspector-script.ts).
 */
// biome-ignore lint/complexity/noUselessStringRaw: every part is raw, so a backslash added later reaches the script as written
export const INSPECTOR_PUSH = String.raw`
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
`;
