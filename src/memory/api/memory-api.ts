import type { Context, Hono, MiddlewareHandler } from "hono";
import * as z from "zod";
import { ownerOf } from "../../agent/auth";
import { A2AError } from "../../protocol/errors";
import { MemoryKind, MemoryListQuery, RememberQuery } from "../../protocol/memory";
import { type AuthVariables, tenantFor } from "../../worker/auth";
import { restError, toA2AError } from "../../worker/errors";
import { requestedTenant } from "../../worker/tenant";
import type { ResolvedMemoryOptions } from "../base/options";
import { scopeKeyOf } from "../base/scope-key";
import { type MemoryStore, memoryStore } from "../object/memory-store";

/** The header carrying the operator's memory key (`memory({ api: { operatorSecret } })`). */
export const OPERATOR_HEADER = "X-Edgelink-Memory-Operator";

type Vars = { Bindings: object; Variables: AuthVariables };

const claimFields = {
  claim: z.string().trim().min(1).max(16_384),
  confidence: z.number().min(0).max(1).optional(),
  entities: z.array(z.string().trim().min(1).max(256)).max(32).optional(),
  validFrom: z.iso.datetime({ offset: true }).optional(),
  validTo: z.iso.datetime({ offset: true }).optional(),
};
/** A fact a user or the operator states: stored as `user_stated`. */
const FactBody = z.strictObject(claimFields);
const GoalBody = z.strictObject({
  title: z.string().trim().min(1).max(16_384),
  description: z.string().trim().min(1).max(16_384).optional(),
  priority: z.number().int().min(1).max(5).optional(),
  parentId: z.string().min(1).max(512).optional(),
  deadline: z.iso.datetime({ offset: true }).optional(),
});

/** Body parsing that names the bad field (`body.<path>`) with a 400, never a 500. */
async function body<T>(c: Context<Vars>, schema: z.ZodType<T>): Promise<T> {
  let json: unknown;
  try {
    json = await c.req.json();
  } catch {
    throw new A2AError("JSONParse", "The request body is not JSON");
  }
  return parse(schema, json, "body");
}

function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 8).map((i) => ({
    field: [where, ...i.path.map(String)].join("."),
    description: i.message,
  }));
  throw new A2AError(
    "InvalidParams",
    `Invalid ${where}: ${issues.map((i) => `${i.field}: ${i.description}`).join("; ")}`,
    {},
    issues,
  );
}

/** The list query from the URL: `?kind=fact&query=...&pageSize=20&pageToken=...`. */
function listQuery(url: URL): MemoryListQuery {
  const q = Object.fromEntries(url.searchParams);
  const size = q.pageSize === undefined ? undefined : Number(q.pageSize);
  return parse(
    MemoryListQuery,
    {
      kind: q.kind ?? "fact",
      ...(q.query !== undefined ? { query: q.query } : {}),
      ...(size !== undefined ? { pageSize: size } : {}),
      ...(q.pageToken !== undefined ? { pageToken: q.pageToken } : {}),
      ...(q.includeSuperseded !== undefined
        ? { includeSuperseded: q.includeSuperseded === "true" }
        : {}),
    },
    "query",
  );
}

/**
 * Whether the offered operator key is the secret, compared in constant time (WebCrypto's
 * `timingSafeEqual` over SHA-256 digests, which have equal lengths whatever the inputs).
 */
async function sameSecret(offered: string, secret: string): Promise<boolean> {
  const digest = (text: string) => crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  const [a, b] = await Promise.all([digest(offered), digest(secret)]);
  return crypto.subtle.timingSafeEqual(a, b);
}

/**
 * Whose memory a request reaches. A user reaches only their own scope (their owner, or
 * their conversation's with `?contextId=`). The operator, with the key from the
 * `operatorSecret` secret in the operator header, names any scope key of the tenant with
 * `?scope=`; a wrong key is refused, never treated as a user.
 */
async function resolveStore(
  c: Context<Vars>,
  options: ResolvedMemoryOptions & { api: object },
): Promise<MemoryStore> {
  const principal = c.get("principal");
  const url = new URL(c.req.url);
  const offered = c.req.header(OPERATOR_HEADER);
  const requested = requestedTenant(c.req.param("tenant"), "tenant");
  if (offered !== undefined) {
    const secret = (c.env as Record<string, unknown>)[options.api.operatorSecret];
    if (typeof secret !== "string" || secret.length < 16 || !(await sameSecret(offered, secret))) {
      throw new A2AError("PermissionDenied", "The memory operator key is wrong or not configured");
    }
    const key = url.searchParams.get("scope") ?? "";
    if (key === "" || key.length > 1_024) {
      throw new A2AError("InvalidParams", "The operator names a memory with ?scope=", {}, [
        { field: "query.scope", description: "required, at most 1024 characters" },
      ]);
    }
    return memoryStore(c.env, options.binding, requested, key);
  }
  const tenant = tenantFor(principal, requested);
  const contextId = url.searchParams.get("contextId") ?? undefined;
  if (contextId !== undefined && contextId.length > 512) {
    throw new A2AError("InvalidParams", "contextId is too long", {}, [
      { field: "query.contextId", description: "at most 512 characters" },
    ]);
  }
  const key = scopeKeyOf(options.scope, { tenant, owner: ownerOf(principal), contextId });
  if (typeof key !== "string" || key === "") {
    throw new A2AError(
      "PermissionDenied",
      options.scope === "context" && contextId === undefined
        ? "Memory is kept per conversation: name it with ?contextId="
        : "Only an authenticated caller has a memory",
    );
  }
  return memoryStore(c.env, options.binding, tenant, key);
}

/**
 * The memory routes, each under `/` and `/{tenant}`, behind the agent's authentication and
 * rate limits: `GET /memory` lists (`?kind=fact|entity|goal|strategy|turn`, `query`,
 * `pageSize`, `pageToken`, `includeSuperseded`), `POST /memory/search` recalls a bundle,
 * `POST /memory/facts` adds a fact, `PUT /memory/facts/{id}` corrects one (the old one is
 * superseded, never recalled again), `POST /memory/goals` adds a goal, `GET` and `DELETE
 * /memory/{kind}/{id}` read and delete one item, `DELETE /memory` erases everything.
 */
export function mountMemoryApi(
  app: Hono<Vars>,
  options: ResolvedMemoryOptions,
  guards: { any: MiddlewareHandler<Vars>[]; body: MiddlewareHandler<Vars>[] },
): void {
  const api = options.api;
  if (!api) return;
  const withApi = { ...options, api };
  const route = (
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: string,
    hasBody: boolean,
    handle: (c: Context<Vars>, store: MemoryStore) => Promise<unknown>,
  ) => {
    const run = async (c: Context<Vars>) => {
      try {
        const store = await resolveStore(c, withApi);
        return c.json((await handle(c, store)) as object);
      } catch (error) {
        return restError(toA2AError(error));
      }
    };
    for (const prefix of ["", "/:tenant"]) {
      app.on(method, [prefix + path], ...(hasBody ? guards.body : guards.any), run);
    }
  };
  const kindOf = (c: Context<Vars>) => parse(MemoryKind, c.req.param("kind"), "path.kind");
  const idOf = (c: Context<Vars>) =>
    parse(z.string().min(1).max(512), c.req.param("id"), "path.id");

  route("GET", "/memory", false, (c, store) => store.list(listQuery(new URL(c.req.url))));
  route("POST", "/memory/search", true, async (c, store) =>
    store.remember(await body(c, RememberQuery)),
  );
  route("POST", "/memory/facts", true, async (c, store) => {
    const fact = await body(c, FactBody);
    return store.apply([{ op: "add_fact", source: "user_stated", ...fact }]);
  });
  route("PUT", "/memory/facts/:id", true, async (c, store) => {
    const fact = await body(c, FactBody);
    const id = idOf(c);
    // Only a fact of this memory can be corrected; the store refuses others as data.
    if (!(await store.get("fact", id))) throw notFound("fact", id);
    return store.apply([{ op: "supersede_fact", id, source: "user_stated", ...fact }]);
  });
  route("POST", "/memory/goals", true, async (c, store) =>
    store.apply([{ op: "set_goal", ...(await body(c, GoalBody)) }]),
  );
  route("GET", "/memory/:kind/:id", false, async (c, store) => {
    const item = await store.get(kindOf(c), idOf(c));
    if (!item) throw notFound(c.req.param("kind") ?? "", c.req.param("id") ?? "");
    return item;
  });
  route("DELETE", "/memory/:kind/:id", false, async (c, store) => {
    if (!(await store.remove(kindOf(c), idOf(c))))
      throw notFound(c.req.param("kind") ?? "", c.req.param("id") ?? "");
    return {};
  });
  route("DELETE", "/memory", false, (_c, store) => store.erase());
}

function notFound(kind: string, id: string): A2AError {
  return new A2AError("MemoryNotFound", `No ${kind} ${id} in this memory`);
}
