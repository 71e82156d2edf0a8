/**
 * Text that UTF-8 cannot carry. JSON's `\ud800` escape yields a lone UTF-16
 * surrogate, which SQLite stores and nodemailer writes as bytes that decode to
 * something else (three U+FFFD), so a field would not come back as it was sent.
 * Such input is refused at the edge, with the path of the field.
 */

// With the u flag a surrogate pair is one code point; only a lone surrogate is in Cs.
const LONE_SURROGATE = /\p{Cs}/u;

const join = (path: string, key: string | number): string => (path === '' ? String(key) : `${path}.${key}`);

/** The path of the first string (or object key) in `value` that holds a lone surrogate, or null. */
export function illFormedPath(value: unknown): string | null {
  // Iterative: a hostile body may nest thousands of levels deep.
  const stack: Array<[unknown, string]> = [[value, '']];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (LONE_SURROGATE.test(item)) return path;
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => stack.push([element, join(path, index)]));
    } else if (item !== null && typeof item === 'object') {
      for (const [key, element] of Object.entries(item)) {
        if (LONE_SURROGATE.test(key)) return join(path, key);
        stack.push([element, join(path, key)]);
      }
    }
  }
  return null;
}

export const ILL_FORMED = 'not well-formed Unicode (a lone surrogate)';
