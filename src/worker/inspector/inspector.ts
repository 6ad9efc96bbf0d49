import type { Context, MiddlewareHandler } from "hono";
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
 * owner's task is not found); `inspectorGate` answers not found while the inspector is off.
 */
export async function serveTaskSteps(
  ops: Pick<Operations<unknown>, "taskSteps">,
  taskId: string,
): Promise<Response> {
  return Response.json(await ops.taskSteps(taskId), { headers: { "Cache-Control": "no-store" } });
}

/** The inspector's page or one of its scripts, answered not found while the inspector is off. */
export function inspectorAsset(
  agent: Agent<unknown>,
  asset: "page" | "script" | "memory",
): (c: Context) => Response {
  const [body, type] =
    asset === "page"
      ? [INSPECTOR_HTML, "text/html; charset=utf-8"]
      : // The memory panel comes with `memory()`; without it the page loads an empty script.
        [
          asset === "script" ? INSPECTOR_SCRIPT : (agent.memory?.inspectorScript ?? ""),
          "text/javascript; charset=utf-8",
        ];
  return (c) => {
    if (!inspectorEnabled(agent, c.env, c.req.url)) {
      return restError(
        new A2AError(
          "MethodNotFound",
          `No endpoint at ${c.req.path} (the inspector is off: set ${INSPECTOR_VAR}="true" or the inspector option)`,
        ),
      );
    }
    return new Response(body, { headers: { "Content-Type": type, ...SECURITY_HEADERS } });
  };
}

/**
 * The task steps route's gate: not there while the inspector is off, before any
 * credential is asked.
 */
export function inspectorGate(agent: Agent<unknown>): MiddlewareHandler {
  return async (c, next) =>
    inspectorEnabled(agent, c.env, c.req.url)
      ? next()
      : restError(new A2AError("MethodNotFound", `No endpoint at ${c.req.path}`));
}
