import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeBeatCodec, nodeIdentityCodec, requestFailureCodec } from './link-wire-schemas.js';
import { requestRoute } from './fleet-responder.js';
import { IDENTITY_FILE, loadNodeIdentity } from './node-identity.js';
import { jsonCodec } from '../../nats/index.js';
import { z } from 'zod';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
const text = (data: Uint8Array): string => new TextDecoder().decode(data);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('membership', () => {
  it('reads heartbeats as written', () => {
    const beat = { node_id: 'n1', instance: 'i', state: 'active', started_at: 1, version: '0.1.0' };
    expect(nodeBeatCodec.decode(bytes(beat))).toEqual(beat);
  });

  it('writes a heartbeat as the JSON.stringify the registry wrote before', () => {
    const beat = { node_id: 'n1', instance: 'i', state: 'draining' as const, started_at: 7, version: '0.1.0' };
    expect(text(nodeBeatCodec.encode(beat))).toBe(JSON.stringify(beat));
    expect(nodeBeatCodec.read(bytes({ node_id: 'n1' })).ok).toBe(false);
  });
});

describe('the data directory identity', () => {
  it('is written as before (JSON and a newline) and read back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'identity-'));
    dirs.push(dir);
    const made = loadNodeIdentity(dir, 'n1');
    expect(readFileSync(join(dir, IDENTITY_FILE), 'utf8')).toBe(`${JSON.stringify(made)}\n`);
    expect(loadNodeIdentity(dir, 'n1')).toEqual(made);
    expect(nodeIdentityCodec.decode(bytes(made))).toEqual(made);
  });

  it('refuses a file that is not an identity, rather than reading it as another node', () => {
    const dir = mkdtempSync(join(tmpdir(), 'identity-'));
    dirs.push(dir);
    writeFileSync(join(dir, IDENTITY_FILE), '{"instance":"x"}\n');
    expect(() => loadNodeIdentity(dir, 'n1')).toThrow(expect.objectContaining({ code: 'WIRE_SHAPE' }));
  });
});

describe('a fleet request route', () => {
  const route = requestRoute(
    jsonCodec(z.object({ n: z.number() }), 'test request'),
    jsonCodec(z.object({ twice: z.number() }), 'test answer'),
    (request) => ({ twice: request.n * 2 }),
  );

  it('reads the request and writes the answer through their codecs', async () => {
    expect(text(await route.answer(bytes({ n: 21 })))).toBe('{"twice":42}');
  });

  it('refuses a request that is not one with its WireError, answered as the failure it always was', async () => {
    const error = await route.answer(bytes({ n: 'x' })).then(
      () => null,
      (failure: unknown) => failure,
    );
    expect(error).toMatchObject({ code: 'WIRE_SHAPE' });
    const failure = { ok: false as const, code: 'WIRE_SHAPE', message: 'not a test request' };
    expect(text(requestFailureCodec.encode(failure))).toBe(JSON.stringify(failure));
  });
});
