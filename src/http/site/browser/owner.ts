// The owner's agent page script (/assets/owner.js): polls the approvals endpoint, adds rows for new
// approvals (DOM APIs and textContent only, never innerHTML), removes decided ones and announces
// the change in the live region. The page itself works without it.

interface PendingApproval {
  readonly id: string
  readonly serviceId: string
  readonly tierId: string
  readonly quotedPriceCents: number
  readonly reason: string
  readonly createdAt: string
  readonly expiresAt: string
}

const section = document.getElementById("approvals")
const url = section?.getAttribute("data-poll")
if (section && url) {
  const interval = Number(section.getAttribute("data-interval")) || 2000
  const body = document.getElementById("approvals-body")!
  const count = document.getElementById("approvals-count")!
  const live = document.getElementById("approvals-live")!
  const base = url.replace(/\/approvals\.json$/, "")

  const usd = (c: number) => `$${Math.floor(c / 100).toLocaleString("en-US")}.${String(c % 100).padStart(2, "0")}`
  const when = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`
  const td = (text: string, className?: string) => {
    const x = document.createElement("td")
    x.textContent = text
    if (className) x.className = className
    return x
  }
  const button = (id: string, decision: "approve" | "decline", label: string, className: string) => {
    const f = document.createElement("form")
    f.method = "post"
    f.action = `${base}/approvals/${encodeURIComponent(id)}/${decision}`
    const b = document.createElement("button")
    b.type = "submit"
    b.className = className
    b.textContent = label
    f.appendChild(b)
    return f
  }
  const row = (a: PendingApproval) => {
    const tr = document.createElement("tr")
    tr.setAttribute("data-id", a.id)
    tr.className = "new"
    tr.appendChild(td(`${a.serviceId} / ${a.tierId}`))
    tr.appendChild(td(usd(a.quotedPriceCents), "nowrap"))
    tr.appendChild(td(a.reason === "manual" ? "manual autonomy" : "over the approval threshold"))
    tr.appendChild(td(when(a.createdAt), "nowrap"))
    tr.appendChild(td(when(a.expiresAt), "nowrap"))
    const actions = td("", "actions nowrap")
    actions.appendChild(button(a.id, "approve", "Approve", "primary"))
    actions.appendChild(button(a.id, "decline", "Decline", "danger"))
    tr.appendChild(actions)
    return tr
  }
  const tick = () => {
    fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then((res) => (res.ok ? (res.json() as Promise<{ pending: ReadonlyArray<PendingApproval> }>) : null))
      .then((data) => {
        if (!data) return
        const wanted = new Set<string>()
        let added = 0
        for (const a of data.pending) {
          wanted.add(a.id)
          if (!body.querySelector(`tr[data-id="${CSS.escape(a.id)}"]`)) {
            body.insertBefore(row(a), body.firstChild)
            added++
          }
        }
        for (const tr of Array.from(body.querySelectorAll("tr[data-id]"))) {
          if (!wanted.has(tr.getAttribute("data-id") ?? "")) tr.remove()
        }
        count.textContent = String(data.pending.length)
        if (added > 0) live.textContent = `${added} new approval${added === 1 ? "" : "s"} waiting for you.`
      })
      .catch(() => {
        // offline for a moment: the next tick tries again
      })
  }
  setInterval(tick, interval)
}

export {}
