import { SELF } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseArgs, UsageError } from "../../src/cli/args";
import { memory } from "../../src/cli/memory";
import { proc } from "../../src/cli/node";
import { styleFor } from "../../src/cli/output";
import { BASE, memoryApi, newCaller } from "../harness/memory/support";

type Json = Record<string, unknown>;

// The CLI's requests go to this test's agent; what it prints is captured.
let out: string[] = [];
const realFetch = globalThis.fetch;
const realWrite = proc.stdout.write;
const realErr = proc.stderr.write;
beforeEach(() => {
  out = [];
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
    SELF.fetch(input, init)) as typeof fetch;
  proc.stdout.write = (chunk: string) => out.push(chunk) > 0;
  proc.stderr.write = (chunk: string) => out.push(chunk) > 0;
});
afterEach(() => {
  globalThis.fetch = realFetch;
  proc.stdout.write = realWrite;
  proc.stderr.write = realErr;
});

/** `edgelink memory SUB URL ...ARGS --json` as `user`: its exit code (as main answers it). */
async function cli(user: string, ...words: string[]): Promise<number> {
  const argv = [
    ...words.slice(0, 1),
    BASE,
    ...words.slice(1),
    "--header",
    `X-User: ${user}`,
    "--json",
  ];
  const style = styleFor(proc.stdout, true);
  try {
    return await memory({ args: parseArgs(argv), style, errStyle: style, json: true });
  } catch (error) {
    if (!(error instanceof UsageError)) console.error(error);
    return error instanceof UsageError ? 2 : 1;
  }
}

describe("edgelink memory: the CLI", () => {
  it("K8: add, list, search, delete and erase the caller's memory; erase asks for --yes", async () => {
    const alice = newCaller("alice");
    expect(await cli(alice.user, "add", "The user plays chess.")).toBe(0);
    out = [];
    expect(await cli(alice.user, "list", "--kind", "fact")).toBe(0);
    const page = JSON.parse(out.join("")) as { items: Json[] };
    expect(page.items.map((i) => i.claim)).toEqual(["The user plays chess."]);
    out = [];
    expect(await cli(alice.user, "search", "chess")).toBe(0);
    expect((JSON.parse(out.join("")) as { facts: Json[] }).facts).toHaveLength(1);
    expect(await cli(alice.user, "delete", page.items[0]?.id as string)).toBe(0);
    expect((await memoryApi(alice, "GET", "/memory?kind=fact")).body.items).toEqual([]);
    await cli(alice.user, "add", "The user plays go.");
    expect(await cli(alice.user, "erase")).toBe(2);
    expect((await memoryApi(alice, "GET", "/memory?kind=fact")).body.items).toHaveLength(1);
    expect(await cli(alice.user, "erase", "--yes")).toBe(0);
    expect((await memoryApi(alice, "GET", "/memory?kind=fact")).body.items).toEqual([]);
    expect(await cli(alice.user, "list", "--kind", "bogus")).toBe(2);
  });

  it("K2: entity names or describes an entity with its type, aliases and properties; a bad property is a usage error", async () => {
    const alice = newCaller("alice");
    const words = ["entity", "Ana", "--type", "Person", "--description", "My sister"];
    const props = ["--property", "city=Lisbon", "--property", "age=31", "--alias", "Annie"];
    expect(await cli(alice.user, ...words, ...props)).toBe(0);
    expect(await cli(alice.user, "entity", "annie", "--property", "city=Porto")).toBe(0);
    const listed = await memoryApi(alice, "GET", "/memory?kind=entity");
    expect(listed.body.items).toMatchObject([
      {
        name: "Ana",
        type: "Person",
        aliases: ["Annie"],
        description: "My sister",
        properties: { city: "Porto", age: 31 },
      },
    ]);
    expect(await cli(alice.user, "entity", "Ana", "--property", "no-equals-sign")).toBe(2);
  });
});
