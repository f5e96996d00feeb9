import type { BuildOptions, Plugin } from "esbuild"
export declare const bundleEffectOnly: Plugin
export declare const serverBuildOptions: BuildOptions
/** The server's bundles in dist/ by output name: `main` (what `npm start` runs) and `server`. */
export declare const distEntries: () => { main: string; server: string }
export declare const startNodeFlags: () => ReadonlyArray<string>
export declare const siteFiles: Plugin
