import { defineRegistry } from "../../src/registry";

/** Small limits, so the tests reach each of them. */
export const TEST_LIMITS = { maxAgents: 5, maxPageSize: 3, maxTags: 6, maxCardChars: 4096 };

const registry = defineRegistry({
  auth: { apiKeys: { secret: "REGISTRY_KEYS" } },
  limits: TEST_LIMITS,
});

/** The registry with a clock the tests move forward (`advance`), instead of waiting. */
export class TestRegistry extends registry.EdgelinkRegistry {
  private offset = 0;

  protected override now(): number {
    return Date.now() + this.offset;
  }

  async advance(ms: number): Promise<void> {
    this.offset += ms;
  }
}

export default registry;
