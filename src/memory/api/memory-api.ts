import type { Context } from "hono";
import * as z from "zod";
import type { Agent } from "../../agent/definition";
import type { RouteEntry, RouteGuards } from "../../agent/routes";
import { A2AError } from "../../protocol/errors";
import {
  MemoryEntityInput,
  MemoryKind,
  MemoryListQuery,
  RememberQuery,
} from "../../protocol/memory";
import type { AuthVariables } from "../../worker/auth";
import { readJson } from "../../worker/body";
import { restError, toA2AError } from "../../worker/errors";
import type { ScopeVariables } from "../../worker/route-scope";
import type { ResolvedMemoryOptions } from "../base/options";
import { scopeKeyOf } from "../base/scope-key";
import { type MemoryStore, memoryStore } from "../object/memory-store";

/** The header carrying the operator's memory key (`memory({ api: { operatorSecret } })`). */
export const OPERATOR_HEADER = "X-Edgelink-Memory-Operator";

type Vars = { Bindings: object; Variables: AuthVariables & ScopeVariables };

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

/**
 * Body parsing that names the bad field (`body.<path>`) with a 400, never a 500. Only a
 * JSON media type is read (415 otherwise, as the route's guard answers first), so no
 * cross-site form can post here.
 */
async function body<T>(c: Context<Vars>, schema: z.ZodType<T>): Promise<T> {
  return parse(schema, await readJson(c.req.raw), "body");
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
 * their conversation's with `?contextId=`, verified by the route's guards before this
 * runs). The operator, with the key from the `operatorSecret` secret in the operator
 * header, names any scope key of the caller's tenant with `?scope=`; a wrong key is
 * refused, never treated as a user.
 */
async function resolveStore(
  c: Context<Vars>,
  options: ResolvedMemoryOptions & { api: object },
): Promise<MemoryStore> {
  const scope = c.get("scope");
  const offered = c.req.header(OPERATOR_HEADER);
  if (offered !== undefined) {
    const secret = (c.env as Record<string, unknown>)[options.api.operatorSecret];
    if (typeof secret !== "string" || secret.length < 16 || !(await sameSecret(offered, secret))) {
      throw new A2AError("PermissionDenied", "The memory operator key is wrong or not configured");
    }
    const key = c.req.query("scope") ?? "";
    if (key === "" || key.length > 1_024) {
      throw new A2AError("InvalidParams", "The operator names a memory with ?scope=", {}, [
        { field: "query.scope", description: "required, at most 1024 characters" },
      ]);
    }
    return memoryStore(c.env, options.binding, scope.tenant, key);
  }
  const { tenant, owner } = scope;
  const named = c.req.query("contextId");
  // Verified already by the route's guard (the same answer, remembered for this request).
  const contextId = named === undefined ? undefined : ((await scope.contextId(named)) as string);
  const key = scopeKeyOf(options.scope, { tenant, owner, contextId });
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

/** A memory route: the caller's own memory (or the operator's named one). */
const MEMORY_GUARDS: RouteGuards = {
  auth: "caller-or-operator",
  scoping: "owner",
  contextIds: "none",
  rateLimit: "path",
  body: "none",
  cors: "agent",
  trace: true,
};

type Handle = (c: Context<Vars>, store: MemoryStore) => Promise<unknown>;
type MemoryRoute = RouteEntry<{ readonly agent: Agent<unknown> }>;

/**
 * The memory routes of the agent's route table, each under `/` and `/{tenant}`, behind
 * the agent's authentication and rate limits: `GET /memory` lists
 * (`?kind=fact|entity|goal|strategy|turn`, `query`, `pageSize`, `pageToken`,
 * `includeSuperseded`), `POST /memory/search` recalls a bundle, `POST /memory/facts` adds a
 * fact, `PUT /memory/facts/{id}` corrects one (the old one is superseded, never recalled
 * again), `POST /memory/goals` adds a goal, `POST /memory/entities` names or
 * describes an entity (merged by name or alias), `GET` and `DELETE /memory/{kind}/{id}` read and
 * delete one item, `DELETE /memory` erases everything. None when the API is not served.
 */
export function memoryRoutes(options: ResolvedMemoryOptions): MemoryRoute[] {
  const api = options.api;
  if (!api) return [];
  const withApi = { ...options, api };
  const route = (
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: string,
    summary: string,
    handle: Handle,
  ): MemoryRoute => {
    const hasBody = method === "POST" || method === "PUT";
    const use = method === "GET" || path === "/memory/search" ? "read" : "write";
    return {
      id: `memory ${method} ${path}`,
      methods: [method],
      paths: [path, `/:tenant${path}`],
      guards: {
        ...MEMORY_GUARDS,
        // A conversation's memory is named with ?contextId=: the caller's, or refused.
        contextIds: { in: "query", name: "contextId", field: "query.contextId", use },
        body: hasBody ? "json" : "none",
      },
      summary,
      serve: () => async (c: Context<Vars>) => {
        try {
          const store = await resolveStore(c, withApi);
          return c.json((await handle(c, store)) as object);
        } catch (error) {
          return restError(toA2AError(error));
        }
      },
    };
  };
  const kindOf = (c: Context<Vars>) => parse(MemoryKind, c.req.param("kind"), "path.kind");
  const idOf = (c: Context<Vars>) =>
    parse(z.string().min(1).max(512), c.req.param("id"), "path.id");

  return [
    route("GET", "/memory", "Lists the caller's memory by kind", (c, store) =>
      store.list(listQuery(new URL(c.req.url))),
    ),
    route("POST", "/memory/search", "Recalls a bundle for a query", async (c, store) =>
      store.remember(await body(c, RememberQuery)),
    ),
    route("POST", "/memory/facts", "Adds a fact the user states", async (c, store) => {
      const fact = await body(c, FactBody);
      return store.apply([{ op: "add_fact", source: "user_stated", ...fact }]);
    }),
    route(
      "PUT",
      "/memory/facts/:id",
      "Corrects a fact (the old one is superseded)",
      async (c, store) => {
        const fact = await body(c, FactBody);
        const id = idOf(c);
        // Only a fact of this memory can be corrected; the store refuses others as data.
        if (!(await store.get("fact", id))) throw notFound("fact", id);
        return store.apply([{ op: "supersede_fact", id, source: "user_stated", ...fact }]);
      },
    ),
    route("POST", "/memory/goals", "Adds a goal", async (c, store) =>
      store.apply([{ op: "set_goal", ...(await body(c, GoalBody)) }]),
    ),
    route(
      "POST",
      "/memory/entities",
      "Names or describes an entity (merged by name or alias)",
      async (c, store) =>
        store.apply([{ op: "upsert_entity", ...(await body(c, MemoryEntityInput)) }]),
    ),
    route("GET", "/memory/:kind/:id", "Reads one item", async (c, store) => {
      const item = await store.get(kindOf(c), idOf(c));
      if (!item) throw notFound(c.req.param("kind") ?? "", c.req.param("id") ?? "");
      return item;
    }),
    route("DELETE", "/memory/:kind/:id", "Deletes one item", async (c, store) => {
      if (!(await store.remove(kindOf(c), idOf(c))))
        throw notFound(c.req.param("kind") ?? "", c.req.param("id") ?? "");
      return {};
    }),
    route("DELETE", "/memory", "Erases the caller's memory", (_c, store) => store.erase()),
  ];
}

function notFound(kind: string, id: string): A2AError {
  return new A2AError("MemoryNotFound", `No ${kind} ${id} in this memory`);
}
