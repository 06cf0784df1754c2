// Memory of a process tree, read from /proc (Linux only). Every tenant has an engine host process
// of its own and the warm ones expose no pid, so the honest figure is the bench process plus all
// of its descendants (engine hosts, and on Linux the jail launcher and init above each one),
// found by following ppid links through /proc/*/stat.
//
// RSS counts a page once per process that maps it (Node's binary, shared libraries, the Python
// snapshot file), so a sum of RSS overstates what the machine gives up; PSS splits shared pages
// between the processes that share them. Both are reported; RSS is the headline, as the
// conservative one.

import { readdirSync, readFileSync } from "node:fs";

export const supported = process.platform === "linux";

function read(file) {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null; // gone, or not ours to read
  }
}

/** Parent pid of every process on the machine. */
function parents() {
  const map = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    if (!stat) continue;
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so parse after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    map.set(Number(entry), Number(fields[1]));
  }
  return map;
}

/** Every live descendant of `root` (not `root` itself). */
export function descendants(root = process.pid) {
  const children = new Map();
  for (const [pid, ppid] of parents()) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const out = [];
  const queue = [root];
  while (queue.length) {
    for (const child of children.get(queue.shift()) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

function kib(text, field) {
  const m = text?.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
  return m ? Number(m[1]) * 1024 : 0;
}

/** Resident bytes of one process (VmRSS), 0 if it is gone. */
export const rss = (pid) => kib(read(`/proc/${pid}/status`), "VmRSS");

/** Proportional resident bytes of one process (shared pages split between sharers), 0 if unknown. */
export const pss = (pid) => kib(read(`/proc/${pid}/smaps_rollup`), "Pss");

/** The process's own name as the kernel has it (`node`, `polybox-jail`, …). */
export const comm = (pid) => read(`/proc/${pid}/comm`)?.trim() ?? "?";

/**
 * Memory of `root` and all its descendants: `{ rssBytes, pssBytes, selfRssBytes, processes,
 * nodeProcesses }`. `nodeProcesses` counts the engine hosts themselves (the launcher and jail
 * init above each are small C processes).
 */
export function treeMemory(root = process.pid) {
  if (!supported) {
    const self = process.memoryUsage().rss;
    return { rssBytes: self, pssBytes: 0, selfRssBytes: self, processes: 1, nodeProcesses: 0 };
  }
  const kids = descendants(root);
  let rssBytes = rss(root);
  let pssBytes = pss(root);
  let nodeProcesses = 0;
  for (const pid of kids) {
    rssBytes += rss(pid);
    pssBytes += pss(pid);
    if (comm(pid).startsWith("node")) nodeProcesses++;
  }
  return { rssBytes, pssBytes, selfRssBytes: rss(root), processes: 1 + kids.length, nodeProcesses };
}
