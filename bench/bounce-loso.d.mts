// Types for the part of bench/bounce-loso.mjs that the tests use (test/bench/bounce-evidence.test.ts).

/** A pattern's top-level alternatives: `a|(b|c)|[|]` is `a`, `(b|c)`, `[|]`. */
export function alternativesOf(source: string): string[];
