// What a delivery carries: the Standard Webhooks envelope and its signature headers
// (https://www.standardwebhooks.com; docs/webhooks.md shows a receiver verifying them).
import { createHmac } from "node:crypto"
import type { DomainEvent } from "../../schema/events/events.js"
import type { EndpointRecord } from "../../schema/webhooks/records.js"

/** The delivery body: the Standard Webhooks envelope plus the event id. */
export const envelope = (event: DomainEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, timestamp: event.occurredAt, data: event.data })

/** `v1,` + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" keyed with the secret's decoded bytes. */
export const signature = (secret: string, id: string, timestampSeconds: number, body: string): string => {
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  return `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`
}

/** The three Standard Webhooks headers; during a rotation's grace period, two space-separated signatures. */
export const signedHeaders = (e: EndpointRecord, id: string, nowMs: number, body: string): Record<string, string> => {
  const ts = Math.floor(nowMs / 1000)
  const signatures = [signature(e.secret, id, ts, body)]
  const previousValid = e.previousSecretExpiresAt !== null && Date.parse(e.previousSecretExpiresAt) > nowMs
  if (e.previousSecret !== null && previousValid) {
    signatures.push(signature(e.previousSecret, id, ts, body))
  }
  return {
    "content-type": "application/json",
    "user-agent": "agent-commerce-webhooks/1.0",
    "webhook-id": id,
    "webhook-timestamp": String(ts),
    "webhook-signature": signatures.join(" ")
  }
}
