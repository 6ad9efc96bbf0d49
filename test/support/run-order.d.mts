import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The order `npm test` starts its files in (see run-order.mjs). */
export default class LongestFirst extends BaseSequencer {
  sort(files: TestSpecification[]): Promise<TestSpecification[]>;
}
