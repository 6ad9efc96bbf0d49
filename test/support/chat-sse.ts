/** Chat endpoint frames: `event:`, `data:` and `id:` lines of an SSE body. */
export interface ChatFrame {
  id: number | undefined;
  event: string;
  data: Record<string, unknown>;
}

export function parseChat(text: string): ChatFrame[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.trim() !== "" && !frame.startsWith(":"))
    .map((frame) => {
      let id: number | undefined;
      let event = "message";
      let data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("id: ")) id = Number(line.slice(4));
        else if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      return { id, event, data: JSON.parse(data) as Record<string, unknown> };
    });
}
