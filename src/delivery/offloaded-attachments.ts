/**
 * A composition's attachments after offload (core/message/attachment-offload.ts): those above the
 * plan's size written to the body store and replaced by one notice part, a text and an HTML
 * alternative naming each file, its size and its link, where the first of them stood.
 */
import type Mail from 'nodemailer/lib/mailer/index.js';
import { randomUUID } from 'node:crypto';
import { detectMimeType } from 'nodemailer/lib/mime-funcs/mime-types.js';
import { fileUrl, offloadNotice, offloadPlan, type FileLink, type OffloadedFiles } from '../core/message/index.js';
import type { BuildRequest } from '../core/delivery/index.js';
import type { FileOffloader } from './file-offloader.js';

type Fetched = Mail.Attachment & { content: Buffer; filename: string };

/** base64 in lines of 76 (RFC 2045 §6.8). */
const base64Lines = (text: string): string =>
  (
    Buffer.from(text, 'utf8')
      .toString('base64')
      .match(/.{1,76}/g) ?? []
  ).join('\r\n');

/** The notice as one raw MIME node: nodemailer puts it as it is among the attachments. */
function noticePart(links: readonly FileLink[], until: number): Mail.Attachment {
  const { text, html } = offloadNotice(links, until);
  const boundary = `--offload-${randomUUID().replaceAll('-', '')}`;
  const alternative = (type: string, body: string): string =>
    `--${boundary}\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(body)}\r\n`;
  return {
    raw:
      `Content-Type: multipart/alternative; boundary="${boundary}"\r\nContent-Disposition: inline\r\n\r\n` +
      `${alternative('text/plain', text)}${alternative('text/html', html)}--${boundary}--\r\n`,
  };
}

export async function offloaded(
  fetched: Fetched[],
  request: BuildRequest,
  deps: { files: FileOffloader | null; now: () => number },
): Promise<{ attachments: Mail.Attachment[]; files: OffloadedFiles | null }> {
  const { tenant, payload } = request;
  const plan =
    deps.files === null
      ? null
      : offloadPlan(tenant.attachmentOffload, payload.offload, {
          maxLifetimeSeconds: deps.files.maxLifetimeSeconds,
        });
  if (plan === null || deps.files === null || !fetched.some((file) => file.content.length > plan.overBytes))
    return { attachments: fetched, files: null };
  const attachments: Mail.Attachment[] = [];
  const links: FileLink[] = [];
  const files: OffloadedFiles = { lifetimeMs: plan.lifetimeMs, files: [] };
  let noticeAt = -1;
  for (const [index, attachment] of fetched.entries()) {
    if (attachment.content.length <= plan.overBytes) {
      attachments.push(attachment);
      continue;
    }
    if (noticeAt === -1) noticeAt = attachments.length;
    const { file, token } = await deps.files.offload(
      { tenantId: tenant.id, clientId: request.clientId, index },
      {
        filename: attachment.filename,
        // The type nodemailer would have written: the client's, else the one its name tells.
        contentType:
          typeof attachment.contentType === 'string' ? attachment.contentType : detectMimeType(attachment.filename),
        content: attachment.content,
      },
    );
    files.files.push(file);
    links.push({ filename: attachment.filename, sizeBytes: file.sizeBytes, url: fileUrl(plan.baseUrl, token) });
  }
  attachments.splice(noticeAt, 0, noticePart(links, deps.now() + plan.lifetimeMs));
  return { attachments, files };
}
