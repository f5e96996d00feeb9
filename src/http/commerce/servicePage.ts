// GET /services' answer written from each service's JSON, kept per service view: a listed service is
// encoded once per version of it (its schema's encoding, then JSON.stringify), not once per page it
// is on. The bytes are the ones the endpoint's schema (ServicePage) would write for the same page
// (test/http/service-page.test.ts); the document still declares ServicePage.
import { Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { CommerceService } from "../../schema/commerce/services.js"

const encodeService = Schema.encodeSync(CommerceService)

/**
 * Each view's JSON. A view is the same object for as long as its stored record is (toService):
 * the memory store keeps a record until the service's next write, so its services are encoded once
 * a write; the SQL stores make a record per row read, so theirs are encoded per page as before.
 */
const texts = new WeakMap<CommerceService, string>()

const serviceJson = (service: CommerceService): string => {
  const known = texts.get(service)
  if (known !== undefined) return known
  const text = JSON.stringify(encodeService(service))
  texts.set(service, text)
  return text
}

/** A page of services as a 200 with the JSON HttpApi would have written for it. */
export const servicePageResponse = (page: {
  readonly data: ReadonlyArray<CommerceService>
  readonly nextCursor: string | null
}): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(
    `{"data":[${page.data.map(serviceJson).join(",")}],"nextCursor":${JSON.stringify(page.nextCursor)}}`,
    { contentType: "application/json" }
  )
