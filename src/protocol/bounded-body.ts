/**
 * A response body read with a size limit, on Web APIs: the key-set fetches, the A2A
 * client and the card checks all read answers from servers they do not control.
 */

/**
 * The body as text, or null once it passes `limit` bytes. Counted as it arrives, so a
 * peer that sends no Content-Length (or a false one) cannot make the reader buffer without
 * end; a Content-Length over the limit is refused before anything is read. Errors while
 * reading (a cut connection) propagate to the caller, which names them its own way.
 */
export async function readBounded(response: Response, limit: number): Promise<string | null> {
  if (Number(response.headers.get("Content-Length") ?? "0") > limit || !response.body) {
    await response.body?.cancel().catch(() => {});
    return response.body ? null : "";
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}
