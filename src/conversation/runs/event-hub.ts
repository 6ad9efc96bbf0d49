import type { LoggedEvent } from "../../protocol/events";

type Listener = (logged: LoggedEvent) => void;

/**
 * Live fan-out of logged events to the streams watching each task. Events reach every
 * listener in log order, synchronously after they are written, so a stream that reads
 * the backlog and then registers in the same turn can miss nothing.
 */
export class EventHub {
  private readonly listeners = new Map<string, Set<Listener>>();

  /** Told of each listener as it registers (the task store keeps that task's events). */
  onListen: ((taskId: string) => void) | null = null;

  on(taskId: string, listener: Listener): () => void {
    this.onListen?.(taskId);
    let set = this.listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.listeners.set(taskId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(taskId);
    };
  }

  emit(taskId: string, events: readonly LoggedEvent[]): void {
    const set = this.listeners.get(taskId);
    if (!set) return;
    // Copied once per emit, not per event: a listener may unsubscribe (itself or another)
    // while handling an event, so each is asked whether it is still there; one registered
    // meanwhile read these events from the log already and gets none of them again.
    const listeners = [...set];
    for (const logged of events) {
      for (const listener of listeners) if (set.has(listener)) listener(logged);
    }
  }

  count(taskId: string): number {
    return this.listeners.get(taskId)?.size ?? 0;
  }
}
