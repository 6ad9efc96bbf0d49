import { A2AError } from "../protocol/errors";
import { clientIdProblem } from "../protocol/limits";

/**
 * The tenant a request names (§11.3 path prefix, or `params.tenant`), held to the limits
 * of any client-chosen id before it names an object: a 400 naming `field` otherwise.
 * @example
 * requestedTenant(c.req.param("tenant"), "tenant"); // "acme", or "" when none
 */
export function requestedTenant(value: unknown, field: string): string {
  if (value === undefined || value === null || value === "") return "";
  if (typeof value !== "string") {
    throw new A2AError("InvalidParams", `${field} must be a string`, {}, [
      { field, description: "must be a string" },
    ]);
  }
  const problem = clientIdProblem(value);
  if (problem !== null) {
    throw new A2AError("InvalidParams", `${field} ${problem}`, {}, [
      { field, description: problem },
    ]);
  }
  return value;
}
