// What `npm start` runs: dist/main.js, a few lines before the server (src/main.ts, built to
// dist/server.js) is loaded.
//
// glibc's malloc keeps freed memory at the top of its heaps until it exceeds a trim threshold, and
// raises that threshold on its own (to twice the largest block it has handed back to the system,
// up to 64 MB) unless the process was started with the threshold set. V8's optimising compiler
// frees a few hundred MB of compile memory after tiering up the embedded store's WebAssembly (its
// SQL parser above all), so a server on the embedded default kept 65–95 MB of freed memory for
// good: 281–302 MB resident idle, against 206–227 MB with the threshold fixed (docs/storage.md,
// "Memory"). glibc reads the setting only when a process starts, so on Linux this replaces itself
// once (`process.execve`: the same pid, arguments, node flags and stdio; ~0.1 s, because nothing
// else is loaded yet) with `MALLOC_TRIM_THRESHOLD_` set, then loads the server. An operator who
// sets the variable keeps their value; elsewhere (macOS, Windows, a Node without execve) the server
// starts as it is. musl ignores the variable.

/** The variable glibc reads at start-up. */
const TRIM_VARIABLE = "MALLOC_TRIM_THRESHOLD_"

/** 1 MiB: freed memory above this at a heap's top goes back to the system. */
const TRIM_THRESHOLD_BYTES = 1024 * 1024

if (process.platform === "linux" && process.env[TRIM_VARIABLE] === undefined && process.execve) {
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      ...process.env,
      [TRIM_VARIABLE]: String(TRIM_THRESHOLD_BYTES)
    })
  } catch {
    // Not replaced (a sandbox refusing exec, say): the server runs with malloc's defaults.
  }
}

// Not imported by anything (it would replace the importing process): an entry only. The server is
// beside it in dist/ (scripts/build.mjs); a computed specifier, so esbuild leaves it to run time.
await import(new URL("./server.js", import.meta.url).href)
