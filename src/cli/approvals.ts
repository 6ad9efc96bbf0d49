import {
  type ApprovalDecision,
  approve as approveCall,
  decisionParts,
  pendingCalls,
  reject as rejectCall,
  type Task,
} from "../client/index";
import type { JsonObject } from "../protocol/json";
import { agentOf } from "./agent";
import { onlyOptions, option, UsageError } from "./args";
import { type Context, GLOBAL, need, print, printJson } from "./common";
import { EXIT, exitCodeOf } from "./events";
import { proc } from "./node";
import { stateColor, table } from "./output";

/** How many of the caller's waiting tasks `approvals` reads without `--task`. */
const LISTED_TASKS = 50;

/**
 * `edgelink approvals URL [--task ID]`: the calls waiting for a decision, of one task (an
 * approver names it by the `approverTaskId` its request carries) or of the caller's tasks
 * that wait for input.
 */
export async function approvals(ctx: Context): Promise<number> {
  onlyOptions(ctx.args, [...GLOBAL, "task"]);
  const agent = await agentOf(ctx, need(ctx.args, 0, "agent URL"));
  const taskId = option(ctx.args, "task");
  let tasks: Task[];
  if (taskId) tasks = [await agent.getTask(taskId, { historyLength: 0 })];
  else {
    const page = await agent
      .listTasks({ state: "input-required", pageSize: LISTED_TASKS, historyLength: 0 })
      .next();
    tasks = page.value?.tasks ?? [];
  }
  const rows = tasks.flatMap((t) => pendingCalls(t).map((call) => ({ taskId: t.id, ...call })));
  if (ctx.json) {
    printJson(rows);
    return EXIT.ok;
  }
  const s = ctx.style;
  if (rows.length === 0) {
    print(s.dim(taskId ? `task ${taskId} waits for no decision` : "no calls wait for a decision"));
    return EXIT.ok;
  }
  print(
    table([
      ["TASK", "CALL", "TOOL", "TYPE", "DEADLINE", "ARGUMENTS", "REASON"].map((h) => s.bold(h)),
      ...rows.map((r) => [
        r.taskId,
        s.cyan(r.callId),
        r.tool,
        r.type,
        r.deadline ?? "",
        JSON.stringify(r.arguments),
        r.reason ?? "",
      ]),
    ]),
  );
  proc.stderr.write(
    ctx.errStyle.dim("answer: edgelink approve|reject URL --task TASK --call CALL [--reason R]\n"),
  );
  return EXIT.ok;
}

/** `edgelink approve URL --task ID --call ID [--call ID…] [--reason R] [--args JSON]`. */
export function approve(ctx: Context): Promise<number> {
  return decide(ctx, "approve");
}

/** `edgelink reject URL --task ID --call ID [--call ID…] [--reason R]`. */
export function reject(ctx: Context): Promise<number> {
  return decide(ctx, "reject");
}

async function decide(ctx: Context, verdict: "approve" | "reject"): Promise<number> {
  onlyOptions(ctx.args, [
    ...GLOBAL,
    "task",
    "call",
    "reason",
    ...(verdict === "approve" ? ["args"] : []),
  ]);
  const url = need(ctx.args, 0, "agent URL");
  const taskId = option(ctx.args, "task");
  if (!taskId) {
    throw new UsageError(`${verdict} needs --task ID (edgelink approvals ${url} lists them)`);
  }
  const calls = ctx.args.options.get("call") ?? [];
  if (calls.length === 0 || calls.some((c) => c === "")) {
    throw new UsageError(
      `${verdict} needs --call ID, once per call it decides (edgelink approvals ${url} --task ${taskId} lists them)`,
    );
  }
  const reason = option(ctx.args, "reason");
  const edited = editedArguments(option(ctx.args, "args"), calls.length);
  const decisions: ApprovalDecision[] = calls.map((callId) => {
    const d = verdict === "approve" ? approveCall(callId, edited) : rejectCall(callId, reason);
    return verdict === "approve" && reason !== undefined ? { ...d, reason } : d;
  });
  const agent = await agentOf(ctx, url);
  const result = await agent.send(decisionParts(decisions), { taskId });
  if (ctx.json) {
    printJson(result);
    return EXIT.ok;
  }
  if (result.kind !== "task") {
    print(`${verdict === "approve" ? "approved" : "rejected"} ${calls.join(", ")}`);
    return EXIT.ok;
  }
  const state = result.task.status.state;
  print(
    `${verdict === "approve" ? "approved" : "rejected"} ${calls.join(", ")} · task ${result.task.id} ${stateColor(ctx.style, state)}`,
  );
  // The decision went in: a task that goes on waiting is no failure of this command.
  return state === "input-required" ? EXIT.ok : exitCodeOf(state);
}

/** `--args`: a JSON object of edited arguments, for one call at a time. */
function editedArguments(raw: string | undefined, calls: number): JsonObject | undefined {
  if (raw === undefined) return undefined;
  if (calls !== 1) throw new UsageError("--args edits one call: give exactly one --call with it");
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new UsageError(`--args must be a JSON object, e.g. --args '{"amount": 90}'`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError(`--args must be a JSON object, e.g. --args '{"amount": 90}'`);
  }
  return value as JsonObject;
}
