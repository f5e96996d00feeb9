// The path a request-target names, as the router reads it. The router (find-my-way) drops an
// absolute-form origin, cuts the path at `?`, `;` or `#`, decodes escapes of unreserved characters
// (decodeURI: `%2F` stays a character of a segment, never a separator), collapses repeated slashes,
// drops a trailing slash and matches without regard to case. A guard that compared the raw URL
// would let `//api/…` or `/API/…` reach a handler unguarded, so every path-based decision in the
// middleware reads these functions instead. Dot segments are resolved too: the router would not
// match them, but a proxy in front may, and a guard that is stricter than the router costs nothing.

/**
 * The router's configuration. find-my-way stops matching a path parameter past 100 characters
 * (UTF-16 units after decoding), which made a long id a "no route" instead of the parameter's own
 * 400: the limit is raised past any URL Node accepts (16 KiB of headers), so every parameter
 * reaches its schema and is refused, when too long, as the document says.
 */
export const ROUTER_CONFIG = { maxParamLength: 16_384 } as const

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i

const decodeUnreserved = (path: string): string => {
  try {
    return decodeURI(path)
  } catch {
    // A malformed escape never routes (the router answers 404); judge the text as sent.
    return path
  }
}

/** The request-target's query string (after the first `?`), or "". */
export const queryOf = (url: string): string => {
  const at = url.indexOf("?")
  return at === -1 ? "" : url.slice(at + 1)
}

/**
 * The request-target's path exactly as the router reads it, case kept (path parameters are
 * case-sensitive ids): origin dropped, cut at `?`/`;`/`#`, unreserved escapes decoded, `//`
 * collapsed, no trailing slash. Dot segments stay: the router matches them literally.
 */
export const routedPath = (url: string): string => {
  let path = url.replace(ABSOLUTE_FORM, "")
  const end = path.search(/[?;#]/)
  if (end !== -1) path = path.slice(0, end)
  path = decodeUnreserved(path).replace(/\/\/+/g, "/")
  if (!path.startsWith("/")) path = `/${path}`
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path
}

/** routedPath with `.` and `..` segments resolved, as a proxy in front may resolve them. */
export const canonicalPath = (url: string): string => {
  const segments: Array<string> = []
  for (const segment of routedPath(url).split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") segments.pop()
    else segments.push(segment)
  }
  return `/${segments.join("/")}`
}

/** The path a guard compares (`/api/…`, `/mcp`): canonicalPath, lower-cased, as the router matches. */
export const guardPath = (url: string): string => canonicalPath(url).toLowerCase()
