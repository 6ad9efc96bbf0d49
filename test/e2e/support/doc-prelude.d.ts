/**
 * Names the documentation's fragments use without declaring them: the agent card, the
 * handler or the model of the example around them. Keep this list short; a block that
 * needs more should declare it.
 */
import type { AgentCardInput, AgentHandler, Model, Tools } from "edgelink";
import type { Task } from "edgelink/client";

declare global {
  const card: AgentCardInput;
  const handler: AgentHandler;
  const model: Model;
  const tools: Tools;
  const env: Record<string, unknown>;
  const task: Task;
  /** Node's, for the examples that run in Node (the client, the CLI's neighbours). */
  const process: {
    env: Record<string, string | undefined>;
    stdout: { write(text: string): boolean };
  };
}
