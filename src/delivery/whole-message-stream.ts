/**
 * Every message we relay is whole bytes (`raw`: an SMTP submission as received, or what the
 * compose thread built, DKIM signature included). nodemailer would stream them through its
 * MimeNode, which joins its stages with stream.pipeline: on Node 20 each pipeline makes an
 * AbortController and, at the message's end, aborts it, building a DOMException with its stack.
 * That was a tenth of the relay thread's CPU a message (bench/results/HISTORY.md). A transport's
 * `stream` plugin hands nodemailer the same bytes as one plain Readable instead, and the compose
 * thread builds a message's bytes by streaming its MimeNode into one PassThrough.
 */
import { PassThrough, Readable } from 'node:stream';
import type { Transporter } from 'nodemailer';
import type MimeNode from 'nodemailer/lib/mime-node/index.js';

/** The message as MimeNode's last stage ends it: with a line break (LF after a lone CR, CRLF otherwise). */
export function endingInLineBreak(raw: Buffer): Buffer {
  const last = raw.length === 0 ? -1 : raw[raw.length - 1];
  if (last === 0x0a) return raw;
  return Buffer.concat([raw, last === 0x0d ? LF : CRLF]);
}

const LF = Buffer.from('\n');
const CRLF = Buffer.from('\r\n');

/** A fresh stream of `bytes` for each send (a message is read once per attempt). */
function bytesStream(bytes: Buffer): Readable {
  return new Readable({
    read() {
      this.push(bytes);
      this.push(null);
    },
  });
}

/**
 * Registers the plugin on `transport`. A message given as a Buffer in `raw` (all of ours) is read
 * from that Buffer directly; anything else, and any message a later plugin or DKIM option would
 * transform (we set none), keeps nodemailer's own stream.
 */
export function streamWholeMessages<T>(transport: Transporter<T>): Transporter<T> {
  return transport.use('stream', (mail, done) => {
    const raw = mail.data.raw;
    if (Buffer.isBuffer(raw) && mail.data.dkim === undefined) {
      const bytes = endingInLineBreak(raw);
      mail.message.createReadStream = () => bytesStream(bytes);
    }
    done();
  });
}

/**
 * What `node.build()` answers (the whole message, ended with a line break), without the pipeline
 * of its `createReadStream()`: the root node streamed into one PassThrough. We give MimeNode no
 * transforms and no DKIM option, the stages that pipeline would join.
 */
export function builtBytes(node: MimeNode): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(chunk));
    out.once('end', () => resolve(endingInLineBreak(Buffer.concat(chunks))));
    out.once('error', reject);
    node.stream(out, {}, (error) => {
      if (error) out.destroy(error);
      else out.end();
    });
  });
}
