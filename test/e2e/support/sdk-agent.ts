/**
 * A test agent served by the official @a2a-js/sdk server (Express 5) on 127.0.0.1, for
 * the client's interop tests. Both v1.0 bindings (JSON-RPC at /jsonrpc, HTTP+JSON at
 * /rest), push config storage, an extended card; or, with `v03Only`, a v0.3-only agent
 * (v0.3 card, JSON-RPC through the SDK's v0.3 compatibility layer).
 *
 * What the executor does, by the text of the message:
 * - "ask": input-required "What's your name?"; the answer in the same task completes it
 * - "count N": one artifact chunk ("1 ", "2 ", ...) every `tickMs`, then completed
 * - "fail": failed
 * - "direct": answers with a Message, no task
 * - anything else: the words echoed back as artifact chunks, then completed
 */
// @ts-nocheck -- Node-only support (the repository has no @types/node).
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from "@a2a-js/sdk/server";
import {
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
  UserBuilder,
} from "@a2a-js/sdk/server/express";
import express from "express";

// The SDK's TaskState / Role numbers (proto numbering).
const SUBMITTED = 1;
const WORKING = 2;
const COMPLETED = 3;
const FAILED = 4;
const CANCELED = 5;
const INPUT_REQUIRED = 6;
const ROLE_AGENT = 2;

const textPart = (value: string) => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "",
});
const agentMessage = (text: string, taskId: string, contextId: string) => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId,
  role: ROLE_AGENT,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const status = (state: number, message?: unknown) => ({
  state,
  message,
  timestamp: new Date().toISOString(),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface SdkAgentOptions {
  /** Pause between streamed chunks. */
  tickMs?: number;
  v03Only?: boolean;
  /** When set, every request must carry `Authorization: Bearer <token>` (else 401). */
  requireBearer?: string | (() => string);
}

export interface SdkAgent {
  /** What the card advertises. */
  baseUrl: string;
  /** The server's own port (behind any proxy). */
  port: number;
  /** Requests seen, for assertions on headers. */
  requests: { method: string; path: string; headers: Record<string, string> }[];
  stop(): Promise<void>;
}

/**
 * @param publicUrl where clients reach this agent (a proxy in front of it, say); the card
 *   advertises it. Defaults to the server's own address.
 */
export async function startSdkAgent(
  options: SdkAgentOptions = {},
  publicUrl?: (port: number) => string,
): Promise<SdkAgent> {
  const tickMs = options.tickMs ?? 30;
  const canceled = new Set<string>();
  const executor = {
    async execute(ctx, bus) {
      const { taskId, contextId, userMessage } = ctx;
      const text = userMessage.parts
        .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
        .join("")
        .trim();
      if (text === "direct") {
        bus.publish(AgentEvent.message(agentMessage("a direct answer", undefined, contextId)));
        bus.finished();
        return;
      }
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(ctx.task ? WORKING : SUBMITTED),
          artifacts: ctx.task?.artifacts ?? [],
          history: [...(ctx.task?.history ?? []), userMessage],
          metadata: undefined,
        }),
      );
      const update = (state: number, message?: unknown) =>
        bus.publish(
          AgentEvent.statusUpdate({
            taskId,
            contextId,
            status: status(state, message),
            metadata: undefined,
          }),
        );
      const chunk = (artifactId: string, value: string, append: boolean, lastChunk: boolean) =>
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId,
              name: "answer",
              description: "",
              parts: [textPart(value)],
              metadata: undefined,
              extensions: [],
            },
            append,
            lastChunk,
            metadata: undefined,
          }),
        );
      update(WORKING);
      if (ctx.task?.status?.state === INPUT_REQUIRED) {
        chunk("greeting", `Hello, ${text}!`, false, true);
        update(COMPLETED);
      } else if (text === "ask") {
        update(INPUT_REQUIRED, agentMessage("What's your name?", taskId, contextId));
      } else if (text === "fail") {
        update(FAILED, agentMessage("failed on purpose", taskId, contextId));
      } else {
        const count = /^count (\d+)$/.exec(text);
        const words = count
          ? Array.from({ length: Number(count[1]) }, (_, i) => `${i + 1} `)
          : text.split(/(?<= )/);
        for (const [i, word] of words.entries()) {
          if (canceled.has(taskId)) break;
          chunk("answer", word, i > 0, i === words.length - 1);
          await sleep(tickMs);
        }
        if (!canceled.has(taskId)) update(COMPLETED);
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      canceled.add(taskId);
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: "",
          status: status(CANCELED),
          metadata: undefined,
        }),
      );
      bus.finished();
    },
  };

  const app = express();
  const requests = [];
  app.use((req, res, next) => {
    requests.push({ method: req.method, path: req.url, headers: { ...req.headers } });
    const expected =
      typeof options.requireBearer === "function" ? options.requireBearer() : options.requireBearer;
    if (expected && req.headers.authorization !== `Bearer ${expected}`) {
      res
        .status(401)
        .json({ error: { code: 401, status: "UNAUTHENTICATED", message: "bad token" } });
      return;
    }
    next();
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const port = server.address().port;
  const base = publicUrl ? publicUrl(port) : `http://127.0.0.1:${port}`;

  const skills = [
    {
      id: "echo",
      name: "Echo",
      description: "Echoes",
      tags: ["test"],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    },
  ];
  const card = {
    name: options.v03Only ? "SDK v0.3 test agent" : "SDK test agent",
    description: "The official SDK serving a scripted agent.",
    supportedInterfaces: options.v03Only
      ? [{ url: `${base}/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" }]
      : [
          {
            url: `${base}/jsonrpc`,
            protocolBinding: "JSONRPC",
            tenant: "",
            protocolVersion: "1.0",
          },
          { url: `${base}/rest`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
        ],
    provider: undefined,
    version: "1.2.3",
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions: [],
      extendedAgentCard: true,
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills,
    signatures: [],
  };
  const extended = {
    ...card,
    name: `${card.name} (extended)`,
    skills: [...skills, { ...skills[0], id: "secret", name: "Secret" }],
  };
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    executor,
    undefined,
    new InMemoryPushNotificationStore(),
    { send: async () => {} },
    async () => extended,
  );
  const userBuilder = UserBuilder.noAuthentication;
  if (options.v03Only) {
    // A v0.3 agent's card: url + preferredTransport, no supportedInterfaces.
    app.get("/.well-known/agent-card.json", (_req, res) => {
      res.json({
        protocolVersion: "0.3.0",
        name: card.name,
        description: card.description,
        url: `${base}/jsonrpc`,
        preferredTransport: "JSONRPC",
        version: card.version,
        capabilities: { streaming: true, pushNotifications: true },
        defaultInputModes: ["text/plain"],
        defaultOutputModes: ["text/plain"],
        skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["test"] }],
        supportsAuthenticatedExtendedCard: true,
      });
    });
    app.use(
      "/jsonrpc",
      jsonRpcHandler({ requestHandler: handler, userBuilder, legacyCompat: { enabled: true } }),
    );
  } else {
    app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
    app.use("/jsonrpc", jsonRpcHandler({ requestHandler: handler, userBuilder }));
    app.use("/rest", restHandler({ requestHandler: handler, userBuilder }));
  }
  return {
    baseUrl: base,
    port,
    requests,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
