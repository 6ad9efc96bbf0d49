/**
 * The inspector script's conversation history panel and its compaction. A fragment of the
 * script's one function (see inspector-script.ts).
 */
export const INSPECTOR_HISTORY = String.raw`
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
`;
