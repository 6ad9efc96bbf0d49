import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BUNDLE_HEADING } from "../../src/memory/render";
import { rpc } from "../helpers";
import { answerOf, ask, claims, headersOf, memoryApi, newCaller, until } from "./support";
import { Wire } from "./wire";

type Json = Record<string, unknown>;

let wire: Wire;
beforeEach(() => {
  wire = new Wire();
});
afterEach(() => wire.release());

const addFact = async (caller: ReturnType<typeof newCaller>, claim: string) => {
  const { status, body } = await memoryApi(caller, "POST", "/memory/facts", { claim });
  expect(status, JSON.stringify(body)).toBe(200);
  return ((body.results as Json[])[0] as Json).id as string;
};

describe("recall before each model turn", () => {
  it("K7: the model's request carries what is remembered about the caller, as a section after the instructions", async () => {
    const alice = newCaller("alice");
    await addFact(alice, "The user prefers green tea.");
    wire.turn("Green tea it is.");
    const task = await ask(alice, "What tea should I order?");
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    const system = wire.systems[0] as string;
    expect(system.startsWith("You are a helpful assistant.\n\n")).toBe(true);
    const section = system.slice(system.indexOf(BUNDLE_HEADING));
    expect(system.indexOf(BUNDLE_HEADING)).toBeGreaterThan(0);
    expect(section).toContain("The user prefers green tea.");
  });

  it("K8: another owner, and the same user in another tenant, recall nothing of it", async () => {
    const alice = newCaller("alice");
    await addFact(alice, "The user is allergic to peanuts.");
    const bob = { user: `bob-${alice.user}` };
    const aliceElsewhere = { user: alice.user, tenant: "t2" };
    wire.turn("Hello Bob.", "Hello again.");
    await ask(bob, "What am I allergic to?");
    await ask(aliceElsewhere, "What am I allergic to?");
    expect(wire.systems).toEqual(["You are a helpful assistant.", "You are a helpful assistant."]);
  });

  it("K7: with nothing remembered, the instructions go alone (no empty section)", async () => {
    wire.turn("Hi.");
    await ask(newCaller("new"), "Hello");
    expect(wire.systems).toEqual(["You are a helpful assistant."]);
  });
});

describe("extraction after each completed turn", () => {
  it("K3: a fact the user states is extracted off the answer's path and recalled in a later conversation", async () => {
    const alice = newCaller("alice");
    wire.turn("Noted!").extraction({
      facts: [
        {
          claim: "The user prefers window seats.",
          confidence: 0.9,
          action: "add",
          target: "",
          entities: [],
          validFrom: "",
          validTo: "",
        },
      ],
      entities: [],
    });
    const task = await ask(alice, "I always want a window seat.");
    expect(answerOf(task)).toBe("Noted!");
    await until("extraction", () => claims(alice), (c) => c.length === 1);
    expect(await claims(alice)).toEqual(["The user prefers window seats."]);
    // The extraction call saw the user's message and the structured-output schema.
    const call = wire.extractions[0] as Json;
    expect(JSON.stringify(call.messages)).toContain("I always want a window seat.");
    wire.turn("A window seat, as you like.");
    await ask(alice, "Book me a flight to Lisbon.");
    expect(wire.systems.at(-1)).toContain("The user prefers window seats.");
  });

  it("K3: extraction's usage and cost are added to the task's, itemized under memory.extraction", async () => {
    const alice = newCaller("alice");
    wire.turn("Sure.").extraction({ facts: [], entities: [] });
    const task = await ask(alice, "I live in Porto.");
    const before = (task.metadata as Json).usage as Json;
    const after = await until(
      "usage recorded",
      async () =>
        ((await rpc("GetTask", { id: task.id }, { headers: headersOf(alice) })).body.result as Json)
          .metadata as Json,
      (m) => (m.memory as Json | undefined)?.extraction !== undefined,
    );
    expect(before.totalTokens).toBe(120);
    expect((after.usage as Json).totalTokens).toBe(240);
    expect(((after.memory as Json).extraction as Json).calls).toBe(1);
  });

  it("K4: a correcting fact supersedes the one it was compared with; the old one is no longer recalled", async () => {
    const alice = newCaller("alice");
    const old = await addFact(alice, "The user prefers green tea.");
    wire.turn("Got it.").extraction({
      facts: [
        {
          claim: "The user prefers black tea.",
          confidence: 0.9,
          action: "update",
          target: old,
          entities: [],
          validFrom: "",
          validTo: "",
        },
      ],
      entities: [],
    });
    await ask(alice, "Actually I prefer black tea now.");
    // The model was shown the existing fact by id, to decide against it.
    expect(JSON.stringify((wire.extractions[0] as Json).messages)).toContain(old);
    await until("supersession", () => claims(alice), (c) => c.includes("The user prefers black tea."));
    expect(await claims(alice)).toEqual(["The user prefers black tea."]);
    const { body } = await memoryApi(alice, "GET", `/memory/fact/${old}`);
    expect(body.supersededBy).toBeTypeOf("string");
    wire.turn("Black tea.");
    await ask(alice, "What tea do I like?");
    expect(wire.systems.at(-1)).toContain("black tea");
    expect(wire.systems.at(-1)).not.toContain("green tea");
  });

  it("K3: delete removes the fact it targets; nothing writes nothing; a duplicate is never stored twice", async () => {
    const alice = newCaller("alice");
    const gone = await addFact(alice, "The user has a dog.");
    await addFact(alice, "The user lives in Porto.");
    wire.turn("Sorry to hear.").extraction({
      facts: [
        { claim: "The user has a dog.", confidence: 0.9, action: "delete", target: gone, entities: [], validFrom: "", validTo: "" },
        { claim: "The user lives in Porto.", confidence: 0.9, action: "none", target: "", entities: [], validFrom: "", validTo: "" },
        { claim: "the user   lives in porto.", confidence: 0.9, action: "add", target: "", entities: [], validFrom: "", validTo: "" },
      ],
      entities: [],
    });
    await ask(alice, "My dog passed away. I still live in Porto.");
    await until("deletion", () => claims(alice), (c) => !c.includes("The user has a dog."));
    expect(await claims(alice)).toEqual(["The user lives in Porto."]);
  });

  it("K3: an update or delete naming a fact the model was not shown changes nothing", async () => {
    const alice = newCaller("alice");
    const bob = newCaller("bob");
    const bobs = await addFact(bob, "The user likes jazz.");
    wire.turn("Ok.").extraction({
      facts: [{ claim: "x", confidence: 1, action: "delete", target: bobs, entities: [], validFrom: "", validTo: "" }],
      entities: [],
    });
    await ask(alice, "Forget that I like jazz.");
    await until("extraction answered", async () => wire.answered, (n) => n === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(await claims(bob)).toEqual(["The user likes jazz."]);
  });

  it("K3: the answer never waits for extraction: with the extraction call hanging, the answer arrives", async () => {
    const alice = newCaller("alice");
    wire.turn("Here is your answer.").extraction("hang");
    const started = Date.now();
    const task = await ask(alice, "I am vegetarian. What should I cook?");
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    expect(answerOf(task)).toBe("Here is your answer.");
    // The extraction call was made, and is still hanging.
    await until("extraction started", async () => wire.extractions.length, (n) => n === 1);
    expect(wire.answered).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
