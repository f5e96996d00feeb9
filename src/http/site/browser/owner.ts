// The owner pages' script (/assets/owner.js): keeps the page current without a reload. Every few
// seconds it asks the page's live stamp (a small JSON: what the wallet, approvals, transactions and
// refusals are now); when the stamp changes it fetches the page itself and replaces the parts marked
// data-live with the server's new markup (parsed by DOMParser, never innerHTML; the server escaped
// it), then says "1 new approval waiting for you." when approvals arrived. Notices clear after a
// while, and the notice's address parameter is dropped so a reload does not repeat it. The page
// works without it.

const NOTICE_MS = 8000

const root = document.getElementById("live")
const status = document.getElementById("status")

// A notice ("Approved: …") is for now: it clears, and a reload does not bring it back.
if (status && status.textContent !== "") {
  setTimeout(() => {
    status.textContent = ""
  }, NOTICE_MS)
}
const address = new URL(location.href)
if (address.searchParams.has("done")) {
  address.searchParams.delete("done")
  history.replaceState(null, "", address.pathname + address.search + address.hash)
}

const approvalIds = () =>
  new Set(Array.from(document.querySelectorAll("[data-approval-id]"), (e) => e.getAttribute("data-approval-id")))

/** Replaces each data-live part that differs from the fresh page's, keeping focus where it can. */
const redraw = (fresh: Document) => {
  const focused = document.activeElement
  const focusKey = focused?.closest("[data-approval-id],[data-agent-id]")
  for (const part of Array.from(document.querySelectorAll<HTMLElement>("[data-live][id]"))) {
    const next = fresh.getElementById(part.id)
    if (next && !next.isEqualNode(part)) part.replaceWith(document.importNode(next, true))
  }
  if (focused && !document.contains(focused) && focusKey) {
    const attr = focusKey.hasAttribute("data-approval-id") ? "data-approval-id" : "data-agent-id"
    const again = document.querySelector(`[${attr}="${CSS.escape(focusKey.getAttribute(attr) ?? "")}"] button`)
    if (again instanceof HTMLElement) again.focus()
  }
}

if (root) {
  const poll = root.getAttribute("data-live-poll")
  const interval = Number(root.getAttribute("data-interval")) || 2000
  let stamp = root.getAttribute("data-live-stamp") ?? ""
  let busy = false
  const live = document.getElementById("approvals-live")

  const refresh = () =>
    // The page's own address as the server wrote it: after a refused form the location is the form's.
    fetch(root.getAttribute("data-live-page") ?? location.pathname + location.search, {
      credentials: "same-origin",
      headers: { accept: "text/html" }
    })
      .then((res) => (res.ok ? res.text() : null))
      .then((text) => {
        if (text === null) return
        const fresh = new DOMParser().parseFromString(text, "text/html")
        const freshRoot = fresh.getElementById("live")
        const before = approvalIds()
        redraw(fresh)
        stamp = freshRoot?.getAttribute("data-live-stamp") ?? stamp
        const added = Array.from(approvalIds()).filter((id) => !before.has(id)).length
        if (live && added > 0) {
          live.textContent = `${added} new approval${added === 1 ? "" : "s"} waiting for you.`
          setTimeout(() => {
            live.textContent = ""
          }, NOTICE_MS)
        }
      })

  const tick = () => {
    if (busy || !poll || document.hidden) return
    busy = true
    fetch(poll, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then((res) => (res.ok ? (res.json() as Promise<{ stamp: string }>) : null))
      .then((data) => (data && data.stamp !== stamp ? refresh() : undefined))
      .catch(() => {
        // offline for a moment: the next tick tries again
      })
      .then(() => {
        busy = false
      })
  }
  setInterval(tick, interval)
}

export {}
