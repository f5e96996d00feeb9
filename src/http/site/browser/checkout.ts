// The checkout return page's script (/assets/checkout.js): while the payment waits for the
// processor's confirmation, the page asks again every few seconds by reloading itself. Without
// it, the page's "Check again" link does the same.

const status = document.querySelector<HTMLElement>("[data-status][data-recheck]")
if (status && status.dataset.status === "pending") {
  const seconds = Number(status.dataset.recheck) || 3
  setTimeout(() => location.reload(), seconds * 1000)
}

export {}
