/**
 * Samples a process's resident memory and open file descriptors from /proc
 * while it lives, and judges whether they grew: the later part of a lifetime
 * against its earlier part once warmed up, so start-up allocation is not a leak.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Sample {
  at: number;
  rssMb: number;
  fds: number;
}

export interface Sampler {
  samples: Sample[];
  stop(): void;
}

function sampleOf(pid: number): Sample | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1] ?? Number.NaN);
    return { at: Date.now(), rssMb: rssKb / 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return null; // the process is gone (killed between two samples)
  }
}

export function sampleProcess(pid: number, intervalMs: number): Sampler {
  const samples: Sample[] = [];
  const take = () => {
    const sample = sampleOf(pid);
    if (sample !== null && Number.isFinite(sample.rssMb)) samples.push(sample);
  };
  take();
  const timer = setInterval(take, intervalMs);
  return { samples, stop: () => clearInterval(timer) };
}

export interface GrowthBound {
  /** RSS may exceed the earlier peak by this much... */
  rssMb: number;
  /** ...or by this fraction of it, whichever is larger. */
  rssFraction: number;
  fds: number;
}

export interface Growth {
  earlier: { rssMb: number; fds: number };
  later: { rssMb: number; fds: number };
  problems: string[];
}

const peak = (samples: Sample[]) => ({
  rssMb: Math.max(...samples.map((s) => s.rssMb)),
  fds: Math.max(...samples.map((s) => s.fds)),
});

/**
 * Drops the first quarter (warm-up), then compares the peak of the last quarter
 * with the peak of the quarter after the warm-up. Null with fewer than 8 samples.
 */
export function judgeGrowth(samples: Sample[], bound: GrowthBound): Growth | null {
  if (samples.length < 8) return null;
  const quarter = Math.floor(samples.length / 4);
  const earlier = peak(samples.slice(quarter, 2 * quarter));
  const later = peak(samples.slice(samples.length - quarter));
  const problems: string[] = [];
  const rssLimit = earlier.rssMb + Math.max(bound.rssMb, earlier.rssMb * bound.rssFraction);
  if (later.rssMb > rssLimit)
    problems.push(
      `RSS grew from ${earlier.rssMb.toFixed(1)} MB to ${later.rssMb.toFixed(1)} MB (bound ${rssLimit.toFixed(1)} MB)`,
    );
  if (later.fds > earlier.fds + bound.fds)
    problems.push(`open file descriptors grew from ${earlier.fds} to ${later.fds} (bound +${bound.fds})`);
  return { earlier, later, problems };
}
