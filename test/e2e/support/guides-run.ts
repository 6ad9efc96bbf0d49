/**
 * The guides' code, run as a user pastes it into a project made by `edgelink init`: each
 * block that forms a Worker is written verbatim as a module of one copy of that project,
 * and one `wrangler dev` serves them all behind a small router (one workerd, one bundle:
 * a `wrangler dev` per guide would cost about 3 CPU-s each). The router is test plumbing,
 * not a guide: it mounts each guide under `/<slug>` and gives its Durable Objects bindings
 * of their own, so the guides' agents share nothing but the isolate.
 *
 * The client blocks (code that runs in Node and calls an agent) are transpiled as they
 * are, their `connect("…")` URL pointed at the guide Worker they talk to, and run one after
 * the other in one Node process of the project, with its installed `edgelink`.
 *
 * Model calls go to a fake OpenAI on loopback (`OPENAI_BASE_URL`): it calls the tool that
 * fits the last user message (`add` for two numbers, `refund` for a refund, `get_capital`
 * for "the capital of X", `time` for the time) and answers a tool's result with that
 * result's text.
 */
// @ts-nocheck -- Node-only test support (the repository has no @types/node).
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import ts from "typescript";
import { type DevServer, freePort, startDev } from "./dev-server";
import { type DocBlock, extractBlocks } from "./doc-blocks";

/** A block that is a Worker's whole module, served under `/<slug>`. */
export interface GuideWorker {
  slug: string;
  file: string;
  /** A string only this block of the file contains. */
  find: string;
  /**
   * "fetch": the router calls the module's default export's fetch with the path under
   * `/<slug>` (for a wrapped handler, such as tracing's, whose `.app` would bypass it).
   * Otherwise its Hono app is mounted, so its card names `/<slug>` as its URL.
   */
  mount?: "fetch";
  /** Not an agent (a webhook receiver): it has no Durable Objects to export or bind. */
  plain?: true;
  /**
   * Service bindings it expects, each to another guide's Worker (binding name → slug):
   * the router gives it a Fetcher that calls that guide through the router's own binding.
   */
  peers?: Record<string, string>;
}

/** A block that runs in Node and talks to the guide Worker `target`. */
export interface GuideClient {
  name: string;
  file: string;
  find: string;
  target: string;
}

export const WORKERS: GuideWorker[] = [
  { slug: "readme", file: "README.md", find: 'name: "Assistant"' },
  { slug: "new-project", file: "docs/guides/new-project.md", find: 'name: "Echo"' },
  { slug: "own-worker", file: "docs/guides/your-own-worker.md", find: 'handler: () => "Hello!"' },
  { slug: "getting-started", file: "docs/guides/getting-started.md", find: "src/my-agent.ts" },
  { slug: "inspector", file: "docs/guides/inspector.md", find: "inspector: false" },
  { slug: "compose", file: "docs/guides/compose-with-hono.md", find: "app.use(cors())" },
  { slug: "endpoints", file: "docs/guides/compose-with-hono.md", find: "endpoint({" },
  { slug: "model-agents", file: "docs/guides/model-agents.md", find: "modelSettings:" },
  { slug: "model-prompt", file: "docs/guides/model-agents.md", find: "toolsPrompt: true" },
  { slug: "model-strategy", file: "docs/guides/model-agents.md", find: "withStrategy(openai" },
  { slug: "tools", file: "docs/guides/tools.md", find: "const weather = tool(" },
  { slug: "refunds-tool", file: "docs/guides/approvals.md", find: "approvalTimeoutMs:" },
  { slug: "refunds-handler", file: "docs/guides/approvals.md", find: 'arguments: { order: "A-17"' },
  { slug: "memory-model", file: "docs/guides/memory.md", find: "extract: true, tools: true" },
  { slug: "memory-handler", file: "docs/guides/memory.md", find: '"Remember: "' },
  { slug: "memory-turns", file: "docs/guides/memory.md", find: "record: true" },
  { slug: "push-agent", file: "docs/guides/push.md", find: "maxAttempts: 12" },
  {
    slug: "front-desk",
    file: "docs/guides/approvals.md",
    find: 'name: "Front desk"',
    peers: { REFUNDS: "refunds-tool" },
  },
  {
    slug: "editor",
    file: "docs/guides/calling-other-agents.md",
    find: 'name: "Editor"',
    peers: { WRITER: "new-project" },
  },
  { slug: "mcp", file: "docs/guides/mcp.md", find: "mcpServers({" },
  {
    slug: "push-receiver",
    file: "docs/guides/push.md",
    find: "verifyPushNotification",
    mount: "fetch",
    plain: true,
  },
  // Its `instrument()` wraps global fetch for the isolate once called: its test runs last.
  { slug: "tracing", file: "docs/guides/tracing.md", find: "Traced agent", mount: "fetch" },
];

export const CLIENTS: GuideClient[] = [
  { name: "readme-client", file: "README.md", find: "What is 2+40?", target: "readme" },
  {
    name: "approvals-client-tool",
    file: "docs/guides/approvals.md",
    find: 'agent.send("Refund order A-17',
    target: "refunds-tool",
  },
  {
    name: "approvals-client-handler",
    file: "docs/guides/approvals.md",
    find: 'agent.send("Refund order A-17',
    target: "refunds-handler",
  },
  {
    name: "approvals-client-front-desk",
    file: "docs/guides/approvals.md",
    find: 'agent.send("Refund order A-17',
    target: "front-desk",
  },
  {
    name: "memory-client",
    file: "docs/guides/memory.md",
    find: "agent.memory.add(",
    target: "memory-model",
  },
];

/**
 * The API keys of the guides with `auth: { apiKeys: { secret: "AGENT_API_KEYS" } }`, as
 * the auth guide puts them in the secret: each key a subject of its own (a user).
 */
export const API_KEYS = { "k-ada": { subject: "ada" }, "k-bob": { subject: "bob" } };
/** Where the push guide's receiver is served: its `HOOK_URL` is this path on the server. */
export const HOOK_PATH = "/push-receiver/a2a";
/** The key the client blocks sign in with (`process.env.AGENT_API_KEY`). */
export const CLIENT_API_KEY = "k-ada";

/**
 * The blocks of README.md and docs/guides that are type-checked only (by the test above
 * this one), each with why it is not run here. A new block must be added to WORKERS,
 * CLIENTS or this list: the test fails on a block in none of them.
 */
export const TYPE_ONLY: { file: string; find: string; why: string }[] = [
  {
    file: "docs/guides/approvals.md",
    find: 'scopes: ["refunds:approve"]',
    why: "an approvers rule shown on its own; its bearer scopes need an identity provider",
  },
  {
    file: "docs/guides/auth-and-tenants.md",
    find: "tenantClaim:",
    why: "a fragment (card and handler come from around it); verifying needs a real JWKS URL",
  },
  {
    file: "docs/guides/calling-other-agents.md",
    find: "TaskNotFoundError",
    why: "talks to this repository's demo agent (npm run dev here), not to an init project",
  },
  {
    file: "docs/guides/calling-other-agents.md",
    find: "search-agent.example.com",
    why: "a fragment: the agents option alone, its peers on the network",
  },
  {
    file: "docs/guides/model-agents.md",
    find: "streamEvents(model",
    why: "a fragment: provider calls outside an agent (env)",
  },
  { file: "docs/guides/model-agents.md", find: "raw: true", why: "a fragment (model, env)" },
  { file: "docs/guides/model-agents.md", find: "fallback(", why: "a model value alone" },
  { file: "docs/guides/model-agents.md", find: "summarizer:", why: "a fragment (card)" },
  { file: "docs/guides/model-agents.md", find: "AgentResult", why: "a type, read from a task" },
  { file: "docs/guides/push.md", find: 'artifactChunks: "each"', why: "a fragment: one option" },
  {
    file: "docs/guides/registry.md",
    find: "defineRegistry(",
    why: "a registry, not an agent: its own tests run it (test/e2e/cli.test.ts)",
  },
  {
    file: "docs/guides/tracing.md",
    find: "agent.EdgelinkMemory!",
    why: "a fragment (card, model)",
  },
];

/** The block of `file` that contains `find`; throws naming it when none or several do. */
export function blockOf(repo: string, file: string, find: string): DocBlock {
  const blocks = extractBlocks(file, readFileSync(join(repo, file), "utf8")).filter((b) =>
    b.code.includes(find),
  );
  if (blocks.length !== 1) {
    throw new Error(`${file}: ${blocks.length} blocks contain ${JSON.stringify(find)}, not one`);
  }
  return blocks[0];
}

/** A recorded call of the fake OpenAI. */
export interface ModelCall {
  tools: string[];
  messages: { role: string; content?: unknown }[];
}

/** The text of a chat message's content (a string or an array of parts). */
const contentText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("")
      : "";

/** The tool call that fits the user's words, among the tools offered; null for none. */
function toolCallFor(text: string, tools: string[]): { name: string; args: object } | null {
  const numbers = [...text.matchAll(/\d+(?:\.\d+)?/g)].map((m) => Number(m[0]));
  if (tools.includes("refund") && /refund/i.test(text)) {
    const order = /[A-Z]-\d+/.exec(text)?.[0] ?? "A-1";
    return { name: "refund", args: { order, amount: numbers.at(-1) ?? 1 } };
  }
  if (tools.includes("add") && numbers.length >= 2) {
    return { name: "add", args: { a: numbers[0], b: numbers[1] } };
  }
  const capital = /capital of (\w+)/i.exec(text);
  if (tools.includes("get_capital") && capital) {
    return { name: "get_capital", args: { country: capital[1] } };
  }
  if (tools.includes("time") && /time/i.test(text)) {
    return { name: "time", args: { timeZone: "Asia/Tokyo" } };
  }
  return null;
}

/** The fake OpenAI Chat Completions API (streaming), on loopback. */
async function startFakeOpenAI(): Promise<{ origin: string; calls: ModelCall[]; server: Server }> {
  const calls: ModelCall[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      const body = JSON.parse(raw || "{}");
      const messages = (body.messages ?? []) as ModelCall["messages"];
      const tools = ((body.tools ?? []) as { function: { name: string } }[]).map(
        (t) => t.function.name,
      );
      calls.push({ tools, messages });
      const chunk = (delta: object, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: `c${calls.length}`, object: "chat.completion.chunk", model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      const last = messages.at(-1);
      const lastUser = [...messages].reverse().find((m) => m.role === "user");
      const call =
        last?.role === "tool" ? null : toolCallFor(contentText(lastUser?.content), tools);
      const events = call
        ? [
            chunk({
              role: "assistant",
              tool_calls: [
                {
                  index: 0,
                  id: `call_${calls.length}`,
                  type: "function",
                  function: { name: call.name, arguments: JSON.stringify(call.args) },
                },
              ],
            }),
            chunk({}, "tool_calls"),
          ]
        : [
            chunk({
              role: "assistant",
              content: last?.role === "tool" ? contentText(last.content) : "ok",
            }),
            chunk({}, "stop"),
          ];
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`${events.join("")}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { origin: `http://127.0.0.1:${port}`, calls, server };
}

const ident = (slug: string) => slug.replace(/-/g, "_");
/** The guides whose Worker exports `EdgelinkMemory` (filled as their blocks are read). */
const withMemory = new Set<string>();
/** The Durable Object classes a guide's Worker exports. */
const kindsOf = (slug: string) =>
  WORKERS.find((w) => w.slug === slug)?.plain
    ? []
    : withMemory.has(slug)
      ? ["Context", "Index", "Memory"]
      : ["Context", "Index"];
const binding = (slug: string) => ident(slug).toUpperCase();

/** The router: `/<slug>/…` to the guide's Worker, each guide's objects bound apart. */
function routerSource(workers: GuideWorker[]): string {
  const slugs = workers.map((w) => w.slug);
  const byFetch = workers.filter((w) => w.mount === "fetch").map((w) => w.slug);
  const imports = slugs.map((s) => `import * as ${ident(s)} from "./guides/${s}";`).join("\n");
  const classes = slugs
    .flatMap((s) =>
      kindsOf(s).map(
        (kind) =>
          `export class ${ident(s)}_${kind} extends ${ident(s)}.Edgelink${kind} {\n  constructor(state, env) { super(state, envFor("${s}", env)); }\n}`,
      ),
    )
    .join("\n");
  return `// Test plumbing, not a guide: serves each guide's Worker under /<slug>.
import { Hono } from "hono";
${imports}

const GUIDES = { ${slugs.map((s) => `"${s}": ${ident(s)}`).join(", ")} };
const BY_FETCH = new Set(${JSON.stringify(byFetch)});
const BINDINGS = { ${slugs.map((s) => `"${s}": "${binding(s)}"`).join(", ")} };
const PEERS = ${JSON.stringify(Object.fromEntries(workers.filter((w) => w.peers).map((w) => [w.slug, w.peers])))};

// A service binding to another guide: through SELF (this Worker), under that guide's path.
// One per name, made once: a delegation finds its binding among env's values by identity.
const fetchers = new Map();
function peerOf(slug, name, env) {
  const key = slug + "/" + name;
  if (!fetchers.has(key)) {
    const prefix = "/" + PEERS[slug][name];
    fetchers.set(key, {
      fetch(input, init) {
        const request = new Request(input, init);
        const url = new URL(request.url);
        if (url.pathname !== prefix && !url.pathname.startsWith(prefix + "/")) {
          url.pathname = prefix + url.pathname;
        }
        return env.SELF.fetch(new Request(url, request));
      },
    });
  }
  return fetchers.get(key);
}

// Each guide sees its own objects under the names wrangler.toml gives them in a project.
function envFor(slug, env) {
  const b = BINDINGS[slug];
  const peers = Object.fromEntries(
    Object.keys(PEERS[slug] ?? {}).map((name) => [name, peerOf(slug, name, env)]),
  );
  return {
    ...env,
    ...peers,
    EDGELINK_CONTEXT: env[b + "_CONTEXT"],
    EDGELINK_INDEX: env[b + "_INDEX"],
    EDGELINK_MEMORY: env[b + "_MEMORY"],
  };
}
${classes}

const mounted = new Map();
function appFor(slug) {
  let app = mounted.get(slug);
  if (!app) {
    const worker = GUIDES[slug].default;
    // A Hono app (an agent's .app, or one of the guide's own) keeps its base path, so
    // agent cards name /<slug>/ as their URL; anything else gets the path without it.
    const hono = BY_FETCH.has(slug)
      ? undefined
      : (worker.app ?? (typeof worker.route === "function" ? worker : undefined));
    app = hono
      ? new Hono().route("/" + slug, hono)
      : new Hono().mount("/" + slug, (request, env, ctx) => worker.fetch(request, env, ctx));
    mounted.set(slug, app);
  }
  return app;
}

export default {
  fetch(request, env, ctx) {
    const slug = new URL(request.url).pathname.split("/")[1];
    if (!(slug in GUIDES)) return new Response("no such guide: " + slug, { status: 404 });
    return appFor(slug).fetch(request, envFor(slug, env), ctx);
  },
};
`;
}

function wranglerToml(echoToml: string, slugs: string[]): string {
  const date = /compatibility_date = "([\d-]+)"/.exec(echoToml)?.[1];
  const classes = slugs.flatMap((s) => kindsOf(s).map((kind) => `${ident(s)}_${kind}`));
  return `name = "guides"
main = "src/router.js"
compatibility_date = "${date}"
compatibility_flags = ["nodejs_compat"]

[vars]
GREETING = "Hello"

[[services]]
binding = "SELF"
service = "guides"

${slugs
  .flatMap((s) =>
    kindsOf(s).map(
      (kind) =>
        `[[durable_objects.bindings]]\nname = "${binding(s)}_${kind.toUpperCase()}"\nclass_name = "${ident(s)}_${kind}"\n`,
    ),
  )
  .join("\n")}
[[migrations]]
tag = "v1"
new_sqlite_classes = ${JSON.stringify(classes)}
`;
}

export interface GuidesRun {
  server: DevServer;
  /** `http://127.0.0.1:<port>/<slug>` */
  url(slug: string): string;
  /** Every call the fake OpenAI answered, in order. */
  modelCalls: ModelCall[];
  /** Runs the client blocks in one Node process; what each printed, or its error. */
  runClients(): Promise<Record<string, { out: string; error?: string }>>;
  close(): Promise<void>;
}

function nodeRun(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ stdout, stderr, code: error ? 1 : 0 }),
    );
  });
}

/**
 * Writes the guides' project beside `echo` (sharing its node_modules), starts the fake
 * OpenAI and one `wrangler dev` serving every guide Worker.
 */
export async function startGuides(
  repo: string,
  root: string,
  echo: string,
  vars: Record<string, string> = {},
): Promise<GuidesRun> {
  const model = await startFakeOpenAI();
  // Chosen now: the push receiver's vars name URLs of this very server.
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const dir = join(root, "guides");
  mkdirSync(join(dir, "src/guides"), { recursive: true });
  cpSync(join(echo, "package.json"), join(dir, "package.json"));
  symlinkSync(join(echo, "node_modules"), join(dir, "node_modules"));
  const slugs = WORKERS.map((w) => w.slug);
  for (const w of WORKERS) {
    const code = blockOf(repo, w.file, w.find).code;
    if (w.plain) {
      writeFileSync(join(dir, "src/guides", `${w.slug}.ts`), code);
      continue;
    }
    // wrangler.toml of a new project binds these classes by name: a module that does not
    // export them does not start (wrangler names them), so say which guide it is.
    for (const name of ["EdgelinkContext", "EdgelinkIndex"]) {
      if (!new RegExp(`export (const \\{[^}]*\\b${name}\\b|const ${name}\\b)`).test(code)) {
        throw new Error(
          `${w.file}: the block with ${JSON.stringify(w.find)} does not export ${name}`,
        );
      }
    }
    if (/export const \{[^}]*\bEdgelinkMemory\b/.test(code)) withMemory.add(w.slug);
    writeFileSync(join(dir, "src/guides", `${w.slug}.ts`), code);
  }
  writeFileSync(join(dir, "src/router.js"), routerSource(WORKERS));
  writeFileSync(
    join(dir, "wrangler.toml"),
    wranglerToml(readFileSync(join(echo, "wrangler.toml"), "utf8"), slugs),
  );
  const idKey = /^EDGELINK_ID_KEY=.*$/m.exec(readFileSync(join(echo, ".dev.vars"), "utf8"))?.[0];
  writeFileSync(
    join(dir, ".dev.vars"),
    [
      idKey,
      "OPENAI_API_KEY=sk-test",
      `OPENAI_BASE_URL=${model.origin}/v1`,
      `AGENT_API_KEYS=${JSON.stringify(API_KEYS)}`,
      `AGENT_JWKS_URL=${origin}/push-agent/.well-known/jwks.json`,
      `HOOK_URL=${origin}${HOOK_PATH}`,
      `TITLES_URL=${origin}/own-worker`,
      ...Object.entries(vars).map(([k, v]) => `${k}=${v}`),
      "",
    ].join("\n"),
  );
  // WRANGLER_LOG at wrangler's default, "log": the guides' console.log lines are printed.
  const server = await startDev({
    cwd: dir,
    command: ["npm", "run", "dev", "--"],
    port,
    env: { WRANGLER_LOG: "log" },
  });
  const url = (slug: string) => `${server.baseUrl}/${slug}`;

  const runClients = async () => {
    const names: string[] = [];
    for (const c of CLIENTS) {
      const code = blockOf(repo, c.file, c.find).code.replace(
        /connect\("[^"]*"/,
        `connect(${JSON.stringify(url(c.target))}`,
      );
      const js = ts.transpileModule(code, {
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
      }).outputText;
      writeFileSync(join(dir, `${c.name}.mjs`), js);
      names.push(c.name);
    }
    // One process: each block imported in turn, its output between markers.
    writeFileSync(
      join(dir, "clients.mjs"),
      `for (const name of ${JSON.stringify(names)}) {
  console.log("@@start " + name);
  try { await import("./" + name + ".mjs"); }
  catch (error) { console.log("@@error " + (error?.stack ?? String(error)).replace(/\\n/g, " | ")); }
}
console.log("@@start end");
`,
    );
    const ran = await nodeRun(join(dir, "node_modules/.bin/node"), ["clients.mjs"], dir, {
      AGENT_API_KEY: CLIENT_API_KEY,
    });
    const results: Record<string, { out: string; error?: string }> = {};
    const parts = ran.stdout.split(/^@@start /m).slice(1);
    for (const part of parts) {
      const [name, ...lines] = part.split("\n");
      if (name === "end") continue;
      const error = lines.find((l) => l.startsWith("@@error "))?.slice("@@error ".length);
      results[name] = { out: lines.filter((l) => !l.startsWith("@@error ")).join("\n"), error };
    }
    if (parts.length !== names.length + 1) {
      throw new Error(`the client blocks' process stopped early:\n${ran.stdout}\n${ran.stderr}`);
    }
    return results;
  };

  return {
    server,
    url,
    modelCalls: model.calls,
    runClients,
    close: async () => {
      await server.stop();
      await new Promise((resolve) => model.server.close(() => resolve(undefined)));
    },
  };
}
