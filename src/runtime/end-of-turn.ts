/**
 * What leaves at the end of the turn: entries added in one turn of the event loop go out as one
 * batch, sent from a setImmediate after the first. Every message between threads or processes
 * wakes the other side (a system call, a structured clone), so one wake carries what a turn made:
 * a worker pool's requests, a worker's replies, the daemon's answers to a session process.
 */
export function endOfTurn<T>(send: (batch: T[]) => void): (entry: T) => void {
  let batch: T[] = [];
  const flush = (): void => {
    const leaving = batch;
    batch = [];
    send(leaving);
  };
  return (entry) => {
    batch.push(entry);
    if (batch.length === 1) setImmediate(flush);
  };
}
