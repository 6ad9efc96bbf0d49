/**
 * The A2A client inside workerd: a Worker calling an agent through a `fetch` it is given
 * (here the test worker's own `SELF`, as a service binding would be), with no network.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  type AgentEvent,
  answerOf,
  connect,
  TaskNotFoundError,
  textOf,
} from "../../src/client/index";
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
