/**
 * `edgelink/testing`: helpers for testing your agent. `fakeModel` answers as a provider
 * would, tool calls included, with no network and no key, and records what it was asked;
 * `composePrompt` shows the system prompt an `instructions` composition produces;
 * `AgentResult` types what a model-backed turn records in `metadata.result`.
 * Like `edgelink`, it runs in Workers (the Workers vitest pool).
 * @example
 * ```ts
 * import { fakeModel } from "edgelink/testing";
 * const model = fakeModel(["Hello!"]);
 * ```
 * @packageDocumentation
 */
export type { AgentResult } from "../agent/agent-result";
export { composePrompt, type PromptCompositionInput } from "../agent/prompt";
export {
  type FakeModel,
  type FakeModelOptions,
  type FakeReply,
  type FakeToolCall,
  fakeModel,
} from "./fake-model";
