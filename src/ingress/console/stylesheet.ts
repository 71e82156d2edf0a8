/**
 * The console's one stylesheet, served by the daemon (no CDN, no web fonts).
 * Colours keep WCAG AA contrast on their backgrounds; focus is always visible;
 * tables scroll sideways on a narrow screen rather than squeeze.
 */
export const STYLESHEET = `
:root { --ink: #1b1f24; --muted: #4a5560; --line: #c9d1d9; --bg: #ffffff; --panel: #f5f7f9; --accent: #0b5cad;
  --ok: #0f6b2f; --ok-bg: #e3f4e8; --bad: #a1121a; --bad-bg: #fbe5e6; --wait: #6b4b00; --wait-bg: #fff3cd; --held: #4b2d83; --held-bg: #efe7fb;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); line-height: 1.45; }
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--ink); color: #fff; padding: .5rem 1rem; }
.skip:focus { left: .5rem; z-index: 10; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .6rem 1rem; background: #13293d; color: #fff; }
.top a { color: #fff; }
.brand { font-weight: 700; letter-spacing: .02em; }
.top nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
.top nav a { text-decoration: none; padding: .2rem .1rem; border-bottom: 3px solid transparent; }
.top nav a[aria-current="page"] { border-bottom-color: #f5a623; }
.signout { margin-left: auto; display: flex; align-items: center; gap: .5rem; }
.who { opacity: .9; font-size: .9rem; }
main { padding: 1rem; max-width: 80rem; margin: 0 auto; }
main:focus { outline: none; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
.notice { background: var(--ok-bg); color: var(--ok); border-left: 4px solid var(--ok); padding: .5rem .75rem; }
.error-box { background: var(--bad-bg); color: var(--bad); border-left: 4px solid var(--bad); padding: .5rem .75rem; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .75rem 1rem; }
.grid { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); }
form.filters { display: grid; gap: .5rem 1rem; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); align-items: end; }
label { display: block; font-size: .85rem; color: var(--muted); font-weight: 600; }
input, select, button { font: inherit; }
input, select { width: 100%; padding: .35rem .45rem; border: 1px solid #8a96a3; border-radius: 4px; background: #fff; color: var(--ink); }
button, .button { display: inline-block; padding: .4rem .9rem; border-radius: 4px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--bad); border-color: var(--bad); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin: .75rem 0; }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: .92rem; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: .05rem .45rem; border-radius: 999px; font-size: .82rem; font-weight: 600; border: 1px solid currentColor; }
.ok { color: var(--ok); background: var(--ok-bg); }
.bad { color: var(--bad); background: var(--bad-bg); }
.wait { color: var(--wait); background: var(--wait-bg); }
.held { color: var(--held); background: var(--held-bg); }
dl.fields { display: grid; grid-template-columns: minmax(9rem, max-content) 1fr; gap: .25rem 1rem; margin: 0; }
dl.fields dt { color: var(--muted); font-weight: 600; }
dl.fields dd { margin: 0; overflow-wrap: anywhere; }
pre.headers { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); border: 1px solid var(--line); padding: .75rem; font-size: .85rem; max-height: 30rem; overflow: auto; }
.counts { display: flex; flex-wrap: wrap; gap: .5rem; list-style: none; padding: 0; margin: .5rem 0 1rem; }
.counts a { text-decoration: none; }
.pager { display: flex; gap: 1rem; align-items: center; margin: .75rem 0; }
.muted { color: var(--muted); }
.chart { width: 100%; height: auto; max-height: 14rem; border: 1px solid var(--line); background: #fff; }
.legend { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; padding: 0; font-size: .9rem; }
.key { display: inline-block; width: .9rem; height: .9rem; vertical-align: -2px; margin-right: .3rem; border-radius: 2px; }
.key-sent { background: #1f7a3a; } .key-deferred { background: #b7791f; } .key-failed { background: #b3261e; } .key-bounced { background: #6b3fa0; }
meter { width: 6rem; }
.signin { max-width: 26rem; }
@media (max-width: 40rem) {
  main { padding: .6rem; }
  .signout { margin-left: 0; }
  dl.fields { grid-template-columns: 1fr; }
  dl.fields dt { margin-top: .4rem; }
}
`;
