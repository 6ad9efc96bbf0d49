import { Messages } from "../../src/models/message";
import type { Task } from "../../src/models/task";

/** A submitted task with one user message, as `TaskStore.create` takes it. */
export function taskFixture(id: string, contextId = "c"): Task {
  const now = new Date().toISOString();
  return {
    id,
    contextId,
    status: { state: "submitted", message: null, timestamp: now },
    history: [Messages.user("hi")],
    artifacts: [],
    metadata: {},
    stateHistory: [],
    createdAt: now,
    flowState: {},
  };
}
