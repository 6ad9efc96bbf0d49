import { expect } from "vitest";
import type { ItemInput } from "../../src/history/items";
import { ProviderError } from "../../src/providers/base/errors";
import {
  type CallOptions,
  type Model,
  ModelRequest,
  type ModelRequestInput,
  type StreamEvent,
  type ToolCall,
  type Usage,
} from "../../src/providers/base/types";
import { collectBatches, FakeProvider, fixtureBytes, fixturePaths } from "./fake-provider";

/**
 * Helpers shared by the Chat Completions adapter tests (OpenAI, OpenAI-compatible,
 * Workers AI): replaying a fixture under several chunkings, summarizing events, and
 * rebuilding a normalized request from a recorded Chat Completions body.
 */

/** Seeds and chunk sizes: one read for the whole body, then splits of 1..n bytes. */
export const CHUNKINGS: { seed: number; maxChunk: number }[] = [
  { seed: 1, maxChunk: 1 << 20 },
  { seed: 2, maxChunk: 1 },
  { seed: 3, maxChunk: 5 },
  { seed: 4, maxChunk: 16 },
];

/** For bodies over 8 KB, byte-by-byte reads take too long; splits of up to 16 bytes still cut characters. */
const LARGE_CHUNKINGS: { seed: number; maxChunk: number }[] = [
  { seed: 1, maxChunk: 1 << 20 },
  { seed: 2, maxChunk: 16 },
  { seed: 3, maxChunk: 61 },
];

function chunkingsFor(fixture: string): { seed: number; maxChunk: number }[] {
  return fixtureBytes(fixture).length > 8192 ? LARGE_CHUNKINGS : CHUNKINGS;
}

export async function run(
  model: Model,
  request: ModelRequestInput,
  options: CallOptions = {},
): Promise<StreamEvent[]> {
  return collectBatches(model.streamBatches(ModelRequest.parse(request), options));
}

/**
 * The events with generated tool-call ids (`call_<uuid>`, made up where a server sends
 * none) replaced by `call_#1`, `call_#2`... in order, so runs can be compared.
 */
export function stableIds(events: StreamEvent[]): StreamEvent[] {
  const names = new Map<string, string>();
  const rename = (id: string) => {
    if (!/^call_[0-9a-f]{8}-[0-9a-f-]{27}$/.test(id)) return id;
    if (!names.has(id)) names.set(id, `call_#${names.size + 1}`);
    return names.get(id) as string;
  };
  return events.map((event) => {
    if (event.type === "tool_call_start" || event.type === "tool_call_delta") {
      return { ...event, id: rename(event.id) };
    }
    if (event.type === "tool_call_end") {
      return { ...event, call: { ...event.call, id: rename(event.call.id) } };
    }
    return event;
  });
}

/** The error a call ends with (and the events it sent before), or a failed assertion. */
export async function failure(
  model: Model,
  request: ModelRequestInput,
  options: CallOptions = {},
): Promise<{ error: ProviderError; events: StreamEvent[] }> {
  const events: StreamEvent[] = [];
  try {
    for await (const batch of model.streamBatches(ModelRequest.parse(request), options)) {
      events.push(...batch);
    }
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return { error: error as ProviderError, events };
  }
  throw new Error(`expected the call to fail, got ${events.length} events`);
}

/**
 * Replays one fixture under every chunking and checks that the events do not depend on
 * where the network split the bytes; returns the events and the fakes (for requests).
 */
export async function replay(
  model: Model,
  fixture: string,
  request: ModelRequestInput,
  env: object = {},
): Promise<{ events: StreamEvent[]; fakes: FakeProvider[] }> {
  const fakes: FakeProvider[] = [];
  let first: StreamEvent[] | null = null;
  for (const chunking of chunkingsFor(fixture)) {
    const fake = new FakeProvider(chunking).reply({ fixture });
    fakes.push(fake);
    const events = await run(model, request, { fetch: fake.fetch, env });
    if (first === null) first = events;
    else {
      expect(stableIds(events), `chunking ${JSON.stringify(chunking)}`).toEqual(stableIds(first));
    }
  }
  return { events: first ?? [], fakes };
}

/**
 * Same as `replay`, for a stream that must end with an error. The error must not depend
 * on the chunking. The events before it may: the core's `decodeBody` drops the events of
 * the read in which the decoder threw, so a coarser chunking shows fewer of them; each
 * run's events must be a prefix of the finest run's, which is returned.
 */
export async function replayFailure(
  model: Model,
  fixture: string,
  request: ModelRequestInput,
  env: object = {},
): Promise<{ error: ProviderError; events: StreamEvent[] }> {
  const results: { error: ProviderError; events: StreamEvent[] }[] = [];
  for (const chunking of chunkingsFor(fixture)) {
    const fake = new FakeProvider(chunking).reply({ fixture });
    results.push(await failure(model, request, { fetch: fake.fetch, env }));
  }
  const finest = results.reduce((a, b) => (b.events.length > a.events.length ? b : a));
  for (const result of results) {
    expect(result.error.message).toBe(finest.error.message);
    expect(result.error.code).toBe(finest.error.code);
    expect(stableIds(result.events)).toEqual(
      stableIds(finest.events.slice(0, result.events.length)),
    );
  }
  return finest;
}

export interface Summary {
  start: Extract<StreamEvent, { type: "message_start" }>;
  end: Extract<StreamEvent, { type: "message_end" }>;
  text: string;
  reasoning: string;
  calls: ToolCall[];
  usages: Usage[];
}

/**
 * What a stream adds up to, after checking its shape (G13): `message_start` first, one
 * `message_end` last, each tool call started, fed and ended once, its deltas adding up to
 * its arguments.
 */
export function summarize(events: StreamEvent[]): Summary {
  expect(events[0]?.type).toBe("message_start");
  expect(events.at(-1)?.type).toBe("message_end");
  expect(events.filter((e) => e.type === "message_start")).toHaveLength(1);
  expect(events.filter((e) => e.type === "message_end")).toHaveLength(1);
  const started = new Map<number, { id: string; name: string; args: string }>();
  const calls: ToolCall[] = [];
  for (const event of events) {
    if (event.type === "tool_call_start") {
      expect(started.has(event.index)).toBe(false);
      started.set(event.index, { id: event.id, name: event.name, args: "" });
    } else if (event.type === "tool_call_delta") {
      const call = started.get(event.index);
      expect(call?.id).toBe(event.id);
      if (call) call.args += event.argumentsDelta;
    } else if (event.type === "tool_call_end") {
      const call = started.get(event.index);
      expect(call).toBeDefined();
      expect(event.call.id).toBe(call?.id);
      expect(event.call.name).toBe(call?.name);
      expect(event.call.arguments).toBe(call?.args);
      calls.push(event.call);
    }
  }
  expect(calls).toHaveLength(started.size);
  const of = <T extends StreamEvent["type"]>(type: T) =>
    events.filter((e): e is Extract<StreamEvent, { type: T }> => e.type === type);
  return {
    start: of("message_start")[0] as Summary["start"],
    end: of("message_end")[0] as Summary["end"],
    text: of("text_delta")
      .map((e) => e.text)
      .join(""),
    reasoning: of("reasoning_delta")
      .map((e) => e.text)
      .join(""),
    calls,
    usages: of("usage").map((e) => e.usage),
  };
}

/** A recorded Chat Completions body (`<name>.request.json`). */
export interface RecordedChatBody {
  model: string;
  messages: RecordedMessage[];
  tools?: {
    type: string;
    function: { name: string; description?: string; parameters: object; strict?: boolean };
  }[];
  tool_choice?: unknown;
  [key: string]: unknown;
}

interface RecordedMessage {
  role: string;
  content?: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/**
 * The normalized request equivalent to a recorded body: its messages as conversation
 * items, its tools as tool specs, its tool choice. The rest (sampling, limits) is left to
 * each test, so that what differs is named there.
 */
export function requestFromRecorded(body: RecordedChatBody): ModelRequestInput {
  const items: ItemInput[] = [];
  const names = new Map<string, string>();
  for (const message of body.messages) {
    if (message.role === "tool") {
      items.push({
        type: "function_call_output",
        callId: message.tool_call_id ?? "",
        name: names.get(message.tool_call_id ?? "") ?? "",
        output: message.content ?? "",
      });
      continue;
    }
    if (message.content != null || !message.tool_calls) {
      items.push({
        type: "message",
        role: message.role as "system" | "user" | "assistant",
        content: message.content ?? "",
      });
    }
    for (const call of message.tool_calls ?? []) {
      names.set(call.id, call.function.name);
      items.push({
        type: "function_call",
        callId: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      });
    }
  }
  const request: ModelRequestInput = { messages: items };
  if (body.tools) {
    request.tools = body.tools.map((tool) => ({
      name: tool.function.name,
      description: tool.function.description ?? "",
      parameters: tool.function.parameters as Record<string, never>,
    }));
  }
  const choice = body.tool_choice;
  if (choice === "auto" || choice === "none" || choice === "required") request.toolChoice = choice;
  return request;
}

/** Fixture files of a provider folder, by base name and kind. */
export function fixtureFiles(folder: string): string[] {
  return fixturePaths().filter((path) => path.startsWith(`${folder}/`));
}

/**
 * Checks that every file of a fixture folder is used by a test: bodies (`.sse`, error
 * `.json`) by replays, `.request.json` by shape checks, and `.response-meta.json` by the
 * replay of their body (the fake provider serves the recorded status and headers).
 */
export function expectAllCovered(
  folder: string,
  covered: { bodies: string[]; requests: string[] },
): void {
  const bodies = new Set(covered.bodies);
  const requests = new Set(covered.requests);
  const missing: string[] = [];
  for (const path of fixtureFiles(folder)) {
    const file = path.slice(folder.length + 1);
    if (file.endsWith(".request.json")) {
      if (!requests.has(file.slice(0, -".request.json".length))) missing.push(path);
    } else if (file.endsWith(".response-meta.json")) {
      const name = file.slice(0, -".response-meta.json".length);
      if (!bodies.has(`${name}.sse`) && !bodies.has(`${name}.json`)) missing.push(path);
    } else if (!bodies.has(file)) missing.push(path);
  }
  expect(missing).toEqual([]);
  expect(fixtureFiles(folder).length).toBeGreaterThan(0);
}
