import { describe, expect, it } from 'vitest';
import { createFileDownloads, type FileRecord, type OpenedFile } from './file-downloads.js';
import type { FileLinks } from './attachment-offload.js';

const NOW = 1_800_000_000_000;
const LIVE: FileRecord = { fileId: 'f1', object: 'obj', key: new Uint8Array([1]), expiresAt: NOW + 1000 };
const OPENED: OpenedFile = {
  filename: 'a.pdf',
  contentType: 'application/pdf',
  sha256: 'x',
  content: Buffer.from('pdf'),
};

/** Tokens `ok:<id>` open to the id; anything else does not (the real MAC is security/file-links.ts's). */
const links: FileLinks = {
  fileId: () => 'f1',
  token: (id) => `ok:${id}`,
  open: (token) => (token.startsWith('ok:') ? token.slice(3) : null),
};

function downloadsWith(record: FileRecord | null) {
  const asked: string[] = [];
  const counted: string[] = [];
  const downloads = createFileDownloads({
    links,
    files: {
      find: (id) => (asked.push(id), record),
      downloaded: (file) => void counted.push(file.fileId),
    },
    open: async () => OPENED,
    clock: { now: () => NOW },
  });
  return { downloads, asked, counted };
}

describe('file downloads', () => {
  it('looks nothing up for a token that does not open: the answer and its work are those of any unknown file', async () => {
    const { downloads, asked } = downloadsWith(LIVE);
    expect(await downloads.download('forged', true)).toEqual({ kind: 'unknown' });
    expect(asked).toEqual([]);
    const { downloads: none } = downloadsWith(null);
    expect(await none.download('ok:f9', true)).toEqual({ kind: 'unknown' });
  });

  it('serves a live file and counts it only when asked to', async () => {
    const { downloads, counted } = downloadsWith(LIVE);
    expect(await downloads.download('ok:f1', false)).toEqual({ kind: 'file', file: OPENED });
    expect(counted).toEqual([]);
    await downloads.download('ok:f1', true);
    expect(counted).toEqual(['f1']);
  });

  it('answers gone for a file whose link expired or whose key went with an erasure, and counts neither', async () => {
    for (const record of [
      { ...LIVE, expiresAt: NOW },
      { ...LIVE, object: null, key: null },
    ]) {
      const { downloads, counted } = downloadsWith(record);
      expect(await downloads.download('ok:f1', true)).toEqual({ kind: 'gone' });
      expect(counted).toEqual([]);
    }
  });
});
