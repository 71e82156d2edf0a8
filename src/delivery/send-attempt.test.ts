/**
 * What an attempt hands the relay about attachment offload, and what it records of it. The
 * handoff here is a fake of our own port: the composition and the relay are tested against real
 * peers in test/storage/attachment-offload.test.ts; this is the rule a PEC account keeps.
 */
import { describe, expect, it } from 'vitest';
import type { Account } from '../core/account/index.js';
import type { Handoff, HandoffJob, HandoffResult } from '../core/delivery/index.js';
import type { ClaimedMessage, OffloadedFiles } from '../core/message/index.js';
import type { Tenant } from '../core/tenant/index.js';
import { attemptSend, type SendAttemptDeps } from './send-attempt.js';

const OFFLOAD = { baseUrl: 'https://mail.example.com', overBytes: 1_000_000, linkLifetimeSeconds: null };
const FILES: OffloadedFiles = {
  lifetimeMs: 60_000,
  files: [{ index: 0, fileId: 'f'.repeat(32), object: 'a'.repeat(48), key: new Uint8Array([1]), sizeBytes: 5 }],
};

const tenant = {
  id: 'acme',
  clientBaseUrl: null,
  clientAttachmentPath: null,
  clientAuth: null,
  sendingDomains: [],
  listUnsubscribe: null,
  attachmentOffload: OFFLOAD,
} as unknown as Tenant;
const account = (isPec: boolean) => ({ tenantId: 'acme', id: 'main', isPec }) as unknown as Account;
const message = {
  pk: 1,
  tenantId: 'acme',
  id: 'm-1',
  accountId: 'main',
  batchCode: null,
  attempts: 1,
  createdAt: 0,
  source: 'http',
  body: Buffer.from('{}'),
  key: null,
  messageIdHeader: '<m-1@acme.example>',
  spoolId: null,
} as unknown as ClaimedMessage;

function depsWith(result: HandoffResult): { deps: SendAttemptDeps; jobs: HandoffJob[] } {
  const jobs: HandoffJob[] = [];
  const handoff: Handoff = {
    deliver: async (job) => (jobs.push(job), result),
    connections: async () => [],
    close: async () => undefined,
  };
  const deps: SendAttemptDeps = {
    handoff,
    readSpool: () => ({ key: null, parts: [] }),
    readObject: async () => null,
    retry: { scheduleMs: [60_000], jitter: 0, maxAgeMs: 86_400_000 },
    returnPath: () => null,
    unsubscribeLinks: null,
    now: () => 1_000,
    random: () => 0,
  };
  return { deps, jobs };
}

const SENT: HandoffResult = {
  built: true,
  reply: {
    ok: true,
    replyCode: 250,
    enhancedStatus: '2.0.0',
    text: '250 ok',
    accepted: ['a@example.net'],
    refused: [],
  },
  files: FILES,
};

describe('an attempt and attachment offload', () => {
  it("passes the tenant's offload setting to the composition, and none for a PEC account's message", async () => {
    const { deps, jobs } = depsWith(SENT);
    await attemptSend(deps, message, account(false), tenant);
    await attemptSend(deps, message, account(true), tenant);
    expect(jobs.map((job) => job.tenant.attachmentOffload)).toEqual([OFFLOAD, null]);
  });

  it("records the composition's files with the outcome, sent or not (the store keeps or removes them)", async () => {
    const sent = await attemptSend(depsWith(SENT).deps, message, account(false), tenant);
    expect(sent.outcome).toMatchObject({ kind: 'sent', files: FILES });
    const refused: HandoffResult = {
      built: true,
      reply: {
        ok: false,
        stage: 'data',
        replyCode: 451,
        enhancedStatus: '4.3.0',
        text: '451 later',
        errorCode: null,
        refused: [],
      },
      files: FILES,
    };
    const deferred = await attemptSend(depsWith(refused).deps, message, account(false), tenant);
    expect(deferred.outcome).toMatchObject({ kind: 'deferred', files: FILES });
  });
});
