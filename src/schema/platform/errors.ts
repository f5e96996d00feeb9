// The tagged errors shared by every domain, each bound to exactly one HTTP status.
import { Schema } from "effect"

/** 400 — input that does not decode or does not make sense; names the field. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()(
  "InvalidInput",
  { message: Schema.String, field: Schema.optional(Schema.String) },
  { httpApiStatus: 400, description: "The input is invalid; `field` names the offending field." }
) {}

/** 401 — no credentials, or credentials that are unknown, revoked or expired. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { message: Schema.String },
  { httpApiStatus: 401 }
) {}

/** 403 — authenticated, but the key lacks a permission. */
export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { message: Schema.String, permission: Schema.optional(Schema.String) },
  { httpApiStatus: 403 }
) {}

/** 404 — the object does not exist, or belongs to someone else. */
export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { message: Schema.String, resource: Schema.String, id: Schema.optional(Schema.String) },
  { httpApiStatus: 404 }
) {}

/** 405 — a known path asked with a method it does not answer; the Allow header lists those it does. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()(
  "MethodNotAllowed",
  { message: Schema.String, allow: Schema.Array(Schema.String) },
  { httpApiStatus: 405 }
) {}

/** 409 — the request conflicts with the object's current state. */
export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  { message: Schema.String, state: Schema.optional(Schema.String) },
  { httpApiStatus: 409 }
) {}

/** 413 — request body over the configured limit. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  { message: Schema.String, limitBytes: Schema.Int },
  { httpApiStatus: 413 }
) {}

/** 411 — a request body sent without Content-Length (chunked): its size cannot be checked before reading. */
export class LengthRequired extends Schema.TaggedError<LengthRequired>()(
  "LengthRequired",
  { message: Schema.String },
  { httpApiStatus: 411 }
) {}

/** 415 — a request body under /api/ that is not JSON (`field` is "Content-Type"). */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  { message: Schema.String, field: Schema.String },
  { httpApiStatus: 415 }
) {}

/** 422 — an Idempotency-Key reused with a different request. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  { message: Schema.String },
  { httpApiStatus: 422 }
) {}

/** 429 — rate limit exceeded. */
export class RateLimited extends Schema.TaggedError<RateLimited>()(
  "RateLimited",
  { message: Schema.String, retryAfterSeconds: Schema.Int, limit: Schema.Int, window: Schema.String },
  { httpApiStatus: 429 }
) {}

/** 503 — the storage behind the service is unreachable; retry later. */
export class StorageUnavailable extends Schema.TaggedError<StorageUnavailable>()(
  "StorageUnavailable",
  { message: Schema.String },
  { httpApiStatus: 503 }
) {}
