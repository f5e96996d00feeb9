import type { BuildOptions, Plugin } from "esbuild"
export declare const bundleEffectOnly: Plugin
export declare const serverBuildOptions: BuildOptions
export declare const startNodeFlags: () => ReadonlyArray<string>
export declare const siteFiles: Plugin
