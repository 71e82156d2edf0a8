/**
 * Dependency direction (STYLE.md): core imports only core; a room imports core
 * and itself, never another room; each library lives in one room; no cycles.
 * runtime/ is the rooms' shared kernel (the service lifecycle, loops, worker
 * threads): any room may use it, and it uses no room. Only src/main.ts,
 * src/composition/ and src/cli/ compose rooms. A worker thread's entry (*.thread.ts) lives in the
 * room whose work it runs, and is named there by a local `new URL(..., import.meta.url)`.
 * core/contracts holds the wire shapes of events and reports; ingress/http/views the API's answers.
 */
const ROOMS = [
  'config',
  'store',
  'security',
  'ingress/http',
  'ingress/console',
  'ingress/smtp',
  'ingress/commands',
  'ingress/webhooks',
  'ingress/mcp',
  'delivery',
  'mailbox',
  'bounce',
  'pec',
  'sync',
  'outbox',
  'fleet',
  'nats',
  'metrics',
  'runtime',
  'storage',
];

/**
 * [room, rooms it may import besides core, runtime and itself]. The web console is a second HTTP
 * edge in front of the API: it reuses the API's edge pieces (error statuses, the client address,
 * input validation, the cursor format); the API never imports the console. JetStream commands
 * (ingress/commands) are parsed with the API's /add-messages parser. The fleet's own streams (the
 * replicated spool) are written through the event mirror's acknowledged publisher. src/nats is the
 * link to the NATS server that the mirror and the fleet share: its connection lifecycle and the typed
 * codec of what they write to JetStream. Bounces and PEC receipts arrive in IMAP mailboxes: both
 * watch theirs with src/mailbox (the IMAP session, the watcher and its batches, the parser's
 * thread), which knows neither. The bounce room's service also runs the PEC accounts' watchers, so
 * that the daemon's mailboxes start and stop as one service. Bodies are opened in the compose and
 * relay threads (issue 45): their entries make src/security's body seal from the key-encryption
 * keys they are given, as a function cannot cross to a thread. For the same reason the compose
 * threads open src/storage's body store, where they put the attachments they offload, or src/nats's
 * (a fleet's JetStream object store).
 */
const ALSO = {
  delivery: ['security', 'storage', 'nats'],
  // The /add-messages parser threads seal each payload under its data key as they parse it.
  'ingress/http': ['security'],
  // So do the SMTP session processes, each message as they receive it.
  'ingress/smtp': ['security'],
  'ingress/console': ['ingress/http'],
  'ingress/commands': ['ingress/http'],
  // The MCP tools are the API's routes: their schemas, and the API's app called in the process.
  'ingress/mcp': ['ingress/http'],
  fleet: ['outbox', 'nats'],
  outbox: ['nats'],
  bounce: ['mailbox', 'pec'],
  pec: ['mailbox'],
};
const KERNEL = ['runtime'];

/**
 * The scheduling every room's loops run on (issue 29): the wakeable loop and the bounded wait.
 * They import only core and each other (rule below): no library and no other room comes with them.
 */
const SHARED_SCHEDULING = '^src/runtime/(wakeable-loop|within)\\.ts$';

const roomRules = ROOMS.map((room) => ({
  name: `room-${room.replace('/', '-')}-stays-in-its-room`,
  comment: `src/${room} may import src/core, src/runtime and itself only${ALSO[room] ? ` (and ${ALSO[room].map((other) => `src/${other}`).join(', ')})` : ''}`,
  severity: 'error',
  from: { path: `^src/${room}/` },
  to: {
    path: '^src/',
    pathNot: [`^src/${room}/`, '^src/core/', ...[...KERNEL, ...(ALSO[room] ?? [])].map((other) => `^src/${other}/`)],
  },
}));

/**
 * Rooms whose face is their index.ts: from outside, only it is imported, so that what the rest of
 * the daemon uses of them is one short list.
 */
/**
 * Each room has a face, its index.ts: what the rest of the product may use of it. From outside a
 * room only the face is imported, so that a room's inside can move without its callers knowing.
 * The core's sub-folders are faces of their own to the rooms; inside the core they import each
 * other directly (one room, and no cycle through the faces). Tests may reach inside.
 */
const faceRules = [
  ...ROOMS.map((room) => ({
    name: `${room.replace('/', '-')}-only-through-its-index`,
    comment: `from outside src/${room}, only src/${room}/index.ts is imported`,
    severity: 'error',
    from: { path: '^src/', pathNot: [`^src/${room}/`, '\\.test\\.tsx?$'] },
    to: { path: `^src/${room}/`, pathNot: `^src/${room}/index\\.ts$` },
  })),
  {
    name: 'core-only-through-its-indexes',
    comment: 'from outside src/core, only src/core/index.ts and the index.ts of each of its sub-folders are imported',
    severity: 'error',
    from: { path: '^src/', pathNot: ['^src/core/', '\\.test\\.tsx?$'] },
    to: { path: '^src/core/', pathNot: ['^src/core/index\\.ts$', '^src/core/[^/]+/index\\.ts$'] },
  },
];

/** [library, the room that owns it] */
const LIBRARIES = [
  ['better-sqlite3', 'store'],
  ['hono|@hono', 'ingress/(http|console)'],
  ['smtp-server', 'ingress/smtp'],
  ['nodemailer', 'delivery'],
  ['imapflow', 'mailbox'],
  ['mailparser', '(bounce|pec)'],
  ['fast-xml-parser', 'pec'],
  ['nats|@nats-io', '(outbox|fleet|nats)'],
  ['pino', 'runtime'],
  ['smol-toml', 'config'],
  ['prom-client', 'metrics'],
  ['@modelcontextprotocol', 'ingress/mcp'],
  ['@aws-sdk', 'storage'],
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
      comment:
        'zod checks what comes in from outside: configuration, requests, client replies, and the NATS wire. What the fleet (src/fleet) and the mirror (src/outbox) read back from JetStream was written by another node or version, so it is checked like a request body, against their own wire schemas over the codec in src/nats',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(config|ingress|sync|nats|fleet|outbox|cli)/', '\\.test\\.ts$'] },
      to: { path: 'node_modules/zod(/|$)' },
    },
    {
      name: 'cli-takes-api-types-only',
      comment:
        "the CLI types the API's answers by its zod view schemas, as types only: zod and the API's code stay out of its run time",
      severity: 'error',
      from: { path: '^src/cli/', pathNot: '\\.test\\.ts$' },
      to: { path: ['node_modules/zod(/|$)', '^src/ingress/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'composition-is-not-imported',
      comment:
        'main.ts and src/composition/ compose the rooms; no room (nor the CLI, but for serve and the stdio MCP server, each a process of its own) leans on them',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: [
          '^src/main\\.ts$',
          '^src/composition/',
          '^src/cli/serve\\.ts$',
          '^src/cli/verbs/mcp\\.ts$',
          '\\.test\\.ts$',
        ],
      },
      to: { path: '^src/(main\\.ts$|composition/)' },
    },
    {
      name: 'config-only-in-composition',
      comment: 'the rooms take settings objects, never the configuration: only the composition and the CLI read it',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/main\\.ts$', '^src/composition/', '^src/cli/', '^src/config/'] },
      to: { path: '^src/config/' },
    },
    {
      name: 'contracts-use-no-services',
      comment: 'a contract does not depend on a use-case (a *-service) or on the ports',
      severity: 'error',
      from: { path: '^src/core/contracts/' },
      to: { path: ['^src/core/[^/]+-service\\.ts$', '^src/core/[^/]+/[^/]+-service\\.ts$', '^src/core/ports\\.ts$'] },
    },
    {
      name: 'http-shapes-only-at-http-edges',
      comment:
        "The API's answer shapes (ingress/http/views) and its transport error codes (http-error.ts) are for the HTTP edges (the API and the console): not even a composition root builds or raises them",
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/ingress/(http|console)/'] },
      to: { path: '^src/ingress/http/(views/|http-error\\.ts$)' },
    },
    {
      name: 'shared-scheduling-is-plain',
      comment: 'the scheduling every room imports imports only core and itself',
      severity: 'error',
      from: { path: SHARED_SCHEDULING },
      to: { pathNot: ['^src/core/', SHARED_SCHEDULING] },
    },
    {
      name: 'one-body-reader',
      comment:
        "request bodies are read by ingress/http/request-body.ts alone, under a limit: hono's body-limit and validator middleware read them by other means (test/security/body-reads.test.ts finds direct reads)",
      severity: 'error',
      from: { path: '^src/' },
      to: {
        path: [
          'node_modules/hono/dist/(cjs/|types/)?(middleware/body-limit|validator)/',
          'node_modules/@hono/[^/]*validator',
        ],
      },
    },
    ...roomRules,
    ...faceRules,
    {
      name: 'thread-entry-stays-in-its-room',
      comment:
        "a worker thread's entry (*.thread.ts) imports only its own room, core and runtime (and node's own modules); the threads that open sealed bodies make src/security's body seal from the keys they are given",
      severity: 'error',
      from: { path: '^src/(.+)/[^/]+\\.thread\\.ts$' },
      to: {
        pathNot: ['^src/$1/', '^src/core/', '^src/runtime/', '^src/security/index\\.ts$'],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'thread-entry-is-not-imported',
      comment:
        "a worker thread's entry is started by its pool (a URL), never imported: importing it would serve tasks on the importing thread",
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '\\.thread\\.ts$' },
    },
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
