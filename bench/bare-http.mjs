// The load generator's floor: an HTTP server in its own process that reads each body, parses it
// and answers at once, as /add-messages would with nothing to store. The latency the generator
// measures against it is what the machine and the generator add to any server's.
import { createServer } from 'node:http';

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const { messages } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ ok: true, queued: messages.length, rejected: [] }));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.stdin.resume().on('end', () => process.exit(0));
