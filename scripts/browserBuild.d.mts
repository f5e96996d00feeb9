import type { BuildOptions } from "esbuild"
export declare const browserBuildOptions: BuildOptions
export declare const browserEntries: ReadonlyArray<"dashboard" | "owner" | "checkout">
