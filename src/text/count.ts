// A count as a person reads it: "1 file", "0 files", "3 servers" — never "file(s)". One place for the rule, so
// every message of the core and both front ends says it the same way.

/** `n` and the noun in the form that number takes; `many` defaults to the noun with an "s". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
