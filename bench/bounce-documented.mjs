// The reason rules on refusals as vendors and MTAs document them (issue 30): a second held-out set,
// beside the corpus. bench/documented-refusals.json holds each refusal as the source gives it
// (a provider's page, an MTA's code, an RFC; never a bounce parser or a sample corpus), the category
// its stated meaning falls in, and where it was read. The set was gathered apart from the rule tables
// (by people who did not read them), in sets by source, each scored before any rule was written from
// it; the figures at each first scoring are in bench/README.md. Rules may be written from the misses of
// the open sets; the held-out ones (`held_out` in the file) never are, so their figure says whether those rules carry over.
// Each refusal is read as the parser reads a diagnostic: its codes found, the remote server's own
// words first.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const round = (value) => Math.round(value * 10) / 10;

/** The share of documented refusals whose reason is read as documented, overall and by kind of source. */
export async function documentedWording(root) {
  const { reasonOfDiagnostic } = await import(pathToFileURL(join(root, 'dist/core/bounce/classify.js')).href);
  // `held_out`: the sets no rule is written from; their figure says whether rules written from the others carry over.
  const { refusals, held_out: heldOut } = JSON.parse(
    readFileSync(join(root, 'bench/documented-refusals.json'), 'utf8'),
  );
  const scored = refusals.map((r) => ({
    id: r.id,
    set: r.set,
    kind: r.source.kind,
    expected: r.reason,
    got: reasonOfDiagnostic(r.text),
  }));
  const share = (list) =>
    list.length === 0 ? null : round((100 * list.filter((s) => s.got === s.expected).length) / list.length);
  const flat = { 'documented refusals': scored.length, 'documented refusals reason %': share(scored) };
  for (const kind of [...new Set(scored.map((s) => s.kind))].sort())
    flat[`documented refusals reason % (${kind})`] = share(scored.filter((s) => s.kind === kind));
  for (const set of [...new Set(scored.map((s) => s.set))].sort())
    flat[`documented refusals reason % (set ${set})`] = share(scored.filter((s) => s.set === set));
  flat['documented refusals reason %, held-out sets'] = share(scored.filter((s) => heldOut.includes(s.set)));
  return { flat, misses: scored.filter((s) => s.got !== s.expected) };
}

// Run alone: `node bench/bounce-documented.mjs` prints the figures and each miss.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = new URL('..', import.meta.url).pathname;
  const { flat, misses } = await documentedWording(root);
  console.log(JSON.stringify(flat, null, 1));
  for (const m of misses)
    console.log(`${m.set.padEnd(22)} ${m.id.padEnd(40)} expected ${m.expected.padEnd(18)} read ${m.got}`);
}
