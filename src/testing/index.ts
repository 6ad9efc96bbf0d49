/**
 * `edgelink/testing`: helpers for testing your agent. `fakeModel` answers as a provider
 * would, tool calls included, with no network and no key, and records what it was asked.
 * Like `edgelink`, it runs in Workers (the Workers vitest pool).
 * @example
 * ```ts
 * import { fakeModel } from "edgelink/testing";
 * const model = fakeModel(["Hello!"]);
 * ```
 * @packageDocumentation
 */
export {
  type FakeModel,
  type FakeModelOptions,
  type FakeReply,
  type FakeToolCall,
  fakeModel,
} from "./fake-model";
