import { afterEach, describe, expect, it, vi } from "vitest";
import { describeFailure, publicFailure } from "../../../src/agent/model/model-failure";
import { AllProvidersFailedError, ProviderError } from "../../../src/providers/base/errors";

const ids = { taskId: "t1", contextId: "c1" };
const secret = "Your prompt 'the launch codes are 0000' was rejected";

const http = (provider: string, status: number, code?: string) =>
  new ProviderError({ provider, kind: "http", status, code, message: secret });

describe("a failed model call as a task reports it", () => {
  afterEach(() => vi.restoreAllMocks());

  it("H6 names the provider, its status and code and a reference; the error text is logged only", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const failure = http("openai", 404, "model_not_found");
    const reason = publicFailure(failure, failure, ids);
    expect(reason).toMatch(
      /^The model provider openai failed \(HTTP 404, model_not_found; reference ref_\w+\)$/,
    );
    expect(reason).not.toContain("launch codes");
    const reference = /reference (ref_\w+)/.exec(reason)?.[1] ?? "";
    expect(logged).toHaveBeenCalledOnce();
    expect(String(logged.mock.calls[0]?.[0])).toContain(reference);
  });

  it("H1 a fallback's reason names each member's failure, in order", () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const failure = new AllProvidersFailedError("fallback", [
      http("openai", 429),
      new ProviderError({ provider: "anthropic", kind: "network", message: secret }),
    ]);
    const reason = publicFailure(failure, failure, ids);
    expect(reason).toContain("(openai: HTTP 429; anthropic: network; reference ");
    expect(describeFailure(failure).failures).toMatchObject([
      { provider: "openai", kind: "http", status: 429, retryable: true },
      { provider: "anthropic", kind: "network" },
    ]);
  });

  it("H6 a failure that is not the provider's says only that the call failed, with its reference", () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const reason = publicFailure(null, new Error(secret), ids);
    expect(reason).toMatch(/^The model call failed \(reference ref_\w+\)$/);
  });

  it("H6 the metadata keeps the error's fields, never its message", () => {
    const described = describeFailure(http("gemini", 400, "INVALID_ARGUMENT"));
    expect(described).toEqual({
      provider: "gemini",
      kind: "http",
      status: 400,
      code: "INVALID_ARGUMENT",
      requestId: null,
      retryable: false,
    });
  });
});
