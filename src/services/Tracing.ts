// Span options for hot service methods: no stack trace is captured per span (it cost ~5 % of a
// purchase's CPU with no exporter configured); the span name still locates the code.
export const span = { captureStackTrace: false } as const
