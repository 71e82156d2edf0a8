// The bounce parser's accuracy on a corpus of real bounces (issue 30): the whole set, each MTA
// family, and leave-one-source-out. Parses in-process with the built parser (dist/), LF and CRLF.
// The corpus is read where it lies (BOUNCE_CORPUS, else ../shared/data/bounces beside the repo);
// nothing of it is copied here. See bench/README.md for how leave-one-source-out is honoured.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { documentedWording } from './bounce-documented.mjs';
import { foldsWithout, phraseFamilies, singleFamilyPhrases, sourceOfId } from './bounce-loso.mjs';
import { figures, scoreItem } from './bounce-scoring.mjs';

export function corpusDir(root) {
  return resolve(process.env.BOUNCE_CORPUS ?? join(root, '..', 'shared', 'data', 'bounces'));
}

async function parserOf(root) {
  const { analyseBounce } = await import(pathToFileURL(join(root, 'dist/bounce/bounce-parser.js')).href);
  const { parseReportOf } = await import(pathToFileURL(join(root, 'dist/bounce/parse-report.js')).href);
  return async (raw) => parseReportOf(await analyseBounce(raw));
}

/** The reason phrase tables the classifier reads (the same arrays: bounce-loso.mjs instruments them in place). */
async function phraseTablesOf(root) {
  const tables = await import(pathToFileURL(join(root, 'dist/core/bounce/reasons.js')).href);
  return { decisive: tables.DECISIVE_PHRASES, precise: tables.REASON_PHRASES, vague: tables.GENERIC_REASON_PHRASES };
}

/** Sisimai's reason names with the category the manifest gives them (a second opinion's reason is scored by it). */
function sisimaiCategoriesOf(items) {
  const categories = new Map();
  for (const item of items) for (const e of item.entries ?? []) if (e.category) categories.set(e.reason, e.category);
  return categories;
}

const toCrlf = (raw) => Buffer.from(raw.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');

const round = (value) => (value === null ? null : Math.round(value * 10) / 10);
const rounded = (figs) => Object.fromEntries(Object.entries(figs).map(([key, value]) => [key, round(value)]));

/**
 * Leave-one-source-out: each MTA family in turn is the held-out fold. The rule tables are written
 * from the RFCs and the vendors' documented messages, never from a corpus file, so no fold's rules
 * were derived from it: a fold's score is the score on its files. Reported pooled over the folds
 * (every file scored once, as held out) and as the mean of the folds (each family weighs the same).
 */
function leaveOneSourceOut(scored) {
  const families = [...new Set(scored.map((s) => s.mta))];
  const folds = families.map((mta) => ({ mta, figs: figures(scored.filter((s) => s.mta === mta)) }));
  return { folds, pooled: figures(scored), mean: meanOfFolds(folds) };
}

/** Each figure's plain mean over the folds that have it. */
function meanOfFolds(folds) {
  const mean = {};
  for (const key of Object.keys(folds[0]?.figs ?? {})) {
    if (key === 'files') continue;
    const values = folds.map((f) => f.figs[key]).filter((v) => v !== null);
    mean[key] = values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
  }
  return mean;
}

/** The bench scenario: flat numeric figures for the summary; the per-family detail in `detail`. */
export async function bouncesAccuracy(root) {
  // The second held-out set (bench/bounce-documented.mjs) is in the repository: scored with or without the corpus.
  const documentedSet = await documentedWording(root);
  const dir = corpusDir(root);
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) {
    console.log(
      `bounces-accuracy: no corpus at ${dir} (set BOUNCE_CORPUS to a directory with manifest.json); only the documented refusals scored`,
    );
    return { flat: documentedSet.flat, detail: {}, strictDetail: {}, misses: {}, documentedMisses: {} };
  }
  const { items } = JSON.parse(readFileSync(manifestPath, 'utf8'));
  const parse = await parserOf(root);
  const sisimaiCategories = sisimaiCategoriesOf(items);
  // Each file read once; scored as it is, as CRLF, and in the strict folds.
  const files = new Map(items.map((item) => [item, readFileSync(join(dir, item.file))]));
  const scoreOne = async (item, lineEnds = (raw) => raw) =>
    scoreItem(item, await parse(lineEnds(files.get(item))), sisimaiCategories);
  const scoreAll = async (lineEnds) => {
    const scored = [];
    for (const item of items) scored.push(await scoreOne(item, lineEnds));
    return scored;
  };
  const lf = await scoreAll();
  const crlf = await scoreAll(toCrlf);
  const loso = leaveOneSourceOut(lf);
  const whole = figures(lf);
  const flat = {};
  for (const [key, value] of Object.entries(rounded(whole))) flat[`whole ${key}`] = value;
  for (const [key, value] of Object.entries(rounded(figures(crlf))))
    if (key !== 'files') flat[`whole CRLF ${key}`] = value;
  for (const key of ['reason %', 'recipient %', 'hard/soft balanced %'])
    flat[`LOSO pooled ${key}`] = round(loso.pooled[key]);
  for (const [key, value] of Object.entries(rounded(loso.mean)))
    flat[`LOSO mean of ${loso.folds.length} families ${key}`] = value;
  // The strict folds (bench/bounce-loso.mjs): each family scored without the phrases only it needs;
  // then again keeping those whose wording a cited source outside the corpus shows.
  const fired = await phraseFamilies(items, scoreOne, await phraseTablesOf(root));
  const cited = citedPhrases(root, fired.state.all);
  const strict = await foldsWithout(items, scoreOne, fired);
  const documented = await foldsWithout(items, scoreOne, fired, (id) => cited.has(sourceOfId(id)));
  const strictLoso = foldFigures(flat, 'LOSO strict', strict);
  foldFigures(flat, 'LOSO documented', documented);
  const single = singleFamilyPhrases(fired);
  flat['LOSO strict: phrases withheld from their only family'] = single.length;
  flat['LOSO documented: of those, cited outside the corpus'] = single.filter(({ id }) =>
    cited.has(sourceOfId(id)),
  ).length;
  Object.assign(flat, documentedSet.flat);
  const detail = Object.fromEntries(loso.folds.map((f) => [f.mta, rounded(f.figs)]));
  const strictDetail = Object.fromEntries(strictLoso.folds.map((f) => [f.mta, rounded(f.figs)]));
  return { flat, detail, strictDetail, misses: misses(lf), documentedMisses: misses(documented.scored) };
}

const FOLD_KEYS = ['reason %', 'recipient %', 'hard/soft balanced %'];

/** A set of folds' pooled and family-mean figures, written into `flat` under `label`. */
function foldFigures(flat, label, folds) {
  const loso = leaveOneSourceOut(folds.scored);
  for (const key of FOLD_KEYS) flat[`${label} pooled ${key}`] = round(loso.pooled[key]);
  for (const key of FOLD_KEYS) flat[`${label} mean of ${loso.folds.length} families ${key}`] = round(loso.mean[key]);
  return loso;
}

/**
 * The phrase alternatives whose wording bench/bounce-phrase-sources.json shows in a source outside
 * the corpus (an MTA's code, an RFC, a vendor's page). A citation that names no alternative of the
 * tables (the phrase was rewritten since) is an error: the file must follow the tables.
 */
function citedPhrases(root, alternatives) {
  const { sources } = JSON.parse(readFileSync(join(root, 'bench/bounce-phrase-sources.json'), 'utf8'));
  const known = new Set(alternatives.map(sourceOfId));
  const stale = sources.filter((s) => !known.has(s.phrase)).map((s) => s.phrase);
  if (stale.length > 0)
    throw new Error(`bench/bounce-phrase-sources.json cites phrases the tables no longer have: ${stale.join(' | ')}`);
  return new Set(sources.filter((s) => s.source !== null).map((s) => s.phrase));
}

/** Which items missed which metric (ids only: what a developer opens in the corpus, never its values). */
function misses(scored) {
  const out = {};
  for (const key of ['detect', 'hardsoft', 'status', 'recipient', 'reason']) {
    out[key] = scored
      .filter(
        (s) => key in s && !(key === 'detect' ? s[key][0] === s[key][1] : key === 'hardsoft' ? s[key].ok : s[key]),
      )
      .map((s) => s.id);
  }
  return out;
}

let once = null;

/**
 * For bench/run.mjs: the flat figures (the same each run: parsed once), and each family's figures
 * in bench/results/<date>-bounces-accuracy.json.
 */
export async function bouncesAccuracyScenario(root) {
  once ??= bouncesAccuracy(root).then((result) => {
    if (result === null) return {};
    const dir = join(root, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${new Date().toISOString().slice(0, 10)}-bounces-accuracy.json`);
    writeFileSync(
      file,
      `${JSON.stringify({ corpus: 'BOUNCE_CORPUS or ../shared/data/bounces', flat: result.flat, families: result.detail, strictFamilies: result.strictDetail }, null, 2)}\n`,
    );
    console.log(`bounces-accuracy: per-family figures in ${file}`);
    return result.flat;
  });
  return once;
}

// Run alone: `node bench/bounces-accuracy.mjs` prints the figures and each family's.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = resolve(new URL('..', import.meta.url).pathname);
  const result = await bouncesAccuracy(root);
  if (result !== null) {
    console.log(JSON.stringify(result.flat, null, 1));
    for (const [mta, figs] of Object.entries(result.detail))
      console.log(
        `${mta.padEnd(22)} n=${String(figs.files).padStart(3)} reason ${figs['reason %']} recipient ${figs['recipient %']} hard/soft ${figs['hard/soft %']}`,
      );
    if (process.env.SHOW_MISSES)
      console.log(JSON.stringify({ whole: result.misses, 'documented folds': result.documentedMisses }, null, 1));
  }
}
