/**
 * CPU time of every process under one root (the bench and what it started: control plane,
 * operator, gateway, kubelet stand-in, engines), grouped by what each is, from /proc (Linux). A
 * wake's engine boots on the same two cores as the platform's processes; what they burn meanwhile
 * is what a wake's boot loses against the engine started alone.
 */
import fs from 'node:fs';
import { cpuSeconds } from './process-usage.js';

interface ProcEntry {
  pid: number;
  ppid: number;
  label: string;
}

/** What a process is: its executable's name, or for Node.js the script it runs. */
function labelOf(pid: number): string {
  const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  if (comm !== 'node' && !comm.startsWith('MainThread')) return comm;
  // tsx adds its own loader files (in node_modules) before the script.
  const script = argv.slice(1).find((arg) => /\.(c|m)?[jt]s$/.test(arg) && !arg.includes('node_modules'));
  return script ? `node ${script.split('/').slice(-2).join('/')}` : 'node';
}

function processes(): ProcEntry[] {
  const entries: ProcEntry[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      entries.push({ pid: Number(name), ppid, label: labelOf(Number(name)) });
    } catch {
      // it ended meanwhile
    }
  }
  return entries;
}

/** Every process under `rootPid` (itself included), parents before their children. */
function treeOf(rootPid: number): ProcEntry[] {
  const all = processes();
  const children = new Map<number, ProcEntry[]>();
  for (const entry of all) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  const tree: ProcEntry[] = [];
  const visit = (entry: ProcEntry): void => {
    tree.push(entry);
    for (const child of children.get(entry.pid) ?? []) visit(child);
  };
  const root = all.find((entry) => entry.pid === rootPid);
  if (root) visit(root);
  return tree;
}

/** The pids of every process under `rootPid` (itself included), at the time of the call. */
export const processTree = (rootPid: number): number[] => treeOf(rootPid).map((entry) => entry.pid);

/** CPU seconds used so far by each kind of process under `rootPid` (itself included). */
export function cpuByProcess(rootPid = process.pid): Map<string, number> {
  const totals = new Map<string, number>();
  for (const entry of treeOf(rootPid)) {
    try {
      totals.set(entry.label, (totals.get(entry.label) ?? 0) + cpuSeconds(entry.pid));
    } catch {
      // it ended meanwhile
    }
  }
  return totals;
}

/** What each kind of process used between two readings, in ms; processes that ended are lost. */
export function cpuBetween(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>,
): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [label, seconds] of after)
    delta.set(label, Math.max(0, (seconds - (before.get(label) ?? 0)) * 1000));
  return delta;
}
