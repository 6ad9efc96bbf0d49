/**
 * The streaming scenarios' answer (bs, es): a message whose text starts with
 * `STREAM_PREFIX` is echoed as one `result` artifact streamed in `STREAM_CHUNKS` chunks
 * (the first a new artifact, the others appended, the last marked lastChunk), then the task
 * completes. Shared by Edgelink's echo agent, the SDK's executor and the load's check, so
 * both servers are asked for, and checked against, the same chunks.
 */
export const STREAM_PREFIX = "stream ";
export const STREAM_CHUNKS = 20;

/** The chunks' texts, in order, for a message's text. */
export function streamChunks(text) {
  return Array.from({ length: STREAM_CHUNKS }, (_, i) => `echo ${i + 1}/${STREAM_CHUNKS}: ${text}`);
}
