/**
 * `edgelink push add|list|delete|listen`: a task's push configs, and a local webhook
 * receiver that verifies each delivery.
 */
import { verifyPushNotification } from "../push/receiver";
import { agentOf } from "./agent";
import { intOption, onlyOptions, option, UsageError } from "./args";
import { type Context, GLOBAL, need, print, printJson } from "./common";
import { EXIT } from "./events";
import { type IncomingMessageLike, nodeHttp, proc } from "./node";
import { stateColor, table } from "./output";

export async function push(ctx: Context): Promise<number> {
  const sub = ctx.args.positional[0];
  const rest = { ...ctx, args: { ...ctx.args, positional: ctx.args.positional.slice(1) } };
  if (sub === "listen") return listen(rest);
  if (sub === "list") return pushList(rest);
  if (sub === "delete") return pushDelete(rest);
  if (sub === "add") return pushAdd(rest);
  throw new UsageError("push needs add, list, delete or listen");
}

async function pushAdd(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "notification-token", "auth-scheme", "auth-credentials", "id"]);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const taskId = need(ctx.args, 1, "task id");
  const url = need(ctx.args, 2, "webhook URL");
  const token = option(ctx.args, "notification-token");
  const scheme = option(ctx.args, "auth-scheme");
  const credentials = option(ctx.args, "auth-credentials");
  const id = option(ctx.args, "id");
  const config = await agent.createPushConfig(taskId, {
    url,
    ...(id ? { id } : {}),
    ...(token ? { token } : {}),
    ...(scheme ? { authentication: { scheme, ...(credentials ? { credentials } : {}) } } : {}),
  });
  if (ctx.json) printJson(config);
  else print(`${config.id} ${ctx.style.dim("→")} ${config.url}`);
  return EXIT.ok;
}

async function pushList(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, GLOBAL);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const { configs } = await agent.listPushConfigs(need(ctx.args, 1, "task id"));
  if (ctx.json) printJson(configs);
  else if (configs.length === 0) print(ctx.style.dim("no push configs"));
  else print(table(configs.map((c) => [c.id, c.url])));
  return EXIT.ok;
}

async function pushDelete(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, GLOBAL);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  await agent.deletePushConfig(need(ctx.args, 1, "task id"), need(ctx.args, 2, "config id"));
  if (ctx.json) printJson({ deleted: true });
  else print("deleted");
  return EXIT.ok;
}

/** Reads a Node request into a Web Request (the body capped at 1 MiB). */
async function toRequest(req: IncomingMessageLike, origin: string): Promise<Request> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.byteLength;
    if (size > 1024 * 1024) throw new Error("body over 1 MiB");
    chunks.push(chunk);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.byteLength;
  }
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (typeof v === "string") headers.set(k, v);
    else if (Array.isArray(v)) for (const one of v) headers.append(k, one);
  }
  const method = req.method ?? "GET";
  return new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    ...(method === "GET" || method === "HEAD" ? {} : { body }),
  });
}

/**
 * A local webhook receiver: every POST is checked with `verifyPushNotification` against
 * the agent's JWKS and printed; forged or replayed-elsewhere deliveries are refused.
 */
async function listen(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [
    ...GLOBAL,
    "port",
    "host",
    "path",
    "audience",
    "notification-token",
    "count",
  ]);
  const agentUrl = need(ctx.args, 0, "agent URL").replace(/\/+$/, "");
  const port = intOption(ctx.args, "port") ?? 8788;
  const host = option(ctx.args, "host") ?? "127.0.0.1";
  const path = option(ctx.args, "path") ?? "/";
  const token = option(ctx.args, "notification-token");
  const count = intOption(ctx.args, "count");
  const http = await nodeHttp();
  let received = 0;
  const seen = new Set<string>();
  let audience = option(ctx.args, "audience");
  const s = ctx.style;
  let done: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const server = http.createServer((req, res) => {
    void (async () => {
      const origin = `http://${host}:${port}`;
      try {
        if (req.method !== "POST") {
          res.statusCode = 405;
          res.end();
          return;
        }
        const request = await toRequest(req, origin);
        const verified = await verifyPushNotification(request, {
          jwksUrl: `${agentUrl}/.well-known/jwks.json`,
          audience: audience ?? `${origin}${path}`,
          ...(token ? { token } : {}),
        });
        res.statusCode = 204;
        res.end();
        const repeat = seen.has(verified.eventId);
        seen.add(verified.eventId);
        if (seen.size > 10_000) seen.clear();
        if (ctx.json)
          print(
            JSON.stringify({
              eventId: verified.eventId,
              taskId: verified.taskId,
              repeat,
              event: verified.event,
            }),
          );
        else {
          const e = verified.event;
          const what =
            e.kind === "status-update"
              ? stateColor(s, e.status.state)
              : e.kind === "task"
                ? `task ${stateColor(s, e.task.status.state)}`
                : e.kind === "artifact-update"
                  ? `artifact ${JSON.stringify(e.artifact.parts.map((p) => (p.type === "text" ? p.content : `[${p.type}]`)).join(""))}`
                  : "message";
          print(
            `${s.green("✓")} ${s.dim(`${verified.taskId} #${verified.eventId}${repeat ? " (repeat)" : ""}`)} ${what}`,
          );
        }
        if (!repeat) received++;
        if (count !== undefined && received >= count) done();
      } catch (error) {
        const status = (error as { status?: number }).status ?? 400;
        res.statusCode = status;
        res.end(String((error as Error).message));
        const line = `${s.red("✗")} refused (${status}): ${(error as Error).message}`;
        if (ctx.json)
          print(
            JSON.stringify({
              refused: status,
              reason: (error as { reason?: string }).reason ?? null,
              message: (error as Error).message,
            }),
          );
        else proc.stderr.write(`${line}\n`);
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const actual = typeof address === "object" && address ? address.port : port;
  audience ??= `http://${host}:${actual}${path}`;
  proc.stderr.write(
    `${s.dim("listening on")} ${audience} ${s.dim(`(keys from ${agentUrl}/.well-known/jwks.json; Ctrl-C to stop)`)}\n`,
  );
  proc.on("SIGINT", () => done());
  proc.on("SIGTERM", () => done());
  await finished;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return EXIT.ok;
}
