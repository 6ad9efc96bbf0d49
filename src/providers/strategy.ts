import { type Item, isInstruction, isUserMessage, MessageItem } from "../history/items";
import {
  addUsage,
  type CallOptions,
  type Model,
  type ModelRequest,
  type StreamEvent,
  type Usage,
} from "./base/types";

/**
 * How a model works through a turn:
 * - `"auto"`: as the model does by itself;
 * - `"cot"`: it reasons step by step in a `<think>` block before answering (the block
 *   becomes the answer's reasoning, never its text, when think tags are stripped, as
 *   `defineAgent` does by default);
 * - `"react"`: the same before each step of a tool loop (reason, then call a tool or
 *   answer);
 * - `"reflection"`: its answer is a draft that a second call reviews and rewrites; the
 *   draft is sent as reasoning and the rewrite as the answer. A round that calls tools is
 *   not reviewed;
 * - `"tot"` (tree of thought): `branches` answers are written independently and a last
 *   call picks the best, which is the answer; the candidates are sent as reasoning. A
 *   round whose first candidate calls tools goes on with those calls.
 */
export type StrategyMode = "auto" | "cot" | "react" | "reflection" | "tot";

export interface StrategyOptions {
  /** Default "auto". */
  mode?: StrategyMode;
  /**
   * A first call writes a short plan (sent as reasoning), which then leads the system
   * prompt of the turn's first round. Default false.
   */
  planning?: boolean;
  /**
   * A model that writes the drafts ("reflection", which setting it alone also turns on)
   * or the candidates ("tot") instead of this one (a faster, cheaper one, say); this model
   * reviews or picks. Default: itself.
   */
  drafting?: Model;
  /** Candidates "tot" compares: 2 to 5. Default 3. */
  branches?: number;
  /** Offer the model the request's tools. Default true. */
  tools?: boolean;
  /**
   * Send the conversation before the turn's question. False: each turn sees only its own
   * question and what followed it. Default true.
   */
  memory?: boolean;
}

const THINK: Record<"cot" | "react", string> = {
  cot: "Think the problem through step by step inside <think></think> before you answer. Only what follows the closing tag is shown.",
  react:
    "Work in steps. Before each step, reason inside <think></think> about what you know and what to do next; then call a tool, or, when you have what you need, answer after the closing tag.",
};
const PLAN =
  "Before answering, write a short numbered plan of the steps you will take. Do not answer yet and do not call tools.";
const BRANCH = (i: number, n: number) =>
  `This is attempt ${i} of ${n} at this answer: reason it out on your own, in your own way.`;
const PICK = (candidates: string[]) =>
  `Candidate answers to the last question:\n${candidates.map((c, i) => `[${i + 1}] ${c}`).join("\n\n")}\n\nReply with only the number of the best candidate.`;
const REVIEW =
  "Review your answer above for mistakes, gaps and unclear wording. Reply with the final answer only, rewritten where needed.";

/**
 * A model that works by `options`: it wraps `model` as `withRetry` or `fallback`
 * do, so it works anywhere a model does. Planning and reflection make more calls per
 * round; their usage and cost are added up in the round's `message_end`.
 *
 * @example
 * const careful = withStrategy(openai({ model: "gpt-4o-mini" }), { mode: "reflection", planning: true });
 * defineAgent({ card, model: careful });
 */
export function withStrategy(model: Model, options: StrategyOptions): Model {
  const mode = options.mode ?? "auto";
  if (!["auto", "cot", "react", "reflection", "tot"].includes(mode)) {
    throw new TypeError(`strategy.mode must be auto, cot, react, reflection or tot, got ${mode}`);
  }
  const branches = options.branches ?? 3;
  if (!Number.isInteger(branches) || branches < 2 || branches > 5) {
    throw new TypeError(`strategy.branches must be an integer from 2 to 5, got ${branches}`);
  }
  return {
    provider: model.provider,
    model: model.model,
    configProblems: (env) => model.configProblems?.(env) ?? [],
    capabilities: model.capabilities,
    streamBatches: (request, callOptions) =>
      run(model, { ...options, mode, branches }, request, callOptions ?? {}),
  };
}

async function* run(
  model: Model,
  options: StrategyOptions & { mode: StrategyMode; branches: number },
  request: ModelRequest,
  callOptions: CallOptions,
): AsyncIterable<StreamEvent[]> {
  let req = request;
  if (options.tools === false) req = { ...req, tools: [], toolChoice: undefined };
  if (options.memory === false) req = { ...req, messages: fromQuestion(req.messages) };
  if (options.mode === "cot" || options.mode === "react") {
    req = { ...req, system: joined(req.system, THINK[options.mode]) };
  }
  const spent: Spent = { usage: null, cost: null };
  const lead: StreamEvent[] = [];
  // A round that starts from the user's question is the turn's first: it gets the plan.
  if (options.planning && req.messages.at(-1)?.type === "message") {
    const plan = await collect(model, planRequest(req), callOptions, spent);
    if (plan.text) {
      lead.push({ type: "reasoning_delta", text: `Plan:\n${plan.text}\n` });
      req = { ...req, system: joined(req.system, `Your plan for this turn:\n${plan.text}`) };
    }
  }
  const drafter = options.drafting ?? model;
  if (options.mode === "tot") {
    const candidates: string[] = [];
    let candidatesEnd: StreamEvent[] | null = null;
    for (let i = 1; i <= options.branches; i++) {
      const branch = { ...req, system: joined(req.system, BRANCH(i, options.branches)) };
      const candidate = await collect(drafter, branch, callOptions, spent);
      if (candidate.calledTools && i === 1) {
        yield withSpent(led(candidate.events, lead), spent);
        return;
      }
      if (candidate.text && !candidate.calledTools) candidates.push(candidate.text);
      candidatesEnd = candidate.events;
    }
    if (candidates.length === 0) {
      yield withSpent(led(candidatesEnd ?? [], lead), spent);
      return;
    }
    const pick =
      candidates.length > 1
        ? await collect(model, pickRequest(req, candidates), callOptions, spent)
        : null;
    const best = pick ? pickedIndex(pick.text, candidates.length) : 0;
    lead.push({
      type: "reasoning_delta",
      text: `${candidates.map((c, i) => `Candidate ${i + 1}:\n${c}\n`).join("")}Chosen: ${best + 1}\n`,
    });
    const events = (pick ?? { events: candidatesEnd ?? [] }).events.filter(
      (e) => e.type !== "text_delta",
    );
    yield withSpent(led(events, lead, candidates[best]), spent);
    return;
  }
  if (options.mode === "reflection" || options.drafting) {
    const draft = await collect(drafter, req, callOptions, spent);
    if (draft.calledTools || !draft.text) {
      yield withSpent(led(draft.events, lead), spent);
      return;
    }
    lead.push({ type: "reasoning_delta", text: `Draft:\n${draft.text}\n` });
    req = {
      ...req,
      messages: [...req.messages, said("assistant", draft.text), said("user", REVIEW)],
    };
  }
  // The last call streams through; what came before leads its first batch.
  let first = true;
  for await (const batch of model.streamBatches(req, callOptions)) {
    const events = first && lead.length > 0 ? led(batch, lead) : batch;
    first = false;
    yield spent.usage || spent.cost !== null ? withSpent(events, spent) : events;
  }
}

/**
 * `lead` (reasoning of earlier calls) right after the call's `message_start`, and `text`
 * as the answer's text right before its `message_end`.
 */
function led(events: StreamEvent[], lead: StreamEvent[], text?: string): StreamEvent[] {
  const start = events.findIndex((e) => e.type === "message_start");
  const out = [...events.slice(0, start + 1), ...lead, ...events.slice(start + 1)];
  if (text === undefined) return out;
  const end = out.findIndex((e) => e.type === "message_end");
  const at = end < 0 ? out.length : end;
  return [...out.slice(0, at), { type: "text_delta", text }, ...out.slice(at)];
}

interface Spent {
  usage: Usage | null;
  cost: number | null;
}

/** One whole call; its usage and cost join `spent`. */
async function collect(
  model: Model,
  request: ModelRequest,
  options: CallOptions,
  spent: Spent,
): Promise<{ text: string; calledTools: boolean; events: StreamEvent[] }> {
  const events: StreamEvent[] = [];
  let text = "";
  let calledTools = false;
  for await (const batch of model.streamBatches(request, options)) {
    for (const event of batch) {
      if (event.type === "text_delta") text += event.text;
      else if (event.type === "tool_call_start") calledTools = true;
      else if (event.type === "message_end") {
        spent.usage = addUsage(spent.usage, event.usage);
        if (event.costEstimate !== null) spent.cost = (spent.cost ?? 0) + event.costEstimate;
        // Its usage is counted once, in the round's last message_end.
        events.push({ ...event, usage: null, costEstimate: null });
        continue;
      }
      events.push(event);
    }
  }
  return { text: text.trim(), calledTools, events };
}

/** The round's last message_end carries what every call of the round spent. */
function withSpent(events: StreamEvent[], spent: Spent): StreamEvent[] {
  return events.map((event) =>
    event.type === "message_end"
      ? {
          ...event,
          usage: addUsage(spent.usage, event.usage),
          costEstimate:
            spent.cost === null && event.costEstimate === null
              ? null
              : (spent.cost ?? 0) + (event.costEstimate ?? 0),
        }
      : event,
  );
}

/**
 * Which candidate a pick names (0-based): the first `[n]`, else the first number, within
 * range; the first candidate when it names none.
 */
export function pickedIndex(answer: string, count: number): number {
  for (const pattern of [/\[(\d+)\]/g, /\b(\d+)\b/g]) {
    for (const match of answer.matchAll(pattern)) {
      const n = Number(match[1]);
      if (n >= 1 && n <= count) return n - 1;
    }
  }
  return 0;
}

function pickRequest(request: ModelRequest, candidates: string[]): ModelRequest {
  return {
    ...request,
    tools: [],
    toolChoice: undefined,
    outputSchema: undefined,
    messages: [...request.messages, said("user", PICK(candidates))],
  };
}

function planRequest(request: ModelRequest): ModelRequest {
  return {
    ...request,
    tools: [],
    toolChoice: undefined,
    outputSchema: undefined,
    messages: [...request.messages, said("user", PLAN)],
  };
}

/** The items from the newest user message on, and the instructions before it. */
function fromQuestion(messages: Item[]): Item[] {
  const at = messages.findLastIndex(isUserMessage);
  if (at <= 0) return messages;
  return [...messages.slice(0, at).filter(isInstruction), ...messages.slice(at)];
}

function said(role: "user" | "assistant", text: string): Item {
  return MessageItem.parse({ type: "message", role, content: text });
}

function joined(system: string | undefined, more: string): string {
  return system ? `${system}\n\n${more}` : more;
}
