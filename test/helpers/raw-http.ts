/**
 * HTTP/1.1 over one raw keep-alive socket (node:net): requests written byte by
 * byte as the test says (a declared Content-Length or chunked, bodies of any
 * size streamed from one buffer), and the answers read back in order, so a
 * test can tell whether the connection still serves after a refusal.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: string;
}

/** A body of `prefix`, then `fillerBytes` bytes of `x`, then `suffix`: any size without holding it. */
export interface StreamedBody {
  prefix?: string;
  fillerBytes: number;
  suffix?: string;
}

export type Framing = 'declared' | 'chunked';

const CHUNK = 64 * 1024;
const FILLER = Buffer.alloc(CHUNK, 'x');

export const bodySize = (body: StreamedBody): number =>
  Buffer.byteLength(body.prefix ?? '') + body.fillerBytes + Buffer.byteLength(body.suffix ?? '');

export class RawHttpConnection {
  private buffered = Buffer.alloc(0);
  private waiting: (() => void) | null = null;
  private ended = false;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (data: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, data]);
      this.wake();
    });
    socket.on('end', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => {
      this.ended = true;
      this.wake();
    });
  }

  static open(port: number): Promise<RawHttpConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawHttpConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Writes one request: `head` is the request line and headers without framing or the blank line. */
  async send(head: string, body: StreamedBody | null, framing: Framing = 'declared'): Promise<void> {
    if (body === null) return this.write(`${head}\r\nContent-Length: 0\r\n\r\n`);
    const pieces = this.pieces(body);
    if (framing === 'declared') {
      await this.write(`${head}\r\nContent-Length: ${bodySize(body)}\r\n\r\n`);
      for (const piece of pieces) await this.write(piece);
      return;
    }
    await this.write(`${head}\r\nTransfer-Encoding: chunked\r\n\r\n`);
    for (const piece of pieces)
      if (piece.length > 0)
        await this.write(Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]));
    await this.write('0\r\n\r\n');
  }

  /** The next answer on the connection; rejects if the server closes it first. */
  async next(): Promise<RawResponse> {
    const headEnd = await this.until(() => this.buffered.indexOf('\r\n\r\n'));
    const [statusLine = '', ...lines] = this.buffered.subarray(0, headEnd).toString('latin1').split('\r\n');
    this.buffered = this.buffered.subarray(headEnd + 4);
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const status = Number(statusLine.split(' ')[1]);
    if (headers['transfer-encoding'] === 'chunked')
      return { status, headers, body: (await this.chunkedBody()).toString('utf8') };
    const length = Number(headers['content-length'] ?? 0);
    await this.until(() => (this.buffered.length >= length ? length : -1));
    const body = this.buffered.subarray(0, length).toString('utf8');
    this.buffered = this.buffered.subarray(length);
    return { status, headers, body };
  }

  close(): void {
    this.socket.destroy();
  }

  private *pieces(body: StreamedBody): Generator<Buffer> {
    yield Buffer.from(body.prefix ?? '');
    for (let left = body.fillerBytes; left > 0; left -= CHUNK) yield left >= CHUNK ? FILLER : FILLER.subarray(0, left);
    yield Buffer.from(body.suffix ?? '');
  }

  private async chunkedBody(): Promise<Buffer> {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = await this.until(() => this.buffered.indexOf('\r\n'));
      const size = parseInt(this.buffered.subarray(0, lineEnd).toString('latin1'), 16);
      await this.until(() => (this.buffered.length >= lineEnd + 2 + size + 2 ? 0 : -1));
      parts.push(this.buffered.subarray(lineEnd + 2, lineEnd + 2 + size));
      this.buffered = this.buffered.subarray(lineEnd + 2 + size + 2);
      if (size === 0) return Buffer.concat(parts);
    }
  }

  /** Resolves with `probe()` once it is not negative, as data arrives. */
  private async until(probe: () => number): Promise<number> {
    for (;;) {
      const found = probe();
      if (found >= 0) return found;
      if (this.ended)
        throw new Error(
          `the server closed the connection before answering (${this.buffered.length} bytes left unread: ${JSON.stringify(this.buffered.subarray(0, 80).toString('latin1'))})`,
        );
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }

  /**
   * One write, then a turn of the event loop: writes the kernel takes at once call back without
   * one, and a loop of them would leave an early answer unread until the server resets the
   * connection, which drops it.
   */
  private async write(data: string | Buffer): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      if (this.socket.destroyed) return reject(new Error('the connection is closed'));
      this.socket.write(data, (error) => (error ? reject(error) : resolve()));
    });
    await new Promise((resolve) => setImmediate(resolve));
  }
}
