/** CPU time of a process's threads, from /proc (Linux): what the CPU benches count. */
import { readdirSync, readFileSync } from 'node:fs';

/** CPU ms so far of each thread of `pid`, by thread id. */
export function threadCpu(pid: number): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    // utime and stime: fields 14 and 15, counted after the parenthesised command name.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * 10);
  }
  return ticks;
}

/** A process's CPU per unit of work between two readings: its main thread, busiest other thread, the rest. */
export interface ThreadShare {
  readonly main: number;
  readonly busiestOther: number;
  readonly rest: number;
  readonly total: number;
}

export function shareOf(
  pid: number,
  before: Map<number, number>,
  after: Map<number, number>,
  units: number,
): ThreadShare {
  const per = [...after].map(([tid, ms]) => ({ tid, ms: (ms - (before.get(tid) ?? 0)) / units }));
  const main = per.find((t) => t.tid === pid)?.ms ?? 0;
  const others = per.filter((t) => t.tid !== pid).map((t) => t.ms);
  const busiestOther = Math.max(0, ...others);
  const rest = others.reduce((sum, ms) => sum + ms, 0) - busiestOther;
  return { main, busiestOther, rest, total: main + busiestOther + rest };
}
