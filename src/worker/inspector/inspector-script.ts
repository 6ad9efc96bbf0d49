import { INSPECTOR_APPROVALS } from "./inspector-script-approvals";
import { INSPECTOR_CHAT } from "./inspector-script-chat";
import { INSPECTOR_HISTORY } from "./inspector-script-history";
import { INSPECTOR_PUSH } from "./inspector-script-push";
import { INSPECTOR_SHARED } from "./inspector-script-shared";
import { INSPECTOR_TASKS } from "./inspector-script-tasks";

/**
 * The inspector's script, served as `inspector/app.js`. Plain browser JavaScript (no
 * build step): it talks to the agent's own HTTP+JSON binding, relative to where the page
 * is mounted, with the credential typed into the page. Every value from the agent is
 * written with `textContent`, never parsed as HTML.
 *
 * The script is one function, written in parts a file each (one panel of the page each)
 * that share its scope; this file puts them in order and wires the page's controls to
 * them. The package build minifies the whole script (tsup.config.ts).
 */

/** The page's controls, wired to the functions of the parts. */
// biome-ignore lint/complexity/noUselessStringRaw: every part is raw, so a backslash added later reaches the script as written
const WIRING = String.raw`
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
`;

export const INSPECTOR_SCRIPT = `"use strict";
(() => {${INSPECTOR_SHARED}${INSPECTOR_CHAT}${INSPECTOR_TASKS}${INSPECTOR_APPROVALS}${INSPECTOR_HISTORY}${INSPECTOR_PUSH}${WIRING}})();
`;
