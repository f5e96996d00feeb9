// The discovery document as bytes: encoded once per build around a gap for the visitor member, so a
// request only encodes its visitor and joins three byte arrays; a strong ETag over the result.
import { createHash } from "node:crypto"
import type { Visitor } from "../../schema/discovery/discovery.js"
import type { CatalogRoute } from "./document.js"
import { buildDocument, type Inputs } from "./sections.js"
import type { AppConfigShape } from "../platform/AppConfig.js"

/** The encoded document: body bytes, strong ETag, and whether it is personalised by a key. */
export interface EncodedDocument {
  readonly body: Uint8Array
  readonly etag: string
  readonly personalised: boolean
}

/** One build of the document, encoded, with what it was built from. */
export interface Built {
  readonly routes: ReadonlyArray<CatalogRoute>
  readonly inputsKey: string
  readonly checkedAt: number
  readonly generatedAt: string
  /** `{"platform":…,"visitor":` */
  readonly head: Uint8Array
  /** `,"capabilities":…}` */
  readonly tail: Uint8Array
  /** Anonymous variants, keyed by visitor class and name. */
  readonly anonymous: ReadonlyMap<string, EncodedDocument>
}

const encoder = new TextEncoder()

/** What a build depends on besides the routes: it is rebuilt when this changes. */
export const inputsKeyOf = (inputs: Inputs) => JSON.stringify(inputs)

export const encodeBuild = (
  config: AppConfigShape,
  evaluatorName: string,
  routes: ReadonlyArray<CatalogRoute>,
  inputs: Inputs,
  now: number
): Built => {
  const generatedAt = new Date(now).toISOString()
  const { platform, ...rest } = buildDocument(config, inputs, routes, evaluatorName, generatedAt)
  return {
    routes,
    inputsKey: inputsKeyOf(inputs),
    checkedAt: now,
    generatedAt,
    head: encoder.encode(`{"platform":${JSON.stringify(platform)},"visitor":`),
    tail: encoder.encode(`,${JSON.stringify(rest).slice(1)}`),
    anonymous: new Map()
  }
}

const etagOf = (body: Uint8Array) => `"${createHash("sha1").update(body).digest("base64url")}"`

/** The build with `visitor` in its gap. */
export const assemble = (built: Built, visitor: Visitor, personalised: boolean): EncodedDocument => {
  const middle = encoder.encode(JSON.stringify(visitor))
  const body = new Uint8Array(built.head.length + middle.length + built.tail.length)
  body.set(built.head, 0)
  body.set(middle, built.head.length)
  body.set(built.tail, built.head.length + middle.length)
  return { body, etag: etagOf(body), personalised }
}
