// The key form's permission boxes: "all of commerce" checks and locks the four commerce ones.
import { input } from "./api.js"

const commerceBoxes = () => document.querySelectorAll<HTMLInputElement>("input[data-group=commerce]")
export function syncCommerce() {
  const all = input("perm-commerce-all").checked
  for (const box of Array.from(commerceBoxes())) {
    if (all) box.checked = true
    box.disabled = all
  }
}

export const chosenPermissions = (): Array<string> => {
  const checked = (selector: string) =>
    Array.from(document.querySelectorAll<HTMLInputElement>(selector)).map((b) => b.value)
  if (input("perm-commerce-all").checked) return ["commerce:*", ...checked("input[data-group=agent]:checked")]
  return checked("input[data-group]:checked")
}
