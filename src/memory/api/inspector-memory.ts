/**
 * The inspector's memory panel, served as `inspector/memory.js` when the agent serves its
 * memory routes (it comes with `memory()`, so other Workers do not bundle it). It adds a
 * section to the page: the signed-in user's memory by kind (entities with their description
 * and properties, turns with their date), searched by words, a fact to add, a fact to
 * correct, an entity to describe, one item to delete, and erasure. Plain browser JavaScript; values are written with `textContent`.
 */
export const INSPECTOR_MEMORY_SCRIPT = String.raw`"use strict";
(() => {
  const base = location.pathname.replace(/\/inspector\/?$/, "");
  const main = document.querySelector("main");
  if (!main) return;
  function headers(extra) {
    const auth = JSON.parse(sessionStorage.getItem("edgelink-auth") || "{}");
    const h = { ...extra };
    if (auth.value) h[auth.header] = auth.header === "Authorization" ? "Bearer " + auth.value : auth.value;
    return h;
  }
  async function api(method, path, body) {
    const response = await fetch(base + path, {
      method,
      headers: headers(body ? { "Content-Type": "application/json" } : {}),
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    const json = text ? JSON.parse(text) : {};
    if (!response.ok) throw new Error((json.error && json.error.message) || response.status + " " + response.statusText);
    return json;
  }
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(typeof child === "string" ? document.createTextNode(child) : child);
    return node;
  }
  const KINDS = ["fact", "entity", "goal", "strategy", "turn"];
  const kind = el("select", { id: "memory-kind", "aria-label": "Kind of memory" }, ...KINDS.map((k) => el("option", { value: k }, k)));
  const note = el("p", { class: "muted", role: "status", "aria-live": "polite" });
  const rows = el("tbody", { id: "memory-items" });
  const search = el("input", { id: "memory-search", type: "search", placeholder: "words to find" });
  const claim = el("input", { id: "memory-claim", placeholder: "The user prefers window seats." });
  const describe = (item) =>
    item.kind === "fact" ? item.claim + (item.supersededBy ? " (superseded)" : "")
    : item.kind === "entity" ? item.name + (item.type ? " [" + item.type + "]" : "") + (item.aliases.length ? " (" + item.aliases.join(", ") + ")" : "")
      + (item.description ? " — " + item.description : "")
      + (Object.keys(item.properties || {}).length ? " " + JSON.stringify(item.properties) : "")
    : item.kind === "goal" ? item.title + " — " + item.status + ", priority " + item.priority
    : item.kind === "strategy" ? item.toolSequence.join(" → ") + " — " + item.successCount + " ok, " + item.failureCount + " failed"
    : item.timestamp.slice(0, 10) + " " + item.role + ": " + item.content + (item.correctedAt ? " (corrected since)" : "");
  async function load() {
    try {
      const words = search.value.trim();
      const page = await api("GET", "/memory?kind=" + kind.value + (words ? "&query=" + encodeURIComponent(words) : ""));
      rows.replaceChildren(...page.items.map((item) => el("tr", {},
        el("td", {}, describe(item)),
        el("td", {},
          ...(item.kind === "fact" && !item.supersededBy
            ? [el("button", { type: "button", "aria-label": "Correct " + item.id, onclick: () => correct(item) }, "Correct")]
            : []),
          ...(item.kind === "entity"
            ? [el("button", { type: "button", "aria-label": "Describe " + item.id, onclick: () => describeEntity(item) }, "Describe")]
            : []),
          el("button", { type: "button", "aria-label": "Delete " + item.id, onclick: () => remove(item) }, "Delete")))));
      note.textContent = page.items.length ? "" : words ? "Nothing remembered matches." : "Nothing remembered.";
    } catch (error) {
      rows.replaceChildren();
      note.textContent = "Memory: " + error.message;
    }
  }
  async function remove(item) {
    try { await api("DELETE", "/memory/" + item.kind + "/" + encodeURIComponent(item.id)); } catch (error) { note.textContent = error.message; }
    load();
  }
  async function correct(item) {
    const text = (prompt("Correct this fact", item.claim) || "").trim();
    if (!text || text === item.claim) return;
    try { await api("PUT", "/memory/facts/" + encodeURIComponent(item.id), { claim: text }); } catch (error) { note.textContent = error.message; }
    load();
  }
  async function describeEntity(item) {
    const text = (prompt("Describe " + item.name, item.description || "") || "").trim();
    if (!text || text === item.description) return;
    try { await api("POST", "/memory/entities", { name: item.name, description: text }); } catch (error) { note.textContent = error.message; }
    load();
  }
  async function add(event) {
    event.preventDefault();
    const text = claim.value.trim();
    if (!text) return;
    try { await api("POST", "/memory/facts", { claim: text }); claim.value = ""; } catch (error) { note.textContent = error.message; }
    kind.value = "fact";
    load();
  }
  async function erase() {
    if (!confirm("Delete everything remembered about you?")) return;
    try { const r = await api("DELETE", "/memory"); note.textContent = "Erased " + r.erased + " items."; } catch (error) { note.textContent = error.message; }
    load();
  }
  kind.addEventListener("change", load);
  main.append(el("section", { "aria-labelledby": "memory-title" },
    el("h2", { id: "memory-title" }, "Memory"),
    el("div", { class: "row" }, kind,
      el("button", { type: "button", id: "memory-refresh", onclick: load }, "Refresh"),
      el("button", { type: "button", id: "memory-erase", onclick: erase }, "Erase all")),
    el("form", { id: "memory-find", class: "row", onsubmit: (event) => { event.preventDefault(); load(); } },
      el("div", {}, el("label", { for: "memory-search" }, "Search memory"), search),
      el("button", { type: "submit" }, "Search")),
    note,
    el("table", {}, el("tbody", {}), rows),
    el("form", { id: "memory-add", class: "row", onsubmit: add },
      el("div", {}, el("label", { for: "memory-claim" }, "Tell it a fact"), claim),
      el("button", { type: "submit" }, "Add"))));
  document.getElementById("auth-form")?.addEventListener("submit", () => setTimeout(load, 0));
  load();
})();
`;
