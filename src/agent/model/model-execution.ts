import type { Item, ItemInput } from "../../history/items";
import { estimateItemTokens } from "../../history/tokens";
import type { JsonObject } from "../../protocol/json";
import { ProviderError } from "../../providers/base/errors";
import { checkOutput } from "../../providers/base/output";
import type { CallOptions, Model, ModelRequest } from "../../providers/base/types";
import { traceContextOf } from "../../telemetry";
import { type AgentResult, ResultRecorder } from "../agent-result";
import { holdRound, planHold, resumeHeld } from "../approval/approval-round";
import { askUserTool } from "../approval/ask-user";
import { type ApprovalDesk, ASK_USER_TOOL } from "../approval/held-calls";
import { TurnRelay } from "../approval/relay";
import type { Agent } from "../definition";
import type { MemoryTurn, MemoryTurnScope } from "../memory-source";
import { systemPrompt } from "../prompt";
import type { RunContext } from "../run-context";
import type { Tools } from "../tool";
import { runDefaultExecution } from "../tools/default-execution";
import { answerOrphanCalls } from "../tools/orphan-calls";
import { runToolCalls, type ToolRunOptions } from "../tools/tool-runner";
import { announceCall, announceReasoning, announceResult } from "../tools/tool-work";
import { openTurnTools, resumeAgentCalls } from "../tools/turn-tools";

export { systemPrompt } from "../prompt";

import { describeFailure, publicFailure } from "./model-failure";
import { ArtifactWriter, type Round, streamRound, turnItems } from "./model-round";
import { capturesContent, endModelCall, startModelCall, ToolSpans } from "./model-trace";
import { recalledMemoryItem, withRecalledMemoryNote } from "./recalled-memory";
import { type RequestSettings, requestSettings, withTools } from "./request-settings";
import { roundWindow } from "./round-history";
import { turnWindow, windowPolicy } from "./turn-history";

export { answerOrphanCalls, INTERRUPTED_CALL_OUTPUT } from "../tools/orphan-calls";
export { RESPONSE_ARTIFACT } from "./model-round";

/** The answer against the agent's output schema: its value, or what is wrong with it. */
function structuredOutcome(text: string, schema: JsonObject): Partial<AgentResult> {
  const checked = checkOutput(text, schema);
  return checked.error === null ? { output: checked.output } : { outputError: checked.error };
}

/**
 * Runs a model-backed agent's turn: the conversation so far goes to the model; its text
 * streams into the `response` artifact (one `append` chunk per network read, so the event
 * log gets one row per read, not per token); tool calls run (each call and result shown to
 * streaming clients) and their results go back to the model until it answers; every
 * step is recorded in the context's history. The task ends `completed` with usage, cost,
 * timing and the turn's `AgentResult` in its metadata, or `failed` with the reason.
 * A failure after text was streamed is not retried or rerouted: the task fails, and
 * what was sent stays as sent.
 */
export async function runModelAgent<Env>(
  ctx: RunContext<Env>,
  agent: Agent<Env>,
  callOptions: Pick<CallOptions, "failoverStore"> = {},
  /** Who the turn is for, when the agent has long-term memory. */
  memoryScope?: MemoryTurnScope,
  /** Where calls that need a person's decision are held (absent: no call is held). */
  desk?: ApprovalDesk,
): Promise<void> {
  const model = agent.model;
  if (!model) throw new TypeError("runModelAgent needs an agent with a model");
  // A message of tool_call or infer parts asks for those to run, not for a chat turn.
  if (ctx.message.parts.some((p) => p.type === "tool_call" || p.type === "infer")) {
    return runDefaultExecution(ctx, agent);
  }
  const recorder = new ResultRecorder(agent.trace);
  // Recall starts first, from the turn's input alone, and runs while the rest of the
  // request is prepared (instructions, tools, the window); the first model call waits for it.
  const memory =
    agent.memory && memoryScope ? agent.memory.openTurn(agent, ctx, memoryScope) : null;
  const turn = turnSignal(ctx.signal, agent.turnTimeoutMs);
  const end: End = (reason, extra = {}, outcome = {}) => {
    const status = reason === null ? "complete" : "failed";
    const result = recorder.result(
      ctx.taskId,
      status,
      reason === null ? outcome : { ...outcome, error: reason },
    );
    memory?.finished({
      answer: result.answer,
      success: reason === null,
      toolSequence: result.toolsUsed.map((t) => t.name),
      tools: result.toolsUsed,
    });
    const metadata = {
      ...turnMetadata(recorder),
      ...extra,
      result: result as unknown as JsonObject,
    };
    if (reason === null) ctx.complete(undefined, { metadata });
    else ctx.fail(reason, { metadata });
  };
  try {
    await modelLoop(
      ctx,
      agent,
      model,
      { ...callOptions, signal: turn.signal },
      recorder,
      end,
      memory,
      desk,
    );
  } catch (error) {
    if (ctx.signal.aborted || !turn.timedOut()) throw error;
    end(`The turn took longer than ${agent.turnTimeoutMs} ms and was stopped`, { cutShort: true });
  } finally {
    turn.dispose();
  }
}

type End = (reason: string | null, extra?: JsonObject, outcome?: Partial<AgentResult>) => void;

async function modelLoop<Env>(
  ctx: RunContext<Env>,
  agent: Agent<Env>,
  model: Model,
  callOptions: Pick<CallOptions, "failoverStore" | "signal">,
  recorder: ResultRecorder,
  end: End,
  memory: MemoryTurn | null,
  desk: ApprovalDesk | undefined,
): Promise<void> {
  const system = await systemPrompt(agent, ctx);
  // Delegated agents that ask for input have it relayed to this task's caller.
  const relay = desk ? new TurnRelay((ids) => desk.release(ids)) : undefined;
  const turn = await openTurnTools(agent, ctx, relay);
  try {
    let extra: Tools | undefined =
      memory && Object.keys(memory.tools).length
        ? {
            ...turn?.tools,
            ...Object.fromEntries(
              Object.entries(memory.tools).filter(([name]) => agent.toolAllowed(name)),
            ),
          }
        : turn?.tools;
    if (desk && agent.approvals.askUser) extra = { ...extra, [ASK_USER_TOOL]: askUserTool };
    const tools: Tools = extra ? { ...agent.tools, ...extra } : agent.tools;
    const prepared = withTools(requestSettings(agent, system), extra);
    // The window of the conversation, not all of it; a turn cut by a restart first
    // finishes its agents-as-tools calls (re-attaching), whose results join the window.
    // Its budget keeps the memory section's room, so it is read while recall runs.
    const signal = callOptions.signal as AbortSignal;
    const reserved = memory?.reservedTokens ?? 0;
    // A turn resumed with decisions on its held calls: they run (or are answered) first.
    if (desk && relay) {
      // Decisions on a delegated agent's request go back to it; its call follows it on.
      await relay.resume(desk.held("model"), ctx, tools, {
        ...toolOptions(agent, signal),
        onResult: (run) => announceResult(ctx, run),
      });
      // The agent asked again: the task waits for its caller once more.
      if (relay.hold(desk)) return;
      await resumeHeld(ctx, desk, tools, {
        ...toolOptions(agent, signal),
        onCall: (c) => announceCall(ctx, c),
        onResult: (run) => announceResult(ctx, run),
      });
    }
    let window = await turnWindow(ctx, agent, model, prepared, signal, reserved);
    if (await resumeAgentCalls(ctx, agent, tools, toolOptions(agent, signal), window)) {
      window = await turnWindow(ctx, agent, model, prepared, signal, reserved);
    }
    const items: Item[] = answerOrphanCalls(window);
    const section = memory ? await memory.recalled : "";
    const settings = withRecalledMemoryNote(prepared, section);
    const recalled = section ? recalledMemoryItem(section) : null;
    await toolLoop({
      ctx,
      agent,
      model,
      items,
      recalled,
      settings,
      tools,
      callOptions,
      recorder,
      end,
      desk,
      relay,
    });
  } finally {
    await turn?.close();
  }
}

function toolOptions<Env>(agent: Agent<Env>, signal: AbortSignal): ToolRunOptions {
  return {
    signal,
    timeoutMs: agent.toolTimeoutMs,
    maxCallsPerTurn: agent.maxToolCallsPerTurn,
    parallel: agent.parallelToolCalls,
  };
}

/** What the tool loop of one turn works with. */
interface ToolLoop<Env> {
  ctx: RunContext<Env>;
  agent: Agent<Env>;
  model: Model;
  /** The request's items: the turn's window, then each round as it is recorded. */
  items: Item[];
  /** What memory recalled for this turn, as data sent before the items (not recorded). */
  recalled: Item | null;
  settings: RequestSettings;
  tools: Tools;
  callOptions: Pick<CallOptions, "failoverStore" | "signal">;
  recorder: ResultRecorder;
  end: End;
  desk: ApprovalDesk | undefined;
  relay: TurnRelay | undefined;
}

async function toolLoop<Env>(loop: ToolLoop<Env>): Promise<void> {
  const { ctx, agent, model, settings, tools, callOptions, recorder, end, desk, relay, recalled } =
    loop;
  let items = loop.items;
  const options: CallOptions = { env: ctx.env as object, ...callOptions };
  const artifact = new ArtifactWriter(ctx);
  const signal = callOptions.signal as AbortSignal;
  // The recalled memory's message takes its room from the history's budget.
  const recalledTokens = recalled ? estimateItemTokens(recalled) : 0;
  const policy = windowPolicy(agent, model, settings, signal, recalledTokens);
  let toolRounds = 0;
  // The items the last round recorded: every later call carries them (the window holds within a turn too).
  let recorded: Item[] = [];
  // The run's span context (undefined while tracing is off: every hook below is skipped).
  const parent = traceContextOf(ctx);
  const content = parent !== undefined && capturesContent(ctx.env);

  for (let call = 1; call <= agent.maxIterations; call++) {
    if (recorded.length > 0) {
      const fitted = await roundWindow(ctx, items, recorded, policy);
      if (fitted) items = answerOrphanCalls(fitted);
    }
    const request: ModelRequest = {
      ...settings,
      messages: recalled ? [recalled, ...items] : items,
    };
    let round: Round;
    const span = parent
      ? startModelCall({ parent, model, request, conversationId: ctx.contextId, content })
      : undefined;
    try {
      const reasoning = agent.streamReasoning
        ? (text: string) => announceReasoning(ctx, text)
        : null;
      const callOptions = span ? { ...options, traceContext: span.ctx } : options;
      round = await streamRound(
        model.streamBatches(request, callOptions),
        artifact,
        reasoning,
        span,
      );
      if (span) endModelCall(span, round, content);
    } catch (error) {
      endModelCall(span, { error }, content);
      if (signal.aborted) throw error;
      // The text streamed before the failure stays in the artifact, as it was shown.
      artifact.flush();
      const failure = error instanceof ProviderError ? error : null;
      end(
        publicFailure(failure, error, ctx),
        failure ? { providerError: describeFailure(failure) } : {},
      );
      return;
    }
    recorder.model(round.use, round.startedAt, round.text, round.reasoning);
    recorded = ctx.record(turnItems(round, ctx));
    items.push(...recorded);
    if (round.toolCalls.length === 0) {
      artifact.finish();
      end(
        null,
        {},
        settings.outputSchema ? structuredOutcome(round.text, settings.outputSchema) : {},
      );
      return;
    }
    // A call that needs a person holds the whole round: the task waits for the decisions.
    const held = desk ? planHold(round.toolCalls, tools, agent.approvals, desk.caller) : null;
    if (desk && held) {
      artifact.finish();
      holdRound(desk, held);
      return;
    }
    const calls = new Map(round.toolCalls.map((c) => [c.id, c]));
    const toolSpans = parent ? new ToolSpans(parent, content) : undefined;
    const results = await runToolCalls(round.toolCalls, tools, {
      signal,
      timeoutMs: agent.toolTimeoutMs,
      maxCallsPerTurn: agent.maxToolCallsPerTurn,
      parallel: agent.parallelToolCalls,
      stopOnError: agent.stopOnError,
      traceContextOf: toolSpans ? (id) => toolSpans.contextOf(id) : undefined,
      onCall: (c) => {
        toolSpans?.started(c);
        announceCall(ctx, c);
      },
      onResult: (run) => {
        toolSpans?.finished(run);
        // A call whose agent asked for input has no result yet: the caller decides first.
        if (relay?.asked(run.toolCallId)) return;
        announceResult(ctx, run);
        const c = calls.get(run.toolCallId);
        if (c) recorder.tool(c, run);
      },
    });
    const outputs: ItemInput[] = results
      .filter((r) => !relay?.asked(r.toolCallId))
      .map((result) => ({
        type: "function_call_output",
        name: result.name,
        callId: result.toolCallId,
        output: result.content,
        isError: result.isError,
      }));
    const answered = ctx.record(outputs);
    if (desk && relay?.hold(desk)) {
      artifact.finish();
      return;
    }
    recorded.push(...answered);
    items.push(...answered);
    toolRounds++;
    const broke = agent.stopOnError ? results.find((r) => r.threw) : undefined;
    if (broke) {
      end(`Tool ${broke.name} failed: ${broke.content}`, {
        toolError: { tool: broke.name, callId: broke.toolCallId, message: broke.content },
      });
      return;
    }
    if (toolRounds >= agent.maxToolRounds) {
      end(`Stopped after ${toolRounds} tool rounds without a final answer`, { cutShort: true });
      return;
    }
  }
  end(`Stopped after ${agent.maxIterations} model calls without a final answer`, {
    cutShort: true,
  });
}

/** The turn's own signal: the task's cancellation, or the whole-turn time limit. */
function turnSignal(cancel: AbortSignal, ms: number) {
  const controller = new AbortController();
  let timedOut = false;
  const onCancel = () => controller.abort(cancel.reason);
  cancel.addEventListener("abort", onCancel, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`The turn took longer than ${ms} ms`, "TimeoutError"));
  }, ms);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      cancel.removeEventListener("abort", onCancel);
    },
  };
}

/** The task metadata of a finished turn: totals over every model call. */
function turnMetadata(recorder: ResultRecorder): JsonObject {
  const out: JsonObject = {
    modelCalls: recorder.modelCalls,
    latencyMs: Date.now() - recorder.startedAt,
    timeToFirstTokenMs: recorder.firstTokenMs,
    cost: recorder.cost,
  };
  if (recorder.usage) out.usage = { ...recorder.usage };
  const model = recorder.lastModel;
  if (model) out.model = { ...model };
  return out;
}
