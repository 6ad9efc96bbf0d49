import type { Item } from "../../history/items";
import type { RunningSummary, WindowSource } from "../../history/window-reader";
import type { HistoryStore } from "./history-store";

/**
 * The context object's history as a window source: pages read back from the end, the
 * pinned instructions through their index, the running summary in `meta`.
 */
export function windowSource(history: HistoryStore<Item>): WindowSource {
  return {
    runningSummary: () => history.runningSummary() as RunningSummary | null,
    newest: (after, before, limit) => history.newest(after, before, limit),
    pinned: (before, limit) => history.pinned(before, limit),
    saveRunningSummary: (expected, next) => history.saveRunningSummary(expected, next),
  };
}
