/**
 * Dependency direction (STYLE.md): core imports only core; a room imports core
 * and itself, never another room; each library lives in one room; no cycles.
 * Only src/main.ts, src/daemon/, src/cli/ and the worker-thread entries in src/workers/ compose rooms.
 */
const ROOMS = ['config', 'store', 'security', 'ingress/http', 'ingress/console', 'ingress/smtp', 'delivery', 'bounce', 'sync', 'outbox', 'metrics', 'runtime'];

/**
 * [room, rooms it may import besides core and itself]. The web console is a second HTTP edge
 * in front of the API: it reuses the API's edge pieces (error statuses, the client address,
 * input validation, the cursor format); the API never imports the console.
 */
const ALSO = { 'ingress/console': ['ingress/http'] };

/**
 * Scheduling every room's loops run on (issue 29): the wakeable loop and the bounded wait.
 * Any room may import them; they import only core and each other (rule below), so no library
 * and no other room comes with them.
 */
const SHARED_SCHEDULING = '^src/runtime/(wakeable-loop|within)\\.ts$';

const roomRules = ROOMS.map((room) => ({
  name: `room-${room.replace('/', '-')}-stays-in-its-room`,
  comment: `src/${room} may import src/core and itself only${ALSO[room] ? ` (and ${ALSO[room].map((other) => `src/${other}`).join(', ')})` : ''}`,
  severity: 'error',
  from: { path: `^src/${room}/` },
  to: { path: '^src/', pathNot: [`^src/${room}/`, '^src/core/', SHARED_SCHEDULING, ...(ALSO[room] ?? []).map((other) => `^src/${other}/`)] },
}));

/** [library, the room that owns it] */
const LIBRARIES = [
  ['better-sqlite3', 'store'],
  ['hono|@hono', 'ingress/(http|console)'],
  ['smtp-server', 'ingress/smtp'],
  ['nodemailer', 'delivery'],
  ['imapflow|mailparser|fast-xml-parser', 'bounce'],
  ['nats', 'outbox'],
  ['pino', 'runtime'],
  ['smol-toml', 'config'],
  ['prom-client', 'metrics'],
];

const libraryRules = LIBRARIES.map(([library, room]) => ({
  name: `${library.split('|')[0].replace('@', '')}-only-in-${room.replace(/[/()|]+/g, '-').replace(/-$/, '')}`,
  severity: 'error',
  from: { path: '^src/', pathNot: [`^src/${room}/`, '\\.test\\.ts$'] },
  to: { path: `node_modules/(${library})(/|$)` },
}));

module.exports = {
  forbidden: [
    {
      name: 'core-is-pure',
      comment: 'src/core knows no I/O, no library and no other room',
      severity: 'error',
      from: { path: '^src/core/', pathNot: '\\.test\\.ts$' },
      to: { pathNot: '^src/core/' },
    },
    {
      name: 'zod-at-the-edges',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(config|ingress|sync)/', '\\.test\\.ts$'] },
      to: { path: 'node_modules/zod(/|$)' },
    },
    {
      name: 'shared-scheduling-is-plain',
      comment: 'the scheduling every room imports imports only core and itself',
      severity: 'error',
      from: { path: SHARED_SCHEDULING },
      to: { pathNot: ['^src/core/', SHARED_SCHEDULING] },
    },
    ...roomRules,
    ...libraryRules,
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'no-test-code-in-product',
      severity: 'error',
      from: { path: '^src/', pathNot: '\\.test\\.ts$' },
      to: { path: '(^test/|\\.test\\.ts$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
