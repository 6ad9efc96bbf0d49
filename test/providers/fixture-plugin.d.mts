import type { Plugin } from "vitest/config";
/** Serves `test/fixtures/providers` to tests as `virtual:provider-fixtures`. */
export function providerFixtures(root?: string): Plugin;
export const FIXTURES_ROOT: string;
