declare namespace Cloudflare {
  interface Env {
    EDGELINK_CONTEXT: DurableObjectNamespace;
    EDGELINK_INDEX: DurableObjectNamespace;
    /** The registry tests' object (test/harness/registry/wrangler.toml). */
    EDGELINK_REGISTRY: DurableObjectNamespace;
    /** The agents the registry tests read cards from (test/harness/registry/worker.ts). */
    FAKE_AGENTS: DurableObjectNamespace;
    DEMO_CHUNK_DELAY_MS: string;
    /** The memory store tests' objects (test/harness/memory/wrangler.toml). */
    STORE_MEMORY: DurableObjectNamespace;
  }
}

/** A file's text, as Vite's `?raw` import gives it (the docs a test checks against code). */
declare module "*.md?raw" {
  const text: string;
  export default text;
}
