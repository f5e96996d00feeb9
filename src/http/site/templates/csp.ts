// The Content-Security-Policy of the site's HTML pages: no inline script or style anywhere, every
// script and stylesheet a file from this origin, no framing, and forms only where a page posts.

export interface CspOptions {
  /** Origins besides this one that pages load files from (BASE_URL's, when a page is opened at another host name). */
  readonly files?: ReadonlyArray<string>
  /** Where the page's forms may post (and the redirects that answer them go); none when it has no form. */
  readonly formAction?: ReadonlyArray<string>
  /** Whether the page's script fetches from this origin. */
  readonly connect?: boolean
}

export const pageCsp = (o: CspOptions = {}): string => {
  const files = ["'self'", ...new Set(o.files ?? [])].join(" ")
  const forms =
    o.formAction === undefined || o.formAction.length === 0 ? "'none'" : [...new Set(o.formAction)].join(" ")
  return [
    "default-src 'none'",
    `script-src ${files}`,
    `style-src ${files}`,
    `img-src ${files} data:`,
    `connect-src ${o.connect ? "'self'" : "'none'"}`,
    `form-action ${forms}`,
    "base-uri 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/** An origin fit for a CSP source list (http or https, nothing that could end the directive), or undefined. */
export const cspOrigin = (url: string): string | undefined => {
  try {
    const u = new URL(url)
    return (u.protocol === "http:" || u.protocol === "https:") && /^[A-Za-z0-9.:[\]/-]+$/.test(u.origin)
      ? u.origin
      : undefined
  } catch {
    return undefined
  }
}

/**
 * /docs: Scalar's API reference, a script from this origin that builds the page in the browser.
 * It adds its own style elements at run time, which no nonce or hash can name ahead of time, so
 * this one page allows inline styles (never inline scripts); it reads the API document from the
 * page and fetches nothing.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'"
].join("; ")
