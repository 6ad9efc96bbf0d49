import type { Plugin } from "vitest/config";
/** Serves `../shared/fixtures/providers` to tests as `virtual:provider-fixtures`. */
export function providerFixtures(root?: string): Plugin;
