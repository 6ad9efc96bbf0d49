import { DEV_VARS_RULES } from "./gitignore";
/**
 * The files `edgelink init` writes. Pure functions of the project's name and the versions
 * to pin, so that the CLI writes them and the tests read them without a file system.
 */

/**
 * The compatibility date of new projects: the one Edgelink is tested with. Older dates lack
 * SQLite features the Durable Objects use (`jsonb_each`), and task lists come back empty.
 */
export const COMPATIBILITY_DATE = "2026-11-01";

/** The two templates: a keyless echo agent, and a model agent with two tools. */
export const TEMPLATES = ["echo", "model"] as const;
export type Template = (typeof TEMPLATES)[number];

/** The versions a new project pins: edgelink's own, and its toolchain's, from its package.json. */
export interface Versions {
  edgelink: string;
  wrangler: string;
  vitest: string;
  vitestPlugin: string;
  workersTypes: string;
  typescript: string;
  node: string;
  hono: string;
  zod: string;
}

export interface ProjectFile {
  path: string;
  content: string;
  /** Secrets: written readable by the owner only. */
  secret?: boolean;
}

/** A Worker name wrangler accepts: lower-case letters, digits and dashes. */
export function workerName(dirName: string): string {
  const name = dirName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 54);
  return name || "my-agent";
}

/** A new `EDGELINK_ID_KEY`: 48 random bytes, base64 (64 characters). */
export function newIdKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(48));
  return btoa(String.fromCharCode(...bytes));
}

function wranglerToml(name: string): string {
  return `# The Worker that serves your agent. Local: npm run dev; deployed: npm run deploy.
name = "${name}"
main = "src/agent.ts"
# Edgelink's Durable Objects need SQLite features of this date or later.
compatibility_date = "${COMPATIBILITY_DATE}"
compatibility_flags = ["nodejs_compat"]

# Conversations and their tasks (one object per conversation).
[[durable_objects.bindings]]
name = "EDGELINK_CONTEXT"
class_name = "EdgelinkContext"

# Each tenant's task index, for ListTasks.
[[durable_objects.bindings]]
name = "EDGELINK_INDEX"
class_name = "EdgelinkIndex"

# Both classes keep their data in SQLite: this must be their first migration.
[[migrations]]
tag = "v1"
new_sqlite_classes = ["EdgelinkContext", "EdgelinkIndex"]
`;
}

const ECHO_AGENT = `import { defineAgent, textOf } from "edgelink";

/**
 * Your agent: it answers every message with its text. Replace the handler with your own
 * (return a string, or use ctx to stream artifacts and ask for input).
 */
const worker = defineAgent({
  card: {
    name: "Echo",
    description: "Answers every message with its text.",
    skills: [{ id: "echo", name: "Echo", description: "Repeats what you send", tags: ["echo"] }],
  },
  handler: (ctx) => \`You said: \${textOf(ctx.message.parts)}\`,
});

// wrangler.toml binds these two Durable Object classes; they must be exported by name.
export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
`;

const MODEL_AGENT = `import { defineAgent, tool } from "edgelink";
import { openai } from "edgelink/providers";
import * as z from "zod";

/**
 * Your agent: an OpenAI model with two tools. The key is the OPENAI_API_KEY secret
 * (locally a line in .dev.vars, see .dev.vars.example; deployed: npx wrangler secret put
 * OPENAI_API_KEY). Without it the Worker answers every request with an error naming it.
 */
const worker = defineAgent({
  card: {
    name: "Assistant",
    description: "A concise assistant that can do arithmetic and tell the time.",
    skills: [{ id: "chat", name: "Chat", description: "Answers questions", tags: ["chat"] }],
  },
  model: openai({ model: "gpt-4o-mini" }),
  instructions: "You are a concise, helpful assistant. Use the tools when they help.",
  modelSettings: { temperature: 0.2, maxTokens: 1024 },
  tools: {
    add: tool({
      description: "Adds two numbers",
      input: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }) => a + b,
    }),
    current_time: tool({
      description: "The current date and time in UTC, ISO 8601",
      input: z.object({}),
      run: () => new Date().toISOString(),
    }),
  },
});

// wrangler.toml binds these two Durable Object classes; they must be exported by name.
export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
`;

const SEND_HELPER = `interface SentTask {
  status: { state: string };
  artifacts?: { parts: { text?: string }[] }[];
}

/** Sends one text message over the HTTP+JSON binding; answers the task. */
async function send(text: string): Promise<SentTask> {
  const response = await SELF.fetch("https://agent.test/message:send", {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] },
    }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { task: SentTask }).task;
}

const answerOf = (task: SentTask) =>
  (task.artifacts ?? []).flatMap((a) => a.parts.map((p) => p.text ?? "")).join("");
`;

const ECHO_TEST = `import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

${SEND_HELPER}
describe("the agent", () => {
  it("serves its card", async () => {
    const response = await SELF.fetch("https://agent.test/.well-known/agent-card.json");
    const card = (await response.json()) as { name: string };
    expect(card.name).toBe("Echo");
  });

  it("answers a message", async () => {
    const task = await send("hello");
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(answerOf(task)).toBe("You said: hello");
  });
});
`;

const MODEL_TEST = `import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

${SEND_HELPER}
describe("the agent", () => {
  it("serves its card", async () => {
    const response = await SELF.fetch("https://agent.test/.well-known/agent-card.json");
    const card = (await response.json()) as { name: string };
    expect(card.name).toBe("Assistant");
  });

  // The model is the fake OpenAI of vitest.config.ts: it asks for the add tool, then
  // answers with the tool's result.
  it("answers with the model, which calls a tool", async () => {
    const task = await send("What is 2 + 3?");
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(answerOf(task)).toBe("2 + 3 = 5");
  });
});
`;

/** The Workers vitest pool: the tests run in workerd against wrangler.toml's Worker. */
function vitestConfig(template: Template): string {
  const fakeModel =
    template === "model"
      ? `
/**
 * The tests have no network: calls to OpenAI reach this fake, which streams what a Chat
 * Completions API would: first a call of the add tool, then (once the tool's result is in
 * the request) the answer.
 */
function fakeOpenAI(request: Request): Promise<Response> | Response {
  if (!request.url.startsWith("https://api.openai.com/v1/chat/completions")) {
    return new Response("no network in the tests", { status: 503 });
  }
  return request.text().then((text) => {
    const body = JSON.parse(text) as { messages: { role: string; content?: unknown }[] };
    const toolResult = body.messages.find((m) => m.role === "tool");
    const chunk = (delta: object, finish: string | null = null) =>
      \`data: \${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "gpt-4o-mini", choices: [{ index: 0, delta, finish_reason: finish }] })}\\n\\n\`;
    const events = toolResult
      ? [chunk({ role: "assistant", content: \`2 + 3 = \${String(toolResult.content)}\` }), chunk({}, "stop")]
      : [
          chunk({
            role: "assistant",
            tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } }],
          }),
          chunk({}, "tool_calls"),
        ];
    return new Response(\`\${events.join("")}data: [DONE]\\n\\n\`, {
      headers: { "Content-Type": "text/event-stream" },
    });
  });
}
`
      : "";
  const bindings =
    template === "model"
      ? `EDGELINK_ID_KEY: "test-only-key-for-signing-task-ids-0123456789",
            OPENAI_API_KEY: "sk-test",`
      : `EDGELINK_ID_KEY: "test-only-key-for-signing-task-ids-0123456789",`;
  return `import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
${fakeModel}
export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        // The tests' own secrets: never the ones in .dev.vars.
        bindings: {
          ${bindings}
        },${template === "model" ? "\n        outboundService: fakeOpenAI," : ""}
      },
    }),
  ],
});
`;
}

const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: "ES2023",
      module: "ESNext",
      moduleResolution: "Bundler",
      lib: ["ES2023"],
      types: ["@cloudflare/workers-types", "@cloudflare/vitest-plugin/types"],
      strict: true,
      noUncheckedIndexedAccess: true,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      skipLibCheck: true,
      noEmit: true,
    },
    include: ["src", "test", "vitest.config.ts"],
  },
  null,
  2,
)}\n`;

function packageJson(name: string, v: Versions): string {
  return `${JSON.stringify(
    {
      name,
      private: true,
      type: "module",
      scripts: {
        dev: "wrangler dev",
        test: "vitest run",
        deploy: "wrangler deploy",
        typecheck: "tsc --noEmit",
        doctor: "edgelink doctor",
      },
      dependencies: {
        edgelink: `^${v.edgelink}`,
        hono: v.hono,
        zod: v.zod,
      },
      devDependencies: {
        "@cloudflare/vitest-plugin": v.vitestPlugin,
        "@cloudflare/workers-types": v.workersTypes,
        // wrangler needs Node 22.12 or later: npm scripts run this one, whatever Node
        // the machine has (npm puts node_modules/.bin first on their PATH).
        node: v.node,
        typescript: v.typescript,
        vitest: v.vitest,
        wrangler: v.wrangler,
      },
      // The install scripts this toolchain needs: `node` fetches the Node 22 the scripts run
      // on, workerd and esbuild set up their binaries. npm 12 skips any not listed here.
      allowScripts: { esbuild: true, node: true, workerd: true },
    },
    null,
    2,
  )}\n`;
}

const GITIGNORE = `node_modules/
.wrangler/
dist/
${DEV_VARS_RULES}`;

function devVars(template: Template, idKey: string): string {
  return `# Local secrets for wrangler dev. Git-ignored; deployed Workers get them with
# npx wrangler secret put NAME.
# Signs task and context ids; keep it: another key makes every earlier id unknown.
EDGELINK_ID_KEY=${idKey}
${template === "model" ? "# Your OpenAI key (see .dev.vars.example).\nOPENAI_API_KEY=\n" : ""}`;
}

const DEV_VARS_EXAMPLE = `# The secrets this Worker reads. Copy the lines you need into .dev.vars (git-ignored)
# for wrangler dev, and set each on the deployed Worker with npx wrangler secret put NAME.

# Signs task and context ids: at least 32 characters (openssl rand -base64 48).
EDGELINK_ID_KEY=

# The model's API key (https://platform.openai.com/api-keys).
OPENAI_API_KEY=
# Optional: another OpenAI-compatible endpoint, with its version (…/v1).
# OPENAI_BASE_URL=https://api.openai.com/v1
`;

function readme(name: string, template: Template): string {
  return `# ${name}

An A2A agent on Cloudflare Workers, made with \`edgelink init\` (template: ${template}).

- \`npm run dev\`: serves it on http://localhost:8787 (its card at /.well-known/agent-card.json)
- \`npm test\`: its tests, in the Workers runtime
- \`npm run typecheck\`, \`npm run doctor\` (checks wrangler.toml and .dev.vars)
- \`npm run deploy\`: first \`npx wrangler secret put EDGELINK_ID_KEY\`${template === "model" ? " and `npx wrangler secret put OPENAI_API_KEY`" : ""}
`;
}

/** Every file of a new project, in the order they are written. */
export function projectFiles(
  dirName: string,
  template: Template,
  versions: Versions,
  idKey: string,
): ProjectFile[] {
  const name = workerName(dirName);
  return [
    { path: "package.json", content: packageJson(name, versions) },
    { path: "wrangler.toml", content: wranglerToml(name) },
    { path: "tsconfig.json", content: TSCONFIG },
    { path: "vitest.config.ts", content: vitestConfig(template) },
    { path: ".gitignore", content: GITIGNORE },
    { path: ".dev.vars", content: devVars(template, idKey), secret: true },
    ...(template === "model" ? [{ path: ".dev.vars.example", content: DEV_VARS_EXAMPLE }] : []),
    { path: "src/agent.ts", content: template === "model" ? MODEL_AGENT : ECHO_AGENT },
    { path: "test/agent.test.ts", content: template === "model" ? MODEL_TEST : ECHO_TEST },
    { path: "README.md", content: readme(name, template) },
  ];
}
