/** Swaps the `ws` export Miniflare resolves for a subclass without compression; idempotent. */
export function withoutWebSocketDeflate(): void;
