import {
  type A2AClient,
  answerOf,
  type Binding,
  connect,
  type Task,
  type TaskState,
} from "../client/index";
import type { Item as HistoryItem } from "../history/items";
import { verifyPushNotification } from "../push/receiver";
import { type Args, flag, intOption, onlyOptions, option, UsageError } from "./args";
import { type Context, credentials, GLOBAL, need, print, printJson } from "./common";
import { EventPrinter, EXIT, exitCodeOf } from "./events";
import { type IncomingMessageLike, nodeHttp, proc } from "./node";
import { type Style, stateColor, table } from "./output";

export type { Context } from "./common";
export { registry } from "./registry";

/** The connection every agent command makes, from the global options. */
export async function agentOf(
  ctx: Context,
  url: string,
  extra: { onRetry?: (n: number) => void } = {},
): Promise<A2AClient> {
  const { headers, auth } = credentials(ctx.args);
  const raw = option(ctx.args, "binding")?.toLowerCase();
  const binding: Binding | undefined =
    raw === undefined
      ? undefined
      : raw === "jsonrpc"
        ? "JSONRPC"
        : raw === "rest" || raw === "http+json"
          ? "HTTP+JSON"
          : (() => {
              throw new UsageError(`--binding must be jsonrpc or rest, got "${raw}"`);
            })();
  const trusted = ctx.args.options.get("trust-origin");
  const jwksUrl = option(ctx.args, "card-jwks");
  // Asked for, the card's signatures must verify before anything is sent to the agent.
  const verifyCard = jwksUrl ? { jwksUrl } : flag(ctx.args, "verify-card") ? true : undefined;
  return connect(url, {
    headers,
    ...(auth ? { auth } : {}),
    ...(trusted ? { trustedOrigins: trusted } : {}),
    ...(binding ? { binding } : {}),
    ...(verifyCard ? { verifyCard } : {}),
    resume: { ...(extra.onRetry ? { onRetry: extra.onRetry } : {}) },
  });
}

export async function card(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, GLOBAL);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  if (ctx.json) {
    printJson(agent.card);
    return EXIT.ok;
  }
  const { card: c, style } = { card: agent.card, style: ctx.style };
  const caps = Object.entries(c.capabilities)
    .filter(([, v]) => v === true)
    .map(([k]) => k);
  print(`${style.bold(c.name)}${c.version ? style.dim(` v${c.version}`) : ""}`);
  if (c.description) print(c.description);
  print(`${style.dim("endpoint")}  ${agent.endpoint.url} (${agent.binding}, A2A ${agent.version})`);
  print(
    `${style.dim("interfaces")} ${c.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion} ${i.url}`).join("; ")}`,
  );
  if (caps.length) print(`${style.dim("capabilities")} ${caps.join(", ")}`);
  if (agent.isEdgelink) print(`${style.dim("runtime")}   Edgelink`);
  if (c.skills.length) {
    print(style.bold("skills"));
    print(table(c.skills.map((s) => [`  ${style.cyan(s.id)}`, s.description || s.name])));
  }
  return EXIT.ok;
}

export async function send(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "task", "context", "no-wait"]);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const text = need(ctx.args, 1, "message text");
  const result = await agent.send(text, {
    ...sendTarget(ctx.args),
    returnImmediately: flag(ctx.args, "no-wait"),
  });
  if (ctx.json) {
    printJson(result);
  } else {
    const answer = answerOf(result);
    if (answer) print(answer);
    if (result.kind === "task") {
      const { task } = result;
      proc.stderr.write(
        `${ctx.errStyle.dim(`task ${task.id} · context ${task.contextId} ·`)} ${stateColor(ctx.errStyle, task.status.state)}\n`,
      );
    }
  }
  return result.kind === "task" ? exitCodeOf(result.task.status.state) : EXIT.ok;
}

function sendTarget(args: Args): { taskId?: string; contextId?: string } {
  const taskId = option(args, "task");
  const contextId = option(args, "context");
  return { ...(taskId ? { taskId } : {}), ...(contextId ? { contextId } : {}) };
}

export async function stream(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "task", "context"]);
  const printer = new EventPrinter(proc.stdout, proc.stderr, ctx.style, ctx.json);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"), {
    onRetry: (n) => printer.note(`connection lost, resuming (attempt ${n})…`),
  });
  const text = need(ctx.args, 1, "message text");
  for await (const event of agent.stream(text, sendTarget(ctx.args))) printer.handle(event);
  printer.finish();
  return exitCodeOf(printer.state);
}

export async function watch(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "last-event-id"]);
  const printer = new EventPrinter(proc.stdout, proc.stderr, ctx.style, ctx.json);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"), {
    onRetry: (n) => printer.note(`connection lost, resuming (attempt ${n})…`),
  });
  const taskId = need(ctx.args, 1, "task id");
  const lastEventId = option(ctx.args, "last-event-id");
  for await (const event of agent.subscribe(taskId, lastEventId ? { lastEventId } : {})) {
    printer.handle(event);
  }
  printer.finish();
  return exitCodeOf(printer.state);
}

const STATES: readonly string[] = [
  "submitted",
  "working",
  "completed",
  "failed",
  "canceled",
  "input-required",
  "rejected",
  "auth-required",
];

export async function tasks(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "context", "state", "page-size", "page-token"]);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const state = option(ctx.args, "state");
  if (state !== undefined && !STATES.includes(state)) {
    throw new UsageError(`--state must be one of ${STATES.join(", ")}`);
  }
  const contextId = option(ctx.args, "context");
  const pageToken = option(ctx.args, "page-token");
  const pageSize = intOption(ctx.args, "page-size") ?? 20;
  const first = await agent
    .listTasks({
      pageSize,
      ...(contextId ? { contextId } : {}),
      ...(state ? { state: state as TaskState } : {}),
      ...(pageToken ? { pageToken } : {}),
    })
    .next();
  const page = first.value ?? { tasks: [], nextPageToken: "" };
  if (ctx.json) {
    printJson(page);
    return EXIT.ok;
  }
  const s = ctx.style;
  if (page.tasks.length === 0) print(s.dim("no tasks"));
  else {
    print(
      table([
        [s.bold("TASK"), s.bold("STATE"), s.bold("UPDATED"), s.bold("CONTEXT")],
        ...page.tasks.map((t: Task) => [
          t.id,
          stateColor(s, t.status.state),
          t.status.timestamp,
          t.contextId,
        ]),
      ]),
    );
  }
  if (page.nextPageToken) {
    proc.stderr.write(ctx.errStyle.dim(`more: --page-token ${page.nextPageToken}\n`));
  }
  return EXIT.ok;
}

export async function get(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "history"]);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const historyLength = intOption(ctx.args, "history");
  const task = await agent.getTask(
    need(ctx.args, 1, "task id"),
    historyLength === undefined ? {} : { historyLength },
  );
  if (ctx.json) printJson(task);
  else {
    const s = ctx.style;
    print(
      `${s.bold(task.id)}  ${stateColor(s, task.status.state)}  ${s.dim(task.status.timestamp)}`,
    );
    print(`${s.dim("context")} ${task.contextId}`);
    for (const m of task.history)
      print(`${s.dim(`${m.role}:`)} ${answerOf({ kind: "message", message: m })}`);
    for (const a of task.artifacts) {
      print(
        `${s.dim(`artifact ${a.name ?? a.artifactId}:`)} ${answerOf({ ...task, artifacts: [a], status: { ...task.status, message: null } })}`,
      );
    }
    const statusText = task.status.message
      ? answerOf({ kind: "message", message: task.status.message })
      : "";
    if (statusText) print(`${s.dim("status:")} ${statusText}`);
  }
  return exitCodeOf(task.status.state);
}

export async function cancel(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, GLOBAL);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const task = await agent.cancel(need(ctx.args, 1, "task id"));
  if (ctx.json) printJson(task);
  else print(`${task.id} ${stateColor(ctx.style, task.status.state)}`);
  return task.status.state === "canceled" ? EXIT.ok : exitCodeOf(task.status.state);
}

function itemLine(item: HistoryItem, style: Style): string {
  switch (item.type) {
    case "message":
      return `${style.dim(`${item.role}:`)} ${item.content.map((c) => (typeof c === "string" ? c : `[image]`)).join("")}`;
    case "function_call":
      return `${style.dim("call:")} ${item.name}(${item.arguments})`;
    case "function_call_output":
      return `${style.dim(`${item.name || "output"} →`)} ${item.output}`;
    default:
      return `${style.dim(`${item.type}:`)} ${JSON.stringify(item)}`;
  }
}

export async function history(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "page-size", "page-token", "all"]);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const contextId = need(ctx.args, 1, "context id");
  const pageSize = intOption(ctx.args, "page-size") ?? 50;
  const pageToken = option(ctx.args, "page-token");
  const all = flag(ctx.args, "all");
  let next = "";
  for await (const page of agent.history(contextId, {
    pageSize,
    ...(pageToken ? { pageToken } : {}),
  })) {
    if (ctx.json) print(JSON.stringify(page));
    else for (const item of page.items) print(itemLine(item, ctx.style));
    next = page.nextPageToken;
    if (!all) break;
  }
  if (next && !all && !ctx.json)
    proc.stderr.write(ctx.errStyle.dim(`more: --page-token ${next}\n`));
  return EXIT.ok;
}

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
