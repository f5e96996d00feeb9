// Long-form pages written as Markdown (content/<page>.<language>.md, e.g. whitepaper.pt-BR.md),
// rendered once with marked, then filled per request. A page's values (the platform's name, this
// server's addresses, the configured limits) are written in the Markdown as {{directives}} and
// filled after rendering, each escaped like any template value:
//
//   {{name}} {{version}} {{perMinute}} {{perDay}}   text
//   {{url /path}}                                   this server's address for the path, as text
//   {{link /path}} {{link /path "text"}}            a link (its text the address, or the text)
//   {{page legal-guide "text"}}                     a link to another page in the same language
//   {{quickstart}} {{payments}}                     blocks the page module builds
//
// The front matter between --- lines gives the title and the description (directives allowed).
import { Marked } from "marked"
import { siteFile } from "../assets.js"
import { html, type Html, type Part, trusted } from "./html.js"
import { htmlLang, type Lang } from "./layout.js"

export interface ContentValues {
  readonly text: Readonly<Record<string, string>>
  /** The absolute address of a path on this site. */
  readonly url: (path: string) => string
  /** The address of another page in this language. */
  readonly page: (name: string) => string
  readonly blocks: Readonly<Record<string, Html>>
}

interface Compiled {
  readonly title: string
  readonly description: string
  readonly body: string
}

const marked = new Marked({ gfm: true })

/** Tables scroll inside their own box on a narrow screen, and their header cells name their columns. */
const finish = (rendered: string): string =>
  rendered
    .replace(/<table>/g, '<div class="table-wrap">\n<table>')
    .replace(/<\/table>/g, "</table>\n</div>")
    .replace(/<th>/g, '<th scope="col">')

const compile = (file: string): Compiled => {
  const source = siteFile("content", file)
  const m = /^---\n([\s\S]*?)\n---\n/.exec(source)
  const meta = new Map<string, string>()
  for (const line of (m?.[1] ?? "").split("\n")) {
    const i = line.indexOf(":")
    if (i > 0) meta.set(line.slice(0, i).trim(), line.slice(i + 1).trim())
  }
  const body = finish(marked.parse(m ? source.slice(m[0].length) : source, { async: false }))
  return { title: meta.get("title") ?? "", description: meta.get("description") ?? "", body }
}

const cache = new Map<string, Compiled>()
const compiled = (page: string, lang: Lang): Compiled => {
  const file = `${page}.${htmlLang[lang]}.md`
  let c = cache.get(file)
  if (c === undefined) {
    c = compile(file)
    cache.set(file, c)
  }
  return c
}

const unescape = (s: string): string =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")

/** One directive's words: bare words, and one "quoted text" at the end. */
const words = (directive: string): ReadonlyArray<string> => {
  const quoted = /"([^"]*)"\s*$/.exec(directive)
  const bare = (quoted ? directive.slice(0, quoted.index) : directive).trim().split(/\s+/)
  return quoted ? [...bare, quoted[1]!] : bare
}

const fill = (directive: string, v: ContentValues, where: string): Part => {
  const [kind = "", arg = "", text] = words(unescape(directive))
  if (kind === "url") return v.url(arg)
  if (kind === "link") return html`<a href="${v.url(arg)}">${text ?? v.url(arg)}</a>`
  if (kind === "page") return html`<a href="${v.page(arg)}">${text ?? arg}</a>`
  if (Object.hasOwn(v.blocks, kind)) return v.blocks[kind]!
  if (Object.hasOwn(v.text, kind)) return v.text[kind]!
  throw new Error(`${where}: unknown directive {{${directive}}}`)
}

const fillAll = (markup: string, v: ContentValues, where: string): string =>
  // One pass, so a filled value is never read as a directive. A block directive alone in its
  // paragraph replaces the paragraph.
  markup.replace(
    /<p>\{\{([^{}]*)\}\}<\/p>|\{\{([^{}]*)\}\}/g,
    (_, block: string | undefined, inline: string | undefined) => html`${fill(block ?? inline ?? "", v, where)}`.value
  )

/** Text with its directives filled, for the title and the description (escaped where placed). */
const fillText = (text: string, v: ContentValues, _where: string): string =>
  text.replace(/\{\{([^{}]*)\}\}/g, (_, d: string) => {
    const [kind = "", arg = ""] = words(d)
    return kind === "url" ? v.url(arg) : (v.text[kind] ?? `{{${d}}}`)
  })

/** A Markdown page in one language, filled with this server's values. */
export const contentPage = (
  page: string,
  lang: Lang,
  v: ContentValues
): { readonly title: string; readonly description: string; readonly body: Html } => {
  const c = compiled(page, lang)
  const where = `content/${page}.${htmlLang[lang]}.md`
  return {
    title: fillText(c.title, v, where),
    description: fillText(c.description, v, where),
    body: trusted(fillAll(c.body, v, where))
  }
}
