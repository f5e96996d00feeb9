// Access rules for procedures: public ones pass; authenticated ones need a caller (keys issue).
import { Effect, Layer } from "effect"
import { Unauthorized } from "../../schema/errors.js"
import { ProcedureAuth } from "./adapter.js"

export const ProcedureAuthLive = Layer.succeed(ProcedureAuth, {
  authorize: (access) =>
    access._tag === "public"
      ? Effect.succeed(undefined)
      : Effect.fail(new Unauthorized({ message: "authentication required" }))
})
