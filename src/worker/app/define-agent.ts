import { type DurableObject, env as loadedEnv } from "cloudflare:workers";
import type { Hono } from "hono";
import type { AgentConfig } from "../../agent/agent-config";
import { type Agent, resolveAgent } from "../../agent/definition";
import { ContextObject } from "../../conversation/context-object";
import { IndexObject } from "../../index/index-object";
import { logContentFrom, setLogContent } from "../../telemetry/log";
import type { AuthVariables } from "../auth";
import { checkRateLimitBindings } from "../rate-limit";
import { createApp } from "./app";

/** What `defineAgent` returns: a Worker's default export plus its Durable Object classes. */
export interface EdgelinkWorker<Env extends object> {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response>;
  /**
   * Export it under the class name wrangler.toml binds as `EDGELINK_CONTEXT`. A concrete
   * class, so wrappers that take a Durable Object class (tracing's `instrumentDO`) take it.
   */
  EdgelinkContext: new (
    ctx: DurableObjectState,
    env: Env,
  ) => ContextObject<Env>;
  /** Export it under the class name wrangler.toml binds as `EDGELINK_INDEX`. */
  EdgelinkIndex: typeof IndexObject<Env>;
  /**
   * With `memory`, export it under the class name wrangler.toml binds as
   * `EDGELINK_MEMORY` (a SQLite class); undefined when memory is off.
   */
  EdgelinkMemory: (new (ctx: DurableObjectState, env: Env) => DurableObject<Env>) | undefined;
  /**
   * The Hono app serving the card, JSON-RPC and HTTP+JSON. Mount it in your own app,
   * after your middleware: `app.use(cors()); app.route("/agent", edgelink.app)`. Under a
   * base path the card advertises URLs under it, and tenants are `/agent/{tenant}/...`.
   */
  app: Hono<{ Bindings: Env; Variables: AuthVariables }>;
  /** The validated definition, for tests and tooling. */
  agent: Agent<Env>;
}

/**
 * Defines an agent and everything that serves it: the Worker and its Durable Objects.
 *
 * The composition root: it wires `agent/` into the edge (`worker/`) and the objects
 * (`conversation/`, `index/`), which is why it lives in `worker/` rather than `agent/`.
 *
 * @example
 * ```ts
 * import { defineAgent } from "edgelink";
 *
 * const worker = defineAgent({
 *   card: { name: "Greeter", description: "Says hello" },
 *   handler: (ctx) => `Hello, ${ctx.message.parts.length} part(s) received!`,
 * });
 * export const { EdgelinkContext, EdgelinkIndex } = worker;
 * export default worker;
 * ```
 *
 * @example Inside your own Hono app, under `/agent`:
 * ```ts
 * import { Hono } from "hono";
 * import { cors } from "hono/cors";
 *
 * const app = new Hono();
 * app.use(cors()); // runs before Edgelink's routes
 * app.route("/agent", worker.app); // card at /agent/.well-known/agent-card.json
 * app.get("/health", (c) => c.text("ok")); // yours, beside it
 * export default app;
 * ```
 */
export function defineAgent<Env extends object = Record<string, unknown>>(
  config: AgentConfig<Env>,
): EdgelinkWorker<Env> {
  const agent = resolveAgent(config);
  // The Worker and its objects load this module alike: both log by the operator's choice.
  setLogContent(logContentFrom(loadedEnv));
  // A limiter binding named in `rateLimit` and missing stops the Worker from starting
  // (wrangler dev, deploy), rather than failing its first requests.
  checkRateLimitBindings(agent, loadedEnv);
  const app = createApp(agent);

  class EdgelinkContext extends ContextObject<Env> {
    protected override get agent(): Agent<Env> {
      return agent;
    }
  }
  class EdgelinkIndex extends IndexObject<Env> {}

  return {
    fetch: (request, env, ctx) => app.fetch(request, env, ctx),
    app,
    EdgelinkContext,
    EdgelinkIndex,
    EdgelinkMemory: agent.memory?.objectClass() as EdgelinkWorker<Env>["EdgelinkMemory"],
    agent,
  };
}
