// Small DOM helpers of the dashboard's script: the status and error lines, table cells built with
// textContent, and forms that show they are busy while their request runs.
import { $, ApiError } from "./api.js"

/** A notice is for now: it clears after a while (unless another replaced it). */
const NOTICE_MS = 8000
export const say = (text: string) => {
  $("error").hidden = true
  $("error").textContent = ""
  $("status").textContent = text
  setTimeout(() => {
    if ($("status").textContent === text) $("status").textContent = ""
  }, NOTICE_MS)
}
export const fail = (err: unknown) => {
  let text = err instanceof Error ? err.message : String(err)
  if (err instanceof ApiError && err.status === 0 && text === "") text = "network error"
  $("status").textContent = ""
  $("error").textContent = text
  $("error").hidden = false
}

export const when = (iso: string | null): string | null => {
  if (!iso) return null
  const d = new Date(iso)
  if (isNaN(d.getTime())) return null
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`
}
export const timeCell = (iso: string | null, empty: string) => {
  const td = document.createElement("td")
  const text = when(iso)
  if (iso && text) {
    const t = document.createElement("time")
    t.dateTime = iso
    t.title = iso
    t.textContent = text
    td.appendChild(t)
    td.className = "nowrap"
  } else {
    td.textContent = empty
    td.className = "muted"
  }
  return td
}
export const cell = (text: string, className?: string) => {
  const td = document.createElement("td")
  td.textContent = text
  if (className) td.className = className
  return td
}
export const codeCell = (text: string) => {
  const td = document.createElement("td")
  td.className = "nowrap"
  const c = document.createElement("code")
  c.textContent = text
  td.appendChild(c)
  return td
}
export const clear = (node: Node) => {
  while (node.firstChild) node.removeChild(node.firstChild)
}

export const busy = (form: HTMLFormElement, on: boolean) => {
  const b = form.querySelector<HTMLButtonElement>("button[type=submit]")
  if (b) {
    b.disabled = on
    b.setAttribute("aria-busy", on ? "true" : "false")
  }
}
export const onSubmit = (form: HTMLFormElement, handler: () => unknown) => {
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    busy(form, true)
    Promise.resolve()
      .then(handler)
      .catch(fail)
      .then(() => busy(form, false))
  })
}
