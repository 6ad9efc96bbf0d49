/**
 * Holding a new task's events until its turn ends: with every reader of the log known, a
 * task made and ended within one turn with no reader and no webhook never has its events
 * written. The task store decides which tasks wait; the event log keeps them.
 */
import { logEvent } from "../../telemetry/log";
import type { EventLog } from "./event-log";

/**
 * Where a conversation's event readers come from: a stream or subscriber registering on a
 * task (the object's event hub).
 */
export interface EventReaders {
  /** Called as something starts reading a task's events. */
  onListen: ((taskId: string) => void) | null;
}

/** The turn's held events, for one task store. */
export class TurnEvents {
  constructor(
    private readonly events: EventLog,
    /** The store's transaction (see `TaskStore.atomic`). */
    private readonly atomic: (fn: () => void) => void,
  ) {}

  /** Whether readers are known (`readBy`): only then may a task's events go unwritten. */
  private readersKnown = false;
  /** Whether the turn's end is awaited to write the events still waiting. */
  private releasing = false;

  /**
   * Every reader of the log registers through `readers` (a stream, a subscriber; webhooks
   * are known to the store): from now on, the events of a task made and ended within one
   * turn with no reader and no webhook are not written (see `EventLog.wait`). Nobody could
   * ever read them: a finished task cannot be subscribed to, a stream resumes only while its
   * task runs, and a webhook registered later gets the task, not its past events.
   */
  readBy(readers: EventReaders): void {
    this.readersKnown = true;
    // A stream opens in the turn its task was made: its events are written in that commit.
    readers.onListen = (taskId) => {
      if (this.events.watch(taskId)) this.atomic(() => {});
    };
  }

  /**
   * A new task's events wait in memory until the turn ends: if the task ended in the turn
   * with nothing to read its events, the log never writes them; otherwise they are
   * written then, with anything else still waiting, in one transaction (see `committed`).
   * Without known readers, nothing waits.
   */
  hold(taskId: string): void {
    if (this.readersKnown) this.events.wait(taskId);
  }

  /**
   * A transaction committed. Events still waiting are written at the turn's end: a timer
   * of 0 ms runs after every promise the turn settled. A task that ended in the
   * transaction that made it (an instant handler's) leaves nothing waiting: no timer.
   */
  committed(): void {
    if (this.releasing || !this.events.anyWaiting) return;
    this.releasing = true;
    setTimeout(() => {
      this.releasing = false;
      try {
        if (this.events.anyWaiting) this.atomic(() => this.events.release());
      } catch (error) {
        logEvent("error", "edgelink: could not write a turn's events", { error });
      }
    }, 0);
  }
}
