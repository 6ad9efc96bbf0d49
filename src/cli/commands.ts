import { answerOf, type Task, type TaskState } from "../client/index";
import type { Item as HistoryItem } from "../history/items";
import { agentOf } from "./agent";
import { type Args, flag, intOption, onlyOptions, option, UsageError } from "./args";
import { type Context, GLOBAL, need, print, printJson } from "./common";
import { EventPrinter, EXIT, exitCodeOf } from "./events";
import { proc } from "./node";
import { type Style, stateColor, table } from "./output";

export type { Context } from "./common";
export { push } from "./push";
export { registry } from "./registry";

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
