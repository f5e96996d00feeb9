// GET /services' answer written from each service's JSON, kept per service view: a service the
// store keeps (the memory store's) is encoded once per version of it (its schema's encoding, then
// JSON.stringify), not once per page it is on; the SQL stores' rows are encoded per page. The bytes
// are the ones the endpoint's schema (ServicePage) would write for the same page
// (test/http/service-page.test.ts); the document still declares ServicePage.
import { Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { CommerceService } from "../../schema/commerce/services.js"
import { isKeptView } from "../../schema/commerce/serviceView.js"

/** The page's services without kept JSON, encoded in one call. */
const encodeServices = Schema.encodeSync(Schema.Array(CommerceService))

/** Each kept view's JSON (serviceView.ts: the memory store's services, encoded once a write). */
const texts = new WeakMap<CommerceService, string>()

/** A page of services as a 200 with the JSON HttpApi would have written for it. */
export const servicePageResponse = (page: {
  readonly data: ReadonlyArray<CommerceService>
  readonly nextCursor: string | null
}): HttpServerResponse.HttpServerResponse => {
  const rows: Array<string | undefined> = page.data.map((service) => texts.get(service))
  const missing: Array<number> = []
  for (let i = 0; i < rows.length; i++) if (rows[i] === undefined) missing.push(i)
  if (missing.length > 0) {
    const encoded = encodeServices(missing.map((i) => page.data[i]))
    for (let k = 0; k < missing.length; k++) {
      const service = page.data[missing[k]]
      const text = JSON.stringify(encoded[k])
      rows[missing[k]] = text
      if (isKeptView(service)) texts.set(service, text)
    }
  }
  return HttpServerResponse.text(`{"data":[${rows.join(",")}],"nextCursor":${JSON.stringify(page.nextCursor)}}`, {
    contentType: "application/json"
  })
}
