import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { ownerOf } from "../../../src/agent/access/auth";
import { memory } from "../../../src/memory/index";
import { contextObjectName } from "../../../src/storage/ids";
import {
  ask,
  type Caller,
  claims,
  headersOf,
  memoryApi,
  newCaller,
  until,
} from "../../harness/memory/support";
import { Wire } from "../../harness/memory/wire";
import { withAgent } from "../../support/agent-override";
import { rpc, sleep, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;

let wire: Wire;
beforeEach(() => {
  wire = new Wire();
});

const PAST = "From past conversations";

/** The caller's recorded turns, newest first. */
async function turnsOf(caller: Caller): Promise<Json[]> {
  const { status, body } = await memoryApi(caller, "GET", "/memory?kind=turn");
  expect(status, JSON.stringify(body)).toBe(200);
  return body.items as Json[];
}

/**
 * Turns recording on in one live conversation's object (the test worker's agent keeps the
 * default, off), with extraction on as the test worker has it.
 */
async function recordIn(caller: Caller, contextId: string, tools = false): Promise<void> {
  const ns = env.EDGELINK_CONTEXT as DurableObjectNamespace;
  const owner = ownerOf({ scheme: "custom", subject: caller.user, tenant: caller.tenant ?? "" });
  const stub = ns.get(ns.idFromName(contextObjectName(caller.tenant ?? "", contextId, owner)));
  const recording = memory({
    extract: true,
    turns: { record: true, tools },
    limits: { extractionCallsPerHour: 50 },
  });
  await withAgent(stub, () => ({ memory: recording }));
}

/**
 * A new conversation, its first turn answered (and not recorded: recording is off), and
 * its extraction done, so it takes none of the extraction replies scripted next.
 */
async function conversation(caller: Caller): Promise<string> {
  const extracted = wire.extractions.length;
  wire.turn("Hello.");
  const contextId = (await ask(caller, "Hello")).contextId as string;
  await until(
    "the first turn's extraction",
    async () => wire.extractions.length,
    (n) => n > extracted,
  );
  return contextId;
}

const fact = (claim: string, action = "add", target = "") => ({
  facts: [{ claim, confidence: 0.9, action, target, entities: [], validFrom: "", validTo: "" }],
  entities: [],
});

describe("turns recorded by the agent", () => {
  it("K1: nothing is recorded by default; turned on, each completed turn's message and answer are recorded after the answer", async () => {
    const alice = newCaller("alice");
    const a = await conversation(alice);
    // Work after the answer (extraction is on in the test agent) has had its time.
    await sleep(300);
    expect(await turnsOf(alice)).toEqual([]);
    await recordIn(alice, a);
    wire.turn("Booked: the riverside venue.");
    const task = await ask(alice, "Please book the riverside venue for the party.", a);
    const recorded = await until(
      "recorded",
      () => turnsOf(alice),
      (t) => t.length === 2,
    );
    expect(recorded).toMatchObject([
      {
        role: "assistant",
        content: "Booked: the riverside venue.",
        contextId: a,
        index: 2,
        channel: "_global",
        taskId: task.id,
        metadata: {},
      },
      {
        role: "user",
        content: "Please book the riverside venue for the party.",
        contextId: a,
        index: 1,
        tokenCount: 12,
      },
    ]);
  });

  it("K7: a turn of conversation A reaches the model in conversation B of the same owner, quoted with its date; not in A, nor for another owner or tenant", async () => {
    const alice = newCaller("alice");
    const a = await conversation(alice);
    await recordIn(alice, a);
    wire.turn("Noted: the riverside venue.");
    await ask(alice, "We decided on the riverside venue for the party.", a);
    await until(
      "recorded",
      () => turnsOf(alice),
      (t) => t.length === 2,
    );
    const today = new Date().toISOString().slice(0, 10);
    // Conversation B: the past turns come after the instructions, as quoted conversation.
    wire.turn("The riverside venue.");
    await ask(alice, "What did we decide about the venue?");
    // Recalled memory is data in a fenced user-role message, never in the system prompt.
    const recalled = wire.recalled.at(-1) as string;
    expect(wire.systems.at(-1)).not.toContain(PAST);
    expect(recalled).toContain(PAST);
    expect(recalled).toContain(
      `- ${today}, the user said: "We decided on the riverside venue for the party."`,
    );
    expect(recalled).toContain(`- ${today}, you answered: "Noted: the riverside venue."`);
    // Conversation A has them in its own history: not quoted again.
    wire.turn("Yes, the riverside one.");
    await ask(alice, "Which venue again?", a);
    expect(wire.recalled.at(-1)).not.toContain(PAST);
    // Another owner, and the same user in another tenant.
    wire.turn("I do not know.", "I do not know.");
    await ask({ user: `bob-${alice.user}` }, "What did we decide about the venue?");
    await ask({ user: alice.user, tenant: "t2" }, "What did we decide about the venue?");
    expect(wire.systems.slice(-2)).toEqual([
      "You are a helpful assistant.",
      "You are a helpful assistant.",
    ]);
    expect(wire.recalled.slice(-2)).toEqual(["", ""]);
  });

  it("K1: tool turns are recorded only when turns.tools is on", async () => {
    const alice = newCaller("alice");
    const a = await conversation(alice);
    await recordIn(alice, a);
    wire.turn({ tool: "get_weather", args: { city: "Porto" } }, "It is sunny in Porto.");
    await ask(alice, "What is the weather in Porto?", a);
    const without = await until(
      "recorded",
      () => turnsOf(alice),
      (t) => t.length === 2,
    );
    expect(without.map((t) => t.role)).toEqual(["assistant", "user"]);
    const b = await conversation(alice);
    await recordIn(alice, b, true);
    wire.turn({ tool: "get_weather", args: { city: "Faro" } }, "It is sunny in Faro.");
    await ask(alice, "What is the weather in Faro?", b);
    const withTools = await until(
      "recorded",
      () => turnsOf(alice),
      (t) => t.length === 5,
    );
    expect(withTools.slice(0, 3)).toMatchObject([
      { role: "assistant", content: "It is sunny in Faro.", index: 3 },
      {
        role: "tool",
        content: "get_weather: Sunny in Faro",
        metadata: { tool: "get_weather", outcome: "ok" },
        index: 2,
      },
      { role: "user", content: "What is the weather in Faro?", index: 1 },
    ]);
  });

  it("K7: a correction wins: 'I live in Lisbon', then 'now I live in Porto', recalls Porto as current and never Lisbon", async () => {
    const alice = newCaller("alice");
    const a = await conversation(alice);
    await recordIn(alice, a);
    wire.turn("Lisbon is lovely.").extraction(fact("The user says they live in Lisbon."));
    await ask(alice, "I live in Lisbon.", a);
    await until(
      "learnt",
      () => claims(alice),
      (c) => c.length === 1,
    );
    await until(
      "recorded",
      () => turnsOf(alice),
      (t) => t.length === 2,
    );
    const listed = await memoryApi(alice, "GET", "/memory?kind=fact");
    const lisbon = ((listed.body.items as Json[])[0] as Json).id as string;
    // Conversation B: they moved; extraction supersedes the fact it was shown.
    const b = await conversation(alice);
    await recordIn(alice, b);
    wire
      .turn("Porto, noted.")
      .extraction(fact("The user says they live in Porto.", "update", lisbon));
    await ask(alice, "Now I live in Porto.", b);
    await until(
      "corrected",
      () => claims(alice),
      (c) => c.join() === "The user says they live in Porto.",
    );
    await until(
      "recorded",
      () => turnsOf(alice),
      (t) => t.length === 4,
    );
    // Conversation C: Porto is current, and nothing brings Lisbon back.
    wire.turn("You live in Porto.");
    await ask(alice, "Where do I live?");
    const recalled = wire.recalled.at(-1) as string;
    expect(recalled).toContain("The user says they live in Porto.");
    expect(recalled).toContain('the user said: "Now I live in Porto."');
    expect(recalled).not.toContain("Lisbon");
    expect(wire.systems.at(-1)).not.toContain("Lisbon");
  });
});

describe("turns and entities through the HTTP memory API", () => {
  const opsAsHandler = async (caller: Caller, ops: unknown[]) => {
    const { body } = await rpc(
      "SendMessage",
      { message: userMessage(`ops ${JSON.stringify(ops)}`) },
      { headers: { ...headersOf(caller), "X-Agent": "handler" } },
    );
    expect(body.result, JSON.stringify(body.error)).toBeDefined();
  };

  it("K1: turns are listed, searched, recalled and deleted through the API", async () => {
    const alice = newCaller("alice");
    await opsAsHandler(alice, [
      { op: "add_turn", role: "user", content: "The venue is the lighthouse", contextId: "c1" },
      { op: "add_turn", role: "assistant", content: "Lighthouse noted", contextId: "c1" },
    ]);
    const listed = await turnsOf(alice);
    expect(listed.map((t) => [t.index, t.role])).toEqual([
      [2, "assistant"],
      [1, "user"],
    ]);
    const found = await memoryApi(alice, "GET", "/memory?kind=turn&query=venue");
    expect((found.body.items as Json[]).map((t) => t.content)).toEqual([
      "The venue is the lighthouse",
    ]);
    const search = await memoryApi(alice, "POST", "/memory/search", {
      text: "which venue",
      contextId: "c2",
    });
    expect(search.status).toBe(200);
    expect((search.body.turns as Json[]).map((t) => t.content)).toEqual([
      "The venue is the lighthouse",
    ]);
    const id = (listed[1] as Json).id as string;
    expect((await memoryApi(alice, "DELETE", `/memory/turn/${id}`)).status).toBe(200);
    expect((await memoryApi(alice, "DELETE", `/memory/turn/${id}`)).status).toBe(404);
    expect((await turnsOf(alice)).map((t) => t.role)).toEqual(["assistant"]);
  });

  it("K2: an entity is named and described through the API, its properties merged; bad properties are a 400 naming the field", async () => {
    const alice = newCaller("alice");
    const added = await memoryApi(alice, "POST", "/memory/entities", {
      name: "Ana",
      type: "Person",
      description: "The user's sister",
      properties: { city: "Lisbon" },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const id = ((added.body.results as Json[])[0] as Json).id as string;
    await memoryApi(alice, "POST", "/memory/entities", {
      name: "ana",
      properties: { city: "Porto", job: "nurse" },
    });
    const got = await memoryApi(alice, "GET", `/memory/entity/${id}`);
    expect(got.body).toMatchObject({
      name: "Ana",
      type: "Person",
      description: "The user's sister",
      properties: { city: "Porto", job: "nurse" },
    });
    let deep: Json = { x: 1 };
    for (let i = 0; i < 6; i++) deep = { d: deep };
    for (const [body, field] of [
      [{ name: "Ana", properties: deep }, "body.properties"],
      [{ name: "Ana", properties: "text" }, "body.properties"],
      [{ name: "Ana", properties: { big: "x".repeat(5_000) } }, "body.properties"],
      [{ name: "Ana", description: "" }, "body.description"],
      [{ name: "Ana", colour: "red" }, "body"],
      [{ properties: {} }, "body.name"],
    ] as const) {
      const response = await memoryApi(alice, "POST", "/memory/entities", body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
  });
});
