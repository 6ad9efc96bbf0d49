import type { Context, Hono } from "hono";
import type { Agent } from "../../agent/definition";
import { INSPECTOR_VAR } from "../../conversation/tasks/task-steps";
import { A2AError } from "../../protocol/errors";
import type { Operations } from "../a2a/operations";
import { restError } from "../errors";
import { inspectorEnabled } from "../inspector-on";
import { INSPECTOR_HTML } from "./inspector-page";
import { INSPECTOR_SCRIPT } from "./inspector-script";

export { INSPECTOR_VAR } from "../../conversation/tasks/task-steps";
export { inspectorEnabled } from "../inspector-on";

// Only this page's own script and requests: nothing from elsewhere, no inline script.
const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
};

const STEPS_PREFIX = "/inspector/tasks/";
/** Where the inspector reads a task's steps (delegations, webhook attempts). */
export const TASK_STEPS_PATH = `${STEPS_PREFIX}:id/steps`;

/**
 * A task's steps for the inspector's waterfall, as JSON: `{taskId, delegations,
 * pushAttempts}`. Behind authentication and found as GetTask finds the task (another
 * owner's task is not found); `mountInspector` answers not found while the inspector is off.
 */
export async function serveTaskSteps(
  ops: Pick<Operations<unknown>, "taskSteps">,
  taskId: string,
): Promise<Response> {
  return Response.json(await ops.taskSteps(taskId), { headers: { "Cache-Control": "no-store" } });
}

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
  // The task steps route (`serveTaskSteps`, after authentication) is not there while off.
  app.use(`${STEPS_PREFIX}*`, async (c, next) =>
    inspectorEnabled(agent as Agent<unknown>, c.env, c.req.url)
      ? next()
      : restError(new A2AError("MethodNotFound", `No endpoint at ${c.req.path}`)),
  );
  app.get("/inspector", (c) => serve(c, INSPECTOR_HTML, "text/html; charset=utf-8"));
  app.get("/inspector/app.js", (c) => serve(c, INSPECTOR_SCRIPT, "text/javascript; charset=utf-8"));
  // The memory panel comes with `memory()`; without it the page loads an empty script.
  const memoryPanel = agent.memory?.inspectorScript ?? "";
  app.get("/inspector/memory.js", (c) => serve(c, memoryPanel, "text/javascript; charset=utf-8"));
}
