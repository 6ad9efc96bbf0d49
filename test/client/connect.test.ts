/**
 * The A2A client inside workerd: a Worker calling an agent through a `fetch` it is given
 * (here the test worker's own `SELF`, as a service binding would be), with no network.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { chooseInterface } from "../../src/client/connect";
import {
  type AgentEvent,
  answerOf,
  connect,
  TaskNotFoundError,
  textOf,
} from "../../src/client/index";
import { parsePeerCard } from "../../src/protocol/card/peer-card";
import { BASE } from "../support/helpers";

const viaSelf: typeof fetch = (input, init) => SELF.fetch(input, init);

describe.each(["JSONRPC", "HTTP+JSON"] as const)("client in workerd over %s", (binding) => {
  it("connects through a given fetch and sends, streams, gets and lists", async () => {
    const agent = await connect(BASE, { fetch: viaSelf, binding });
    expect(agent.isEdgelink).toBe(true);
    expect(agent.binding).toBe(binding);

    const sent = await agent.send("inside workerd");
    expect(sent.kind).toBe("task");
    expect(answerOf(sent)).toBe("You said: inside workerd");

    const events: AgentEvent[] = [];
    for await (const event of agent.stream("a b", {
      contextId: sent.kind === "task" ? sent.task.contextId : undefined,
    })) {
      events.push(event);
    }
    expect(events[0]?.kind).toBe("task");
    const chunks = events.flatMap((e) =>
      e.kind === "artifact-update" ? [textOf(e.artifact.parts)] : [],
    );
    expect(chunks.join("")).toBe("You said: a b");

    const id = sent.kind === "task" ? sent.task.id : "";
    expect((await agent.getTask(id)).status.state).toBe("completed");
    await expect(agent.getTask("missing")).rejects.toBeInstanceOf(TaskNotFoundError);

    const contextId = sent.kind === "task" ? sent.task.contextId : "";
    const page = await agent.listTasks({ contextId }).next();
    expect(page.value?.tasks.length).toBe(2);
  });
});

describe("the interface the client chooses", () => {
  const iface = (url: string, protocolVersion: string, protocolBinding = "JSONRPC") => ({
    url,
    protocolBinding,
    protocolVersion,
  });
  const cardWith = (...supportedInterfaces: ReturnType<typeof iface>[]) =>
    parsePeerCard({ name: "Peer", supportedInterfaces, skills: [] });

  it("A9 stays on the origin of the card's first interface: v1.0 there, else v0.3 there, before another origin's v1.0", () => {
    const mixed = cardWith(
      iface("https://agent.example/", "0.3"),
      iface("https://other.example/rpc", "1.0"),
    );
    expect(chooseInterface(mixed).url).toBe("https://agent.example/");
    const both = cardWith(
      iface("https://agent.example/v03", "0.3"),
      iface("https://other.example/rpc", "1.0"),
      iface("https://agent.example/v1", "1.0", "HTTP+JSON"),
    );
    expect(chooseInterface(both).url).toBe("https://agent.example/v1");
    // Only when the card's own origin offers nothing this client speaks does another count.
    const elsewhere = cardWith(
      iface("https://agent.example/grpc", "1.0", "GRPC"),
      iface("https://other.example/rpc", "1.0"),
    );
    expect(chooseInterface(elsewhere).url).toBe("https://other.example/rpc");
  });
});
