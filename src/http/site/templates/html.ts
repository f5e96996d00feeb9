// The one way markup is built: a tagged template that escapes every interpolated value unless it
// is already `Html` (markup this code built, or trusted markup wrapped once with `trusted`).

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;"
}

/** Text for an HTML text node or a quoted attribute value. */
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ENTITIES[c]!)

/** Markup that is safe to place as is. Made only by `html` and `trusted`. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

/** What a template may interpolate: text (escaped), numbers, Html, nothing, or lists of these. */
export type Part = Html | string | number | null | undefined | false | ReadonlyArray<Part>

const renderPart = (part: Part): string => {
  if (part instanceof Html) return part.value
  if (part === null || part === undefined || part === false) return ""
  if (typeof part === "string") return escapeHtml(part)
  if (typeof part === "number") return escapeHtml(String(part))
  return part.map(renderPart).join("")
}

/** `html\`<p>${text}</p>\``: every value escaped, unless it is Html. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Part>): Html => {
  let out = strings[0] ?? ""
  for (let i = 0; i < values.length; i++) out += renderPart(values[i]) + (strings[i + 1] ?? "")
  return new Html(out)
}

/** Markup from a source this code controls (rendered Markdown from the repository, an SVG it drew). */
export const trusted = (markup: string): Html => new Html(markup)
