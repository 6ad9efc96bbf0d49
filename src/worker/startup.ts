import type { Context, MiddlewareHandler, Next } from "hono";
import { basePath } from "hono/route";
import type { Agent } from "../agent/definition";
import { A2AError } from "../protocol/errors";
import { ID_KEY_BINDING, ID_KEY_FIX, indexObjectName, isLocal } from "../storage/ids";
import type { StorageReport } from "../storage/schema-version";
import { logEvent } from "../telemetry/log";
import { jsonRpcError, restError } from "./errors";

/** The shortest `EDGELINK_ID_KEY` accepted (the ids' keys are derived from it). */
const MIN_ID_KEY_LENGTH = 32;
/** The conversation object the storage check asks: one name, never written, so it never holds data. */
const PROBE_NAME = "edgelink:startup-check";
/** The compatibility date Edgelink is tested with (its SQLite has what the objects use). */
const TESTED_COMPATIBILITY_DATE = "2026-11-01";

interface NamespaceLike {
  idFromName(name: string): unknown;
  get(id: unknown): { storageReport(): Promise<StorageReport> };
}

function isNamespace(value: unknown): value is NamespaceLike {
  const ns = value as Partial<NamespaceLike> | null;
  return (
    typeof ns === "object" &&
    ns !== null &&
    typeof ns.idFromName === "function" &&
    typeof ns.get === "function"
  );
}

/** What the bindings must look like in wrangler.toml, for the messages. */
function bindingHint(binding: string, className: string): string {
  return `[[durable_objects.bindings]] name = "${binding}" class_name = "${className}" to wrangler.toml`;
}

/** The outcome of asking one binding's object about its storage. */
type BindingOutcome =
  | { kind: "ok" }
  | { kind: "refused"; refused: string }
  | { kind: "problem"; problem: string; transient: boolean }
  | { kind: "noSqlite" }
  | { kind: "noJsonb"; detail: string | null };

/** One Durable Object binding, its storage asked through `storageReport`. */
async function checkBinding(
  env: Record<string, unknown>,
  binding: string,
  className: string,
  probe: string,
): Promise<BindingOutcome> {
  const ns = env[binding];
  if (ns === undefined) {
    return {
      kind: "problem",
      problem: `${binding} is not bound: add ${bindingHint(binding, className)}`,
      transient: false,
    };
  }
  if (!isNamespace(ns)) {
    return {
      kind: "problem",
      problem: `${binding} is not a Durable Object binding: add ${bindingHint(binding, className)}`,
      transient: false,
    };
  }
  let report: StorageReport;
  try {
    report = await ns.get(ns.idFromName(probe)).storageReport();
  } catch (error) {
    const detail = String((error as Error)?.message ?? error);
    // A class without SQLite storage fails in its constructor, at its first `storage.sql`
    // ("SQL is not enabled for this Durable Object class").
    if (/SQL is not enabled/i.test(detail)) return { kind: "noSqlite" };
    // Before 2024-04-03 a stub has no RPC methods: no Edgelink object can be called.
    if (/storageReport is not a function/.test(detail)) {
      return {
        kind: "problem",
        problem: `${binding}'s Durable Object cannot be called (no RPC before compatibility_date 2024-04-03): set compatibility_date in wrangler.toml to ${TESTED_COMPATIBILITY_DATE} or later`,
        transient: false,
      };
    }
    // Anything else (an overloaded object, a network blip) is checked again next request.
    return {
      kind: "problem",
      problem: `${binding}'s Durable Object did not answer the start-up check: ${detail}`,
      transient: true,
    };
  }
  if (!report.sqlite) return { kind: "noSqlite" };
  if (!report.jsonb) return { kind: "noJsonb", detail: report.detail };
  if (report.refused) return { kind: "refused", refused: report.refused };
  return { kind: "ok" };
}

/** The bindings' problems, the ones both objects share (no migration, old runtime) said once. */
function objectProblems(
  outcomes: { binding: string; className: string; outcome: BindingOutcome }[],
): {
  problems: string[];
  transient: boolean;
} {
  const problems: string[] = [];
  let transient = false;
  for (const { binding, outcome } of outcomes) {
    if (outcome.kind === "problem") {
      problems.push(outcome.problem);
      transient ||= outcome.transient;
    }
    if (outcome.kind === "refused") problems.push(`${binding}: ${outcome.refused}`);
  }
  const noSqlite = outcomes.filter((o) => o.outcome.kind === "noSqlite");
  if (noSqlite.length) {
    const classes = noSqlite.map((o) => `"${o.className}"`).join(", ");
    problems.push(
      `the Durable Object class${noSqlite.length > 1 ? "es" : ""} of ${noSqlite.map((o) => o.binding).join(" and ")} ` +
        `${noSqlite.length > 1 ? "have" : "has"} no SQLite storage: add a [[migrations]] entry with new_sqlite_classes = [${classes}] to wrangler.toml ` +
        "(a class deployed without SQLite cannot be converted: bind a new class)",
    );
  }
  const noJsonb = outcomes.find((o) => o.outcome.kind === "noJsonb")?.outcome;
  if (noJsonb?.kind === "noJsonb") {
    problems.push(
      `the Durable Objects' SQLite has no jsonb_each${noJsonb.detail ? ` (${noJsonb.detail})` : ""}, so task lists would come back empty: ` +
        `run a newer runtime (wrangler ^4.164; older wranglers run an older workerd) with compatibility_date ${TESTED_COMPATIBILITY_DATE} or later in wrangler.toml`,
    );
  }
  return { problems, transient };
}

function idKeyProblems(
  env: Record<string, unknown>,
  local: boolean,
): { problems: string[]; warning: string | null } {
  const key = env[ID_KEY_BINDING];
  const fix = ID_KEY_FIX;
  if (key === undefined) {
    const missing = `${ID_KEY_BINDING} is not set: ids are made with it.`;
    // Under wrangler dev the ids get a generated key kept in the local state (see idKeys).
    if (local)
      return {
        problems: [],
        warning: `${missing} Under wrangler dev a key generated once and kept in .wrangler/state is used, so ids outlive a restart (deleting .wrangler/state forgets them). ${fix}`,
      };
    return { problems: [`${missing} ${fix}`], warning: null };
  }
  if (typeof key !== "string" || key.length < MIN_ID_KEY_LENGTH) {
    return {
      problems: [
        `${ID_KEY_BINDING} must be a secret of at least ${MIN_ID_KEY_LENGTH} characters (it has ${typeof key === "string" ? key.length : `a ${typeof key}`}). ${fix}`,
      ],
      warning: null,
    };
  }
  return { problems: [], warning: null };
}

/** With memory on, its objects' binding must be there (the memory routes and turns use it). */
function memoryProblems<Env>(agent: Agent<Env>, env: Record<string, unknown>): string[] {
  if (!agent.memory) return [];
  const { binding } = agent.memory;
  const hint = `${bindingHint(binding, "EdgelinkMemory")}, export EdgelinkMemory from the Worker and add "EdgelinkMemory" to new_sqlite_classes (memory is on)`;
  if (env[binding] === undefined) return [`${binding} is not bound: add ${hint}`];
  if (!isNamespace(env[binding]))
    return [`${binding} is not a Durable Object binding: add ${hint}`];
  return [];
}

/** The outcome of one check: the problems, and whether to ask again on the next request. */
interface Checked {
  problems: string[];
  transient: boolean;
}

/**
 * Everything that would make this Worker fail later or answer wrong (a missing binding, an
 * object without SQLite, an old runtime, storage left by a development build, the id key, a
 * model's key or base URL), one
 * sentence per problem naming what to fix. Empty when the Worker is configured right.
 */
export async function configurationProblems<Env>(
  agent: Agent<Env>,
  env: Env,
  local: boolean,
): Promise<string[]> {
  return (await check(agent, env as Record<string, unknown>, local)).problems;
}

async function check<Env>(
  agent: Agent<Env>,
  env: Record<string, unknown>,
  local: boolean,
): Promise<Checked> {
  const ids = idKeyProblems(env, local);
  if (ids.warning) logEvent("warn", `edgelink: ${ids.warning}`);
  // The index object asked is the first shard of the default tenant's anonymous caller: an
  // agent without auth writes it with its first tasks, so storage an earlier release left
  // there (a development build's, which is not migrated) is found before any request depends on it.
  const bindings = [
    { binding: agent.bindings.context, className: "EdgelinkContext", probe: PROBE_NAME },
    {
      binding: agent.bindings.index,
      className: "EdgelinkIndex",
      probe: indexObjectName("", "", 0, agent.limits.indexShards),
    },
  ];
  const outcomes = await Promise.all(
    bindings.map(async (b) => ({
      ...b,
      outcome: await checkBinding(env, b.binding, b.className, b.probe),
    })),
  );
  const objects = objectProblems(outcomes);
  return {
    problems: [
      ...objects.problems,
      ...memoryProblems(agent, env),
      ...ids.problems,
      ...(agent.model?.configProblems?.(env) ?? []),
    ],
    transient: objects.transient,
  };
}

/**
 * Middleware that checks the Worker's configuration on its first request, once per isolate
 * (per `env` object), and from then on answers every request with one `Misconfigured` error
 * naming each problem, logged once, rather than failing some requests later and some not.
 */
export function startupCheck<Env extends object>(
  agent: Agent<Env>,
): MiddlewareHandler<{ Bindings: Env }> {
  // By where the request came from: a keyless `wrangler dev` answers its own machine but
  // not a request from elsewhere (a tunnel, another local Worker), and the first request
  // of one kind must not decide for the other.
  const outcomes = {
    local: new WeakMap<object, Promise<Checked>>(),
    remote: new WeakMap<object, Promise<Checked>>(),
  };
  /** Envs whose check found nothing: their requests go on without awaiting it again. */
  const passed = new WeakSet<object>();
  /** Envs whose check passed for this machine's requests only (a keyless `wrangler dev`). */
  const passedLocal = new WeakSet<object>();
  // Not async: once the check passed, a request goes on without a promise of this layer's.
  return (c, next) => {
    const env = (c.env ?? {}) as Env & object;
    if (passed.has(env) || (passedLocal.has(env) && isLocal(c.req.url))) return next();
    return checkFirst(c, next, env);
  };

  async function checkFirst(c: Context<{ Bindings: Env }>, next: Next, env: Env & object) {
    const local = isLocal(c.req.url);
    const known = local ? outcomes.local : outcomes.remote;
    let outcome = known.get(env);
    if (!outcome) {
      outcome = check(agent, env as Record<string, unknown>, local).then((checked) => {
        if (checked.problems.length) {
          logEvent(
            "error",
            `edgelink: this Worker is misconfigured and answers every request with 503:\n- ${checked.problems.join("\n- ")}`,
          );
        }
        if (checked.transient) known.delete(env);
        return checked;
      });
      known.set(env, outcome);
    }
    const { problems, transient } = await outcome;
    if (problems.length === 0) {
      // A keyless local pass holds for this machine's requests only: each is asked where from.
      const localOnly = local && (env as Record<string, unknown>)[ID_KEY_BINDING] === undefined;
      if (!transient) (localOnly ? passedLocal : passed).add(env);
      return next();
    }
    const error = new A2AError(
      "Misconfigured",
      `This agent is misconfigured: ${problems.join("; ")}`,
      { problems: String(problems.length) },
    );
    const base = basePath(c).replace(/\/$/, "");
    const isRpc =
      c.req.method === "POST" && new URL(c.req.url).pathname.replace(/\/$/, "") === base;
    return isRpc ? Response.json(jsonRpcError(null, error), { status: 503 }) : restError(error);
  }
}
