// The id of the request the current fiber serves: set by the global middleware, read by the
// access and security logs and the routes outside HttpApi (its own module, so none of them imports
// the middleware that sets it).
import { Context } from "effect"

/** The id of the request the current fiber serves ("" outside a request). */
export const currentRequestId = Context.Reference<string>("agent-commerce/currentRequestId", { defaultValue: () => "" })
