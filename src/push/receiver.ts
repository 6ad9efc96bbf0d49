/**
 * The webhook receiver's side of push notifications, on its own so that it imports
 * nothing but Web APIs and `jose` (usable from Node, browsers and Workers): verify a
 * delivery and get its typed event.
 * @example
 * import { verifyPushNotification } from "edgelink/push";
 * const { event, eventId } = await verifyPushNotification(request, {
 *   jwksUrl: "https://agent.example.com/.well-known/jwks.json",
 *   audience: "https://hooks.example.com/a2a",
 * });
 * @packageDocumentation
 */
export type { TaskEvent } from "../models/events";
export {
  A2A_JSON,
  EVENT_ID_HEADER,
  IDEMPOTENCY_HEADER,
  JWKS_PATH,
  SIGNATURE_HEADER,
  TOKEN_HEADER,
} from "./headers";
export { streamResponseToEvent, V1StreamResponse } from "./stream-response";
export {
  PushVerificationError,
  type PushVerificationReason,
  type VerifiedPushNotification,
  type VerifyPushOptions,
  verifyPushNotification,
} from "./verify";
