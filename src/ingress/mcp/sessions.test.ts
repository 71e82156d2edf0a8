import { describe, expect, it } from 'vitest';
import { countedStream, McpSessions, type McpSession } from './sessions.js';

/** A session whose server records its closing and whose watch counts its beats. */
function sessionOf(
  id: string,
  caller: string,
  lastSeenAt: number,
  closed: string[],
  ticks: string[],
  unauthorized = false,
): McpSession {
  return {
    id,
    caller,
    lastSeenAt,
    streams: 0,
    transport: {} as McpSession['transport'],
    served: {
      server: { close: async () => void closed.push(id) } as unknown as McpSession['served']['server'],
      watch: {
        size: 1,
        unauthorized,
        tick: async () => {
          ticks.push(id);
          return 1;
        },
      } as unknown as McpSession['served']['watch'],
    },
  };
}

describe('McpSessions', () => {
  it('finds a session only for the credential that opened it', async () => {
    let now = 0;
    const sessions = new McpSessions({ idleMs: 1000, max: 10, now: () => now });
    await sessions.add(sessionOf('s1', 'alice', 0, [], []));
    now = 500;
    expect(sessions.find('s1', 'bob')).toBeNull();
    expect(sessions.find('s2', 'alice')).toBeNull();
    expect(sessions.find('s1', 'alice')?.lastSeenAt).toBe(500);
  });

  it('closes the idle ones with no stream open, and runs the watch of the others', async () => {
    let now = 0;
    const closed: string[] = [];
    const ticks: string[] = [];
    const sessions = new McpSessions({ idleMs: 1000, max: 10, now: () => now });
    const idle = sessionOf('idle', 'a', 0, closed, ticks);
    const streaming = { ...sessionOf('streaming', 'b', 0, closed, ticks), streams: 1 };
    const busy = sessionOf('busy', 'c', 0, closed, ticks);
    for (const session of [idle, streaming, busy]) await sessions.add(session);
    now = 1000;
    sessions.find('busy', 'c');
    expect(await sessions.tick()).toBe(2);
    expect(closed).toEqual(['idle']);
    expect(ticks.sort()).toEqual(['busy', 'streaming']);
    expect(sessions.size).toBe(2);
  });

  it('closes a session whose credential its watch found refused', async () => {
    const closed: string[] = [];
    const sessions = new McpSessions({ idleMs: 60_000, max: 10, now: () => 0 });
    await sessions.add(sessionOf('revoked', 'a', 0, closed, [], true));
    await sessions.add(sessionOf('valid', 'b', 0, closed, []));
    await sessions.tick();
    expect(closed).toEqual(['revoked']);
    expect(sessions.size).toBe(1);
  });

  it('past its size, closes the least recently used', async () => {
    let now = 0;
    const closed: string[] = [];
    const sessions = new McpSessions({ idleMs: 60_000, max: 2, now: () => now });
    await sessions.add(sessionOf('first', 'a', 0, closed, []));
    await sessions.add(sessionOf('second', 'a', 0, closed, []));
    now = 10;
    sessions.find('first', 'a');
    await sessions.add(sessionOf('third', 'a', now, closed, []));
    expect(closed).toEqual(['second']);
    expect(sessions.find('first', 'a')).not.toBeNull();
  });

  it('counts a stream open until its client goes', async () => {
    const session = sessionOf('s', 'a', 0, [], []);
    let push: ReadableStreamDefaultController<Uint8Array> | undefined;
    const source = new ReadableStream<Uint8Array>({ start: (controller) => void (push = controller) });
    const response = countedStream(session, new Response(source, { headers: { 'content-type': 'text/event-stream' } }));
    expect(session.streams).toBe(1);
    push?.enqueue(new TextEncoder().encode(': keepalive\n\n'));
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(': keepalive\n\n');
    await reader.cancel();
    expect(session.streams).toBe(0);
    // A JSON answer is no stream.
    countedStream(session, Response.json({}));
    expect(session.streams).toBe(0);
  });
});
