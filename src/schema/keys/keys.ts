// Agent API key permissions (spec §2.4) and key/agent/account shapes.
import { Schema } from "effect"

export const agentPermissions = ["catalog:read", "evaluate", "acquire", "invest", "create"] as const
export const commercePermissions = ["commerce:read", "commerce:buy", "commerce:sell", "commerce:negotiate"] as const
/**
 * Not in spec §2.4's lists (which name no permission for webhooks): managing the agent's webhook
 * (where its events go, the signing secret, the delivery log) needs its own grant, so a leaked
 * read-only key cannot redirect every event to another address (docs/permissions.md).
 */
export const webhookPermissions = ["webhooks:manage"] as const
export const Permission = Schema.Literals([...agentPermissions, ...commercePermissions, ...webhookPermissions])
export type Permission = typeof Permission.Type
export const allPermissions: ReadonlyArray<Permission> = [
  ...agentPermissions,
  ...commercePermissions,
  ...webhookPermissions
]

/** What a caller may ask for when creating a key: a permission, or `commerce:*` (all four commerce ones). */
export const PermissionGrant = Schema.Union([Permission, Schema.Literal("commerce:*")])
export type PermissionGrant = typeof PermissionGrant.Type

export const expandGrants = (grants: ReadonlyArray<PermissionGrant>): ReadonlyArray<Permission> => {
  const out = new Set<Permission>()
  for (const g of grants) {
    if (g === "commerce:*") commercePermissions.forEach((p) => out.add(p))
    else out.add(g)
  }
  return allPermissions.filter((p) => out.has(p))
}

/** Visible prefix of every agent API key. The secret after it is 32 random bytes, base64url. */
export const KEY_PREFIX = "ak_live_"

export const AgentId = Schema.String.pipe(Schema.check(Schema.isPattern(/^agt_[A-Za-z0-9_-]+$/u)))

export class Account extends Schema.Class<Account>("Account")({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  planId: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}) {}

export class Agent extends Schema.Class<Agent>("Agent")({
  id: Schema.String,
  accountId: Schema.String,
  name: Schema.String,
  organization: Schema.NullOr(Schema.String),
  createdAt: Schema.String
}) {}

/** An API key as shown to its owner: never the secret, never the hash. */
export class ApiKeyView extends Schema.Class<ApiKeyView>("ApiKeyView")({
  id: Schema.String,
  agentId: Schema.String,
  name: Schema.String,
  /** The first characters of the key, enough to recognise it (`ak_live_AbCd…`). */
  prefix: Schema.String,
  permissions: Schema.Array(Permission),
  createdAt: Schema.String,
  expiresAt: Schema.NullOr(Schema.String),
  revokedAt: Schema.NullOr(Schema.String),
  lastUsedAt: Schema.NullOr(Schema.String)
}) {}

/** The stored key row (hash only). */
export interface ApiKeyRecord {
  readonly id: string
  readonly accountId: string
  readonly agentId: string
  readonly name: string
  readonly prefix: string
  readonly secretHash: string
  readonly permissions: ReadonlyArray<Permission>
  readonly createdAt: string
  readonly expiresAt: string | null
  readonly revokedAt: string | null
  readonly lastUsedAt: string | null
}

export interface AccountRecord {
  readonly id: string
  readonly email: string
  readonly name: string
  readonly passwordHash: string
  readonly planId: string | null
  readonly createdAt: string
}

export interface SessionRecord {
  readonly tokenHash: string
  readonly accountId: string
  readonly createdAt: string
  readonly expiresAt: string
}

/** The account of the platform's own seller agents (the seeded sellers): their deliveries are simulated. */
export const PLATFORM_SELLERS_ACCOUNT = "acct_platform_sellers"
