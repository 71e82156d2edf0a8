// Leave-one-source-out that does not take the rules' provenance on trust (issue 30). The reason
// rules' generic English phrases (the phrase tables of dist/core/bounce/reasons.js) were partly
// written while the corpus was scored, so "no rule was derived from a corpus file" is weakest there.
// This fold withholds, from each MTA family, every phrase that fires on that family's files and on no
// other family's: a phrase only one family needs is assumed written from that family's files. What
// another family also needs would have been written without the held-out one. The documented tables
// (the RFC 3463 / 5248 registry, the reply codes, the vendors' wording with their citations) and the
// SMTP-phase corrections are kept in every fold. Pessimistic on purpose: a documented phrase that only
// one family of this corpus happens to use is withheld from it too.
//
// The documented folds are the same, except that a withheld phrase stays when
// bench/bounce-phrase-sources.json shows its wording in a source outside the corpus (an MTA's code, an
// RFC, a provider's page; never a bounce parser, whose rules come from corpora like this one): a rule
// writer reading that source would have written it without the held-out family's files.
//
// How: each table entry's pattern is split into its top-level alternatives (an anyOf table is its
// alternatives joined by `|`), and replaced, in the table the classifier reads, by a pattern with the
// same answers that records which alternatives matched and can be told to ignore some.

/** A pattern's top-level alternatives: `a|(b|c)|[|]` is `a`, `(b|c)`, `[|]`. */
export function alternativesOf(source) {
  const parts = [];
  let depth = 0;
  let inClass = false;
  let start = 0;
  for (let i = 0; i < source.length; i += 1) {
    const c = source[i];
    if (c === '\\') i += 1;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth += 1;
    else if (c === ')') depth -= 1;
    else if (c === '|' && depth === 0) {
      parts.push(source.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(source.slice(start));
  return parts;
}

/**
 * The phrase tables, instrumented in place: `fired` collects the ids that matched, `withheld` ids are
 * ignored, `all` lists every alternative's id.
 */
export function instrumentPhrases(tables) {
  const state = { fired: new Set(), withheld: new Set(), all: [] };
  for (const [name, table] of Object.entries(tables)) {
    table.forEach(([reason, pattern], entry) => {
      const alternatives = alternativesOf(pattern.source).map((source, index) => ({
        id: `${name}[${entry}].${index}: ${source}`,
        regex: new RegExp(source, pattern.flags.replace(/[gy]/g, '')),
      }));
      state.all.push(...alternatives.map(({ id }) => id));
      const test = (text) => {
        let matched = false;
        for (const { id, regex } of alternatives) {
          if (state.withheld.has(id) || !regex.test(text)) continue;
          state.fired.add(id);
          matched = true;
        }
        return matched;
      };
      table[entry] = [reason, { source: pattern.source, flags: pattern.flags, test }];
    });
  }
  return state;
}

/** An instrumented alternative's id is `table[entry].index: source`; its source is what a citation names. */
export const sourceOfId = (id) => id.slice(id.indexOf(': ') + 2);

/**
 * Instruments the tables and parses every item once, to see which phrase alternatives fire on which
 * families. `scoreOne(item)` parses and scores one item. Returns what `foldsWithout` needs.
 */
export async function phraseFamilies(items, scoreOne, tables) {
  const state = instrumentPhrases(tables);
  const familiesOf = new Map();
  for (const item of items) {
    state.fired = new Set();
    await scoreOne(item);
    for (const id of state.fired) {
      const families = familiesOf.get(id) ?? new Set();
      families.add(item.mta);
      familiesOf.set(id, families);
    }
  }
  return { state, familiesOf };
}

/** Which alternatives fire on one family alone (the ids strict folds withhold), each with its family. */
export const singleFamilyPhrases = ({ familiesOf }) =>
  [...familiesOf]
    .filter(([, families]) => families.size === 1)
    .map(([id, families]) => ({ id, mta: [...families][0] }));

/**
 * Scores each family with the phrases that fire on it alone withheld, except those `kept(id)` says
 * stay (a phrase whose wording is documented outside the corpus: bench/bounce-phrase-sources.json).
 */
export async function foldsWithout(items, scoreOne, fired, kept = () => false) {
  const { state } = fired;
  const single = singleFamilyPhrases(fired).filter(({ id }) => !kept(id));
  const scored = [];
  for (const mta of new Set(items.map((item) => item.mta))) {
    state.withheld = new Set(single.filter((phrase) => phrase.mta === mta).map(({ id }) => id));
    for (const item of items.filter((i) => i.mta === mta)) scored.push(await scoreOne(item));
  }
  state.withheld = new Set();
  return { scored };
}
