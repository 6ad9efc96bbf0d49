/**
 * `edgelink/push`: push notifications outside the agent. The receiver's side (verify a
 * delivery and get its typed event) and the agent's signing key (`generateSigningKey`, for
 * the `PUSH_SIGNING_KEYS` secret). Web APIs and `jose` only: usable from Node, browsers
 * and Workers.
 * @example
 * ```ts
 * import { verifyPushNotification } from "edgelink/push";
 * const { event, eventId } = await verifyPushNotification(request, {
 *   jwksUrl: "https://agent.example.com/.well-known/jwks.json",
 *   audience: "https://hooks.example.com/a2a",
 * });
 * ```
 * @packageDocumentation
 */
export { generateSigningKey, type SigningAlgorithm } from "./signing";
export {
  PushVerificationError,
  type PushVerificationReason,
  type VerifiedPushNotification,
  type VerifyPushOptions,
  verifyPushNotification,
} from "./verify";
