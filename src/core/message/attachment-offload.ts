/**
 * Attachment offload (issue 46): a large attachment is taken out of the relayed message and
 * replaced by a short text and HTML part naming each file, its size and a download link, so
 * that a 20 MB file is not copied into every recipient's mailbox. The file stays in the body
 * store, sealed under a key of its own, until its link expires (or the message is erased). Pure:
 * the links' tokens (security/file-links.ts), the store and MIME are adapters.
 */

import { escapeHtml } from '../html-text.js';

/** A tenant's setting; null on the tenant: its attachments are always relayed whole. */
export interface AttachmentOffload {
  /** The daemon's public URL as recipients reach it: a link is `{baseUrl}/files/{token}`. */
  baseUrl: string;
  /** Attachments larger than this are offloaded; null: only those of messages that ask (MessageOffload). */
  overBytes: number | null;
  /** How long a link works once the message is sent; null: the daemon's `files.retention_seconds`. */
  linkLifetimeSeconds: number | null;
}

/** A message's own choice, from its submission; an absent field is the tenant's. */
export interface MessageOffload {
  overBytes?: number;
  linkLifetimeSeconds?: number;
  /** Relays every attachment whole, whatever the tenant's setting. */
  relayWhole?: boolean;
}

/** What a message's composition offloads: attachments above `overBytes`, with links valid for `lifetimeMs`. */
export interface OffloadPlan {
  baseUrl: string;
  overBytes: number;
  lifetimeMs: number;
}

/** A PEC account never offloads (a PEC message must carry its attachments): its jobs carry no tenant setting (delivery/send-attempt.ts). */
export interface OffloadContext {
  /** The daemon's `files.retention_seconds`: the longest a link lives, and its default. */
  maxLifetimeSeconds: number;
}

/** The plan for one message, or null when its attachments go whole. */
export function offloadPlan(
  tenant: AttachmentOffload | null,
  message: MessageOffload | undefined,
  context: OffloadContext,
): OffloadPlan | null {
  if (tenant === null || message?.relayWhole === true) return null;
  const overBytes = message?.overBytes ?? tenant.overBytes;
  if (overBytes === null) return null;
  const lifetime = message?.linkLifetimeSeconds ?? tenant.linkLifetimeSeconds ?? context.maxLifetimeSeconds;
  return { baseUrl: tenant.baseUrl, overBytes, lifetimeMs: Math.min(lifetime, context.maxLifetimeSeconds) * 1000 };
}

/** Issues and checks the tokens of download links (security/file-links.ts). */
export interface FileLinks {
  /** The file's id (hex): the same for the same tenant, message and attachment; unguessable without the key. */
  fileId(tenantId: string, clientId: string, index: number): string;
  /** The token a link carries for the file. */
  token(fileId: string): string;
  /** The file id a token names; null for anything forged, altered or malformed. */
  open(token: string): string | null;
}

export const FILES_PATH = '/files/';

export const fileUrl = (baseUrl: string, token: string): string =>
  `${baseUrl.replace(/\/+$/, '')}${FILES_PATH}${token}`;

/** An attachment taken out of the message: its place, and where and under which key it lies. */
export interface OffloadedFile {
  /** The attachment's place in the submission (from 0). */
  index: number;
  fileId: string;
  /** The body store's object: a sealed part of what the download serves (its name and type) and one of the bytes. */
  object: string;
  /** Its data key, wrapped. */
  key: Uint8Array;
  sizeBytes: number;
}

/** The files of one composition, recorded with the message's `sent` outcome: their links live from then on. */
export interface OffloadedFiles {
  lifetimeMs: number;
  files: OffloadedFile[];
}

/** What the notice names of each file. */
export interface FileLink {
  filename: string;
  sizeBytes: number;
  url: string;
}

const UNITS = ['bytes', 'KB', 'MB', 'GB'] as const;

/** A size as people read it: 5.2 MB, 812 KB (decimal units, as mail clients show them). */
export function readableSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${UNITS[unit]}`;
}

/** A day as the notice says it: 2026-12-30 (UTC). */
const dayOf = (at: number): string => new Date(at).toISOString().slice(0, 10);

/** The part that replaces the files: the same words as text and as HTML. */
export function offloadNotice(links: readonly FileLink[], until: number): { text: string; html: string } {
  const heading =
    links.length === 1
      ? 'A file of this message is available to download'
      : 'Files of this message are available to download';
  const availability = `until ${dayOf(until)}`;
  const text = [
    `${heading} ${availability}:`,
    '',
    ...links.map((link) => `- ${link.filename} (${readableSize(link.sizeBytes)}): ${link.url}`),
    '',
  ].join('\r\n');
  const items = links
    .map(
      (link) =>
        `<li><a href="${escapeHtml(link.url)}">${escapeHtml(link.filename)}</a> (${readableSize(link.sizeBytes)})</li>`,
    )
    .join('');
  const html = `<!doctype html><html><body><p>${escapeHtml(heading)} ${availability}:</p><ul>${items}</ul></body></html>`;
  return { text, html };
}
