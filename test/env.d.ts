declare namespace Cloudflare {
  interface Env {
    EDGELINK_CONTEXT: DurableObjectNamespace;
    EDGELINK_INDEX: DurableObjectNamespace;
    DEMO_CHUNK_DELAY_MS: string;
  }
}
