import type { Item } from "../history/items";
import type { TaskEvent } from "../protocol/events";
import type { JsonObject } from "../protocol/json";
import type { Message, MessageInput } from "../protocol/message";
import type { Part } from "../protocol/part";
import type { Task } from "../protocol/task";
import type { TaskState } from "../protocol/task-state";
import type { Auth } from "./auth";
import type { VerifyCardOptions } from "./card-verify";
import type { Binding } from "./operations";

/** The client's options and results: what its callers see. */

/** Options of `connect`. */
export interface ConnectOptions {
  /** The fetch to use: a service binding's `fetch` reaches a same-account Worker directly. */
  fetch?: typeof fetch;
  /**
   * Headers sent with every request (card fetch included). Treated as credentials, like
   * `auth`: sent only to trusted origins, never after a redirect.
   */
  headers?: HeadersInit;
  /**
   * Credentials for the agent. They go only to the origin you connect to (for a card you
   * pass in: its endpoint's), never after a redirect, and an API key goes in a query
   * string only if you say `in: "query"`; anything else is a `CredentialPolicyError`
   * before a byte is sent.
   */
  auth?: Auth;
  /**
   * Other origins that may receive `auth` and `headers`: a card fetched from
   * `https://example.com` whose endpoint is `https://api.example.com` needs
   * `["https://api.example.com"]`. `"any"` is for a fetch that reaches one peer whatever
   * the URL (a service binding's). Default: none.
   * @example
   * await connect("https://example.com", { auth, trustedOrigins: ["https://api.example.com"] });
   */
  trustedOrigins?: readonly string[] | "any";
  /** Force a binding instead of the card's first supported interface. */
  binding?: Binding;
  /** Extension URIs to declare in `A2A-Extensions` on every call. */
  extensions?: string[];
  /** How streams resume after a dropped connection (default: 5 retries, from 250 ms). */
  resume?: ResumeOptions | false;
  signal?: AbortSignal;
  /**
   * Verify the card's signatures (A2A §8.4) before using it, and refuse it with a
   * `CardSignatureError` when none verifies: with keys you trust (`keys`), a JWKS URL
   * (`jwksUrl`), or `true` for the `jku` the signatures name on the card's own origin.
   * Off by default (most cards are not signed).
   */
  verifyCard?: VerifyCardOptions | true;
}

/** Reconnection of dropped streams: `retries` attempts in a row, doubling from `delayMs`. */
export interface ResumeOptions {
  retries?: number;
  delayMs?: number;
  maxDelayMs?: number;
  /** Told before each reconnection (to show "reconnecting…", say). */
  onRetry?: (attempt: number, error: unknown) => void;
}

/** A stream event with its SSE id (pass it as `lastEventId` to resume from there). */
export type AgentEvent = TaskEvent & { eventId?: string };

/** SendMessage's answer: a task, or for agents that answer directly, a message. */
export type SendResult = { kind: "task"; task: Task } | { kind: "message"; message: Message };

/** What can be sent: text, parts, or a whole message (role defaults to user). */
export type MessageLike = string | Part[] | MessageInput;

export interface SendOptions {
  /** Continue this task (answering input-required, for example). */
  taskId?: string;
  contextId?: string;
  /** Return at once with the task still running (v1 `returnImmediately`). */
  returnImmediately?: boolean;
  historyLength?: number;
  acceptedOutputModes?: string[];
  /** A push config registered with the task (see `createPushConfig`). */
  pushConfig?: PushConfigInit;
  metadata?: JsonObject;
  signal?: AbortSignal;
}

export interface StreamOptions extends Omit<SendOptions, "returnImmediately"> {
  resume?: ResumeOptions | false;
}

export interface SubscribeOptions {
  /** Resume after this event (sent as `Last-Event-ID`). */
  lastEventId?: string;
  resume?: ResumeOptions | false;
  signal?: AbortSignal;
}

export interface ListTasksOptions {
  contextId?: string;
  state?: TaskState;
  pageSize?: number;
  /** Start from this page (a `nextPageToken` seen earlier). */
  pageToken?: string;
  historyLength?: number;
  statusTimestampAfter?: string;
  includeArtifacts?: boolean;
  signal?: AbortSignal;
}

export interface TaskPage {
  tasks: Task[];
  nextPageToken: string;
  pageSize?: number;
  totalSize?: number;
}

/** A webhook registration (A2A TaskPushNotificationConfig). */
export interface PushConfigInit {
  url: string;
  id?: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
}
export interface PushNotificationConfig extends PushConfigInit {
  id: string;
  taskId: string;
}

export interface HistoryPage {
  items: Item[];
  nextPageToken: string;
  totalSize?: number;
}
