/**
 * An agent registry (A9): `npm run dev:registry` serves it on http://localhost:8788 with
 * one API key, `dev-key`, for trying it locally. Deployed, set the keys as a secret:
 * `npx wrangler secret put REGISTRY_API_KEYS -c examples/registry.wrangler.toml`
 * (comma-separated keys, or JSON `{"<key>": {"subject": "...", "tenant": "..."}}`).
 * It lists a card only when the agent's URL serves that card (while the registry runs on
 * localhost, agents on localhost are read too); a signed card also needs a proof of its key.
 */
import { defineRegistry } from "../src/registry/index";

const registry = defineRegistry({ auth: { apiKeys: { secret: "REGISTRY_API_KEYS" } } });

export const { EdgelinkRegistry } = registry;
export default registry;
