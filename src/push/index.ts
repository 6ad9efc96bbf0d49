/**
 * Webhook push notifications (A2A v1.0 §4.3, §13.2): config parsing and rendering, the
 * webhook URL policy, retry schedule, delivery signing, one delivery attempt, and the
 * receiver's verification helper. Pure pieces: storage and scheduling live in the
 * Durable Objects.
 */

export {
  type BackoffOptions,
  backoffCeiling,
  DEFAULT_BACKOFF,
  isRetryableStatus,
  jitteredDelay,
  nextDelay,
  parseRetryAfter,
  type RetryState,
} from "./backoff";
export {
  type ParsePushConfigOptions,
  type PushAuthentication,
  type PushConfig,
  type PushConfigInput,
  parsePushConfig,
  pushConfigToV1,
  pushConfigToV03,
  resolvePushConfig,
  V1TaskPushNotificationConfig,
  V03PushNotificationConfig,
  V03TaskPushNotificationConfig,
} from "./config";
export {
  type BuildDeliveryInput,
  buildDelivery,
  classifyResponse,
  type DeliverOptions,
  type Delivery,
  type DeliveryInit,
  type DeliveryOutcome,
  type DeliveryResult,
  deliver,
  type FetchLike,
  pushContentType,
  renderPushBody,
} from "./delivery";
export {
  A2A_JSON,
  EVENT_ID_HEADER,
  IDEMPOTENCY_HEADER,
  JWKS_PATH,
  SIGNATURE_HEADER,
  SIGNATURE_JWT_TYPE,
  TOKEN_HEADER,
} from "./headers";
export {
  bodySha256,
  type DeliveryClaims,
  generateSigningKey,
  loadSigningKey,
  loadSigningKeys,
  type PublicSigningJwk,
  publicJwks,
  type SignDeliveryInput,
  type SigningAlgorithm,
  type SigningKey,
  signDelivery,
} from "./signing";
export { streamResponseToEvent, V1StreamResponse } from "./stream-response";
export { checkWebhookUrl, hostVerdict, type UrlPolicyOptions } from "./url-policy";
export {
  PushVerificationError,
  type PushVerificationReason,
  type VerifiedPushNotification,
  type VerifyPushOptions,
  verifyPushNotification,
} from "./verify";
