import type { Context, Hono } from "hono";
import type { Agent } from "../agent/definition";
import { A2AError } from "../models/errors";
import { restError } from "./errors";
import { INSPECTOR_HTML } from "./inspector-page";
import { INSPECTOR_SCRIPT } from "./inspector-script";

/** The variable that turns the inspector on or off without changing code. */
export const INSPECTOR_VAR = "EDGELINK_INSPECTOR";

/**
 * Whether to serve the inspector for this request: the agent's `inspector` option when
 * set; else the `EDGELINK_INSPECTOR` variable ("true"/"false"); else only when the agent
 * is served from localhost, which is what `wrangler dev` does (a deployed Worker never is).
 */
export function inspectorEnabled(agent: Agent<unknown>, env: unknown, url: string): boolean {
  if (agent.inspector !== null) return agent.inspector;
  const value = (env as Record<string, unknown> | undefined)?.[INSPECTOR_VAR];
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  return ["localhost", "127.0.0.1", "[::1]"].includes(new URL(url).hostname);
}

// Only this page's own script and requests: nothing from elsewhere, no inline script.
const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

/** Serves the inspector page at `/inspector` and its script at `/inspector/app.js`. */
export function mountInspector<E extends { Bindings: object }>(
  app: Hono<E>,
  agent: Agent<E["Bindings"]>,
): void {
  const serve = (c: Context<E>, body: string, type: string) => {
    if (!inspectorEnabled(agent as Agent<unknown>, c.env, c.req.url)) {
      return restError(
        new A2AError(
          "MethodNotFound",
          `No endpoint at ${c.req.path} (the inspector is off: set ${INSPECTOR_VAR}="true" or the inspector option)`,
        ),
      );
    }
    return new Response(body, { headers: { "Content-Type": type, ...SECURITY_HEADERS } });
  };
  app.get("/inspector", (c) => serve(c, INSPECTOR_HTML, "text/html; charset=utf-8"));
  app.get("/inspector/app.js", (c) => serve(c, INSPECTOR_SCRIPT, "text/javascript; charset=utf-8"));
  // The memory panel comes with `memory()`; without it the page loads an empty script.
  const memoryPanel = agent.memory?.inspectorScript ?? "";
  app.get("/inspector/memory.js", (c) => serve(c, memoryPanel, "text/javascript; charset=utf-8"));
}
