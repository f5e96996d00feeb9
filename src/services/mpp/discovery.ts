// The MPP discovery document (GET /api/v1/mpp): how to pay per request here. Pure.
import {
  API_KEY_HEADER,
  CHALLENGE_TTL_MS,
  CHARGE_INTENT,
  CREDENTIAL_HEADER,
  CREDITS_METHOD,
  MPP_CURRENCY,
  MPP_MINIMUM_CHARGE_CENTS,
  MPP_REALM,
  MppDiscovery,
  paymentMethods,
  RECEIPT_HEADER
} from "../../schema/mpp/protocol.js"

export const discoveryDocument = (baseUrl: string) =>
  MppDiscovery.make({
    protocol: "MPP",
    status: "pending_early_access",
    description:
      "Pay per request over HTTP 402: call a per_call service without buying it first, receive a Payment " +
      "challenge, retry with a credential, get the result and a receipt. Internal credits are the active " +
      "method; crypto and card are not yet available.",
    pricing: {
      model: "per_request",
      transport: "HTTP 402 Payment Required",
      currency: MPP_CURRENCY,
      minimumChargeCents: MPP_MINIMUM_CHARGE_CENTS,
      minimumCharge: "0.01 USD"
    },
    methods: [...paymentMethods],
    fallback: {
      method: "credits.charge",
      status: "active",
      description:
        "The internal credit system (the agent's wallet) pays while external methods are pending early access."
    },
    headers: {
      challenge:
        `WWW-Authenticate: Payment id (HMAC of the parameters), realm, method="${CREDITS_METHOD}", ` +
        `intent="${CHARGE_INTENT}", request, digest, expires, [header="${CREDENTIAL_HEADER}"], opaque`,
      credential:
        `Authorization: Payment <base64url JSON {challenge, payload}> with the key in ${API_KEY_HEADER}; ` +
        `or ${CREDENTIAL_HEADER}: Payment … with Authorization: Bearer <key> ` +
        "(the challenge's header parameter says which)",
      receipt: `${RECEIPT_HEADER}: <base64url JSON receipt>`
    },
    invoke: {
      method: "POST",
      path: `${baseUrl}/api/v1/agent/commerce/services/{serviceId}/invoke?tier={tierId}`,
      appliesTo: "services with pricingModel per_call"
    },
    realm: MPP_REALM,
    challengeTtlSeconds: CHALLENGE_TTL_MS / 1000,
    docs: `${baseUrl}/docs`
  })
