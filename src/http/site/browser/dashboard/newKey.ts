// A new key's secret, shown once: the panel, its copy button and its dismissal.
import { $, ApiError, input } from "./api.js"
import { fail, say } from "./ui.js"

export const showNewKey = (secret: string) => {
  input("new-key-secret").value = secret
  $("new-key-example").textContent = `curl -H "Authorization: Bearer ${secret}" ${location.origin}/api/v1/agent/me`
  $("new-key").hidden = false
  $("new-key").focus()
  input("new-key-secret").select()
}
export function hideNewKey() {
  input("new-key-secret").value = ""
  $("new-key-example").textContent = ""
  $("new-key").hidden = true
}

/** The panel's buttons: dismiss hides the key for good; copy uses the clipboard, or selects it. */
export const bindNewKeyButtons = () => {
  $("dismiss-key").addEventListener("click", () => {
    hideNewKey()
    say("The key is hidden. It cannot be shown again.")
  })

  $("copy-key").addEventListener("click", () => {
    const secret = input("new-key-secret")
    const button = $("copy-key")
    const done = () => {
      say("Key copied to the clipboard.")
      button.textContent = "Copied ✓"
      setTimeout(() => {
        button.textContent = "Copy key"
      }, 2500)
    }
    const manual = () => {
      secret.select()
      fail(new ApiError(0, "Could not copy automatically: the key is selected, press Ctrl+C (or Cmd+C)."))
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(secret.value).then(done, manual)
    } else {
      secret.select()
      try {
        if (document.execCommand("copy")) {
          done()
          return
        }
      } catch {
        // fall through to the manual copy
      }
      manual()
    }
  })
}
