// The full procedure table: public procedures plus the authenticated ones. Add one spread per router.
import { publicProcedures } from "./procedures.js"
import { investProcedures } from "../invest/procedures.js"
import { paymentProcedures } from "../payments/procedures.js"

export const procedures = {
  ...publicProcedures,
  ...investProcedures,
  ...paymentProcedures
}
