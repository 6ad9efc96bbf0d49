import type { Agent } from "../agent/definition";
import { inspectorSetting } from "../conversation/tasks/task-steps";
import { isLocalUrl } from "./open-warning";

// Here, not in inspector/, because the A2A routes ask it too (task steps are recorded only
// while the inspector is on) and the inspector's routes call the A2A operations.
/**
 * Whether to serve the inspector for this request: the agent's `inspector` option when
 * set; else the `EDGELINK_INSPECTOR` variable ("true"/"false"); else only when the agent
 * is served from localhost, which is what `wrangler dev` does (a deployed Worker never is).
 */
export function inspectorEnabled(agent: Agent<unknown>, env: unknown, url: string): boolean {
  const set = inspectorSetting(agent, env);
  if (set !== null) return set;
  try {
    // Remembered per origin: asked on every call to an object, it parses no URL per request.
    return isLocalUrl(url);
  } catch {
    return false;
  }
}
