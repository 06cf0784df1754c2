// The launcher's attack suite (issue 5): every attack runs a real command (the host's python3,
// bash, coreutils) inside the real native/build/polybox-jail, as root and as an unprivileged
// user, and must fail in the specific way the jail promises: an errno, a signal, a limit on the
// status line. Where an attack leaves processes behind, the host's process table is checked
// afterwards for the marker it carried.

import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  chownSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  BASH,
  hostProcesses,
  isRoot,
  type JailRun,
  jail,
  keyValues,
  killTagged,
  LAUNCHER,
  MODES,
  type Mode,
  marker,
  NOBODY,
  nobodyDir,
  PYTHON,
  py,
  type Status,
  sh,
  sleep,
  startJail,
  usable,
  waitFor,
} from "./helpers.js";

const X86_64 = process.arch === "x64";

/** Python prelude: `attempt(f)` is "OK" or the errno's name. */
const ATTEMPT = `
import errno, os, sys
def attempt(f):
    try:
        f()
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
`;

/** Python prelude: `call(nr, *args)` makes a raw system call; returns (result, errno name). */
const SYSCALL = `
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    args = [ctypes.c_long(a) for a in args] + [ctypes.c_long(0)] * (6 - len(args))
    r = libc.syscall(ctypes.c_long(nr), *args)
    return r, errno.errorcode.get(ctypes.get_errno(), "0")
`;

/**
 * The calls policy.txt kills, grouped by family, with their x86_64 numbers and arguments. Each
 * runs in a forked child of one jailed Python; each child must die of SIGSYS.
 */
const CLONE_NEWNS = 0x20000;
const CLONE_NEWUSER = 0x10000000;
const CLONE_NEWPID = 0x20000000;
const CLONE_NEWNET = 0x40000000;
const SIGCHLD = 17;
const KILLED_FAMILIES: [string, [string, number, ...number[]][]][] = [
  [
    "mount",
    [
      ["mount", 165],
      ["umount2", 166],
      ["pivot_root", 155],
      ["chroot", 161],
      ["open_tree", 428],
      ["move_mount", 429],
      ["fsopen", 430],
      ["fsconfig", 431],
      ["fsmount", 432],
      ["fspick", 433],
      ["mount_setattr", 442],
    ],
  ],
  [
    "ptrace and process_vm",
    [
      ["ptrace", 101, 16, 1],
      ["process_vm_readv", 310, 1],
      ["process_vm_writev", 311, 1],
      ["kcmp", 312, 1, 1],
    ],
  ],
  ["bpf", [["bpf", 321]]],
  ["perf_event_open", [["perf_event_open", 298]]],
  ["userfaultfd", [["userfaultfd", 323]]],
  [
    "keyctl and add_key",
    [
      ["keyctl", 250],
      ["add_key", 248],
      ["request_key", 249],
    ],
  ],
  [
    "kexec",
    [
      ["kexec_load", 246],
      ["kexec_file_load", 320],
    ],
  ],
  [
    "kernel modules",
    [
      ["init_module", 175],
      ["finit_module", 313],
      ["delete_module", 176],
    ],
  ],
  [
    "namespaces",
    [
      ["unshare(CLONE_NEWUSER)", 272, CLONE_NEWUSER],
      ["unshare(CLONE_NEWNS)", 272, CLONE_NEWNS],
      ["setns", 308, 0, 0],
      ["clone(CLONE_NEWUSER)", 56, CLONE_NEWUSER | SIGCHLD],
      ["clone(CLONE_NEWNS)", 56, CLONE_NEWNS | SIGCHLD],
      ["clone(CLONE_NEWPID)", 56, CLONE_NEWPID | SIGCHLD],
      ["clone(CLONE_NEWNET)", 56, CLONE_NEWNET | SIGCHLD],
    ],
  ],
  [
    "system administration",
    [
      ["reboot", 169],
      ["swapon", 167],
      ["swapoff", 168],
      ["acct", 163],
      ["iopl", 172, 3],
      ["ioperm", 173, 0, 1, 1],
      ["quotactl", 179],
      ["syslog", 103, 3],
      ["settimeofday", 164],
      ["clock_settime", 227],
      ["clock_adjtime", 305],
      ["adjtimex", 159],
      ["sethostname", 170],
      ["setdomainname", 171],
      ["vhangup", 153],
      ["personality", 135, 0xffffffff],
      ["uselib", 134],
      ["nfsservctl", 180],
      ["lookup_dcookie", 212],
    ],
  ],
  [
    "file handles and fanotify",
    [
      ["name_to_handle_at", 303],
      ["open_by_handle_at", 304],
      ["fanotify_init", 300],
    ],
  ],
  // x32 calls share x86_64's audit architecture: the filter kills them all (x32 getpid here).
  ["x32 system calls", [["x32 getpid", 0x40000000 | 39]]],
];

/** Python that forks once per call, makes it in the child, and prints how each child ended. */
function killedCallsScript(calls: [string, number, ...number[]][]): string {
  return `${SYSCALL}
import json, os, signal
outcome = {}
for name, nr, *args in json.loads(${JSON.stringify(JSON.stringify(calls))}):
    pid = os.fork()
    if pid == 0:
        r, err = call(nr, *args)
        os._exit(100 if r >= 0 else 101)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        outcome[name] = signal.Signals(os.WTERMSIG(status)).name
    else:
        outcome[name] = "survived, exit %d" % os.WEXITSTATUS(status)
print(json.dumps(outcome))
`;
}

let base = "";
const cleanups: (() => void)[] = [];
const tags: string[] = [];

function tag(name: string): string {
  const t = marker(name);
  tags.push(t);
  return t;
}

beforeAll(() => {
  base = mkdtempSync(path.join(os.tmpdir(), "pbx-jail-test-"));
  chmodSync(base, 0o755);
});

afterAll(() => {
  for (const t of tags) killTagged(t);
  for (const c of cleanups) c();
  if (base) rmSync(base, { recursive: true, force: true });
});

function expectStatus(run: JailRun, want: Partial<Status>) {
  expect(run.status, `no status line; stderr: ${run.stderr}`).not.toBeNull();
  expect(run.status).toMatchObject(want);
}

describe.runIf(usable)("polybox-jail", () => {
  describe.each(MODES.filter((m) => m.prefix.length === 0 || isRoot))(
    "attacks $name",
    (mode: Mode) => {
      const slug = mode.prefix.length ? "nobody" : "root";
      let other = "";
      let secret = "";
      beforeAll(() => {
        // Another sandbox's workspace, same owner: only the jail's view keeps it out of reach.
        other = nobodyDir(base, `other-${slug}`);
        secret = `CANARY-${randomBytes(12).toString("hex")}`;
        writeFileSync(path.join(other, "canary.txt"), `${secret}\n`);
        if (isRoot) chownSync(path.join(other, "canary.txt"), NOBODY, NOBODY);
      });

      // --- Resources -------------------------------------------------------------------------

      it("fork bomb: processes capped by --nproc, the jail ends at its timeout, nothing left", async () => {
        const t = tag("forkbomb");
        const nproc = 16;
        const live = startJail(
          mode,
          ["--nproc", String(nproc), "--timeout-ms", "1500"],
          [BASH, "-c", ":(){ :|:& };:; sleep 10", t],
        );
        let most = 0;
        let running = true;
        void live.done.then(() => {
          running = false;
        });
        while (running) {
          // Forked bash subshells keep the command line they were started with: the marker.
          most = Math.max(most, hostProcesses(t).length);
          await sleep(25);
        }
        const run = await live.done;
        expectStatus(run, { signal: "SIGKILL", limit: "timeout", error: null });
        expect(run.code).toBe(128 + 9);
        expect(run.status!.wallMs).toBeGreaterThanOrEqual(1500);
        expect(run.status!.wallMs).toBeLessThan(1500 + 5000);
        expect(run.stderr).toMatch(/fork: .*Resource temporarily unavailable/);
        // The bomb really went off, and never got past the cap (+ the launcher and init).
        expect(most).toBeGreaterThanOrEqual(nproc / 2);
        expect(most).toBeLessThanOrEqual(nproc + 2);
        expect(hostProcesses(t)).toEqual([]);
      });

      it("memory bomb in Python with --as-mb: MemoryError, it cannot grow past the limit", () => {
        const run = py(
          mode,
          `
try:
    big = bytearray(1 << 30)
    print("ALLOCATED 1 GiB")
except MemoryError:
    print("MemoryError at once")
held = []
try:
    while True:
        held.append(bytearray(8 << 20))
except MemoryError:
    print("MemoryError after", len(held) * 8, "MiB")
`,
          ["--as-mb", "200"],
        );
        expectStatus(run, { exitCode: 0, signal: null, limit: null });
        expect(run.stdout).toContain("MemoryError at once");
        expect(run.stdout).not.toContain("ALLOCATED");
        const mb = Number(/MemoryError after (\d+) MiB/.exec(run.stdout)?.[1]);
        expect(mb).toBeGreaterThan(0);
        expect(mb).toBeLessThan(200);
      });

      it("memory bomb in bash with --as-mb: bash cannot allocate and stops", () => {
        const run = sh(mode, `x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo "GOT \${#x}"`, [
          "--as-mb",
          "64",
        ]);
        expect(run.stderr).toMatch(/cannot allocate/);
        expect(run.stdout).not.toContain("GOT 200000000");
        expectStatus(run, { exitCode: 2, signal: null, limit: null });
      });

      let cpuRun: JailRun | undefined;
      const cpuSpin = () => {
        cpuRun ??= py(mode, "while True: pass\nprint('done')", [
          "--cpu-s",
          "1",
          "--timeout-ms",
          "8000",
        ]);
        return cpuRun;
      };

      it("CPU spin with --cpu-s: stopped after about its CPU seconds, long before the timeout", () => {
        const run = cpuSpin();
        expect(run.stdout).not.toContain("done");
        expect(run.status?.limit).not.toBe("timeout");
        expect(["SIGXCPU", "SIGKILL"]).toContain(run.status?.signal);
        expect(run.status!.wallMs).toBeGreaterThanOrEqual(900);
        // CPU seconds are what the limit counts; wall time on a loaded machine only bounds it.
        expect(run.status!.wallMs).toBeLessThan(8000);
      });

      it("CPU spin with --cpu-s: the status line says the CPU limit ended it (SIGXCPU, cpu)", () => {
        const run = cpuSpin();
        expectStatus(run, { exitCode: -1, signal: "SIGXCPU", limit: "cpu", error: null });
        expect(run.code).toBe(128 + 24);
      });

      it("CPU spin that ignores SIGXCPU still ends by the CPU limit, well before the timeout", () => {
        const run = jail(
          mode,
          ["--cpu-s", "1", "--timeout-ms", "90000"],
          [
            PYTHON,
            "-c",
            "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass",
          ],
          { guardMs: 100_000 },
        );
        // The CPU limit ended it, not the wall clock: what the mechanism guarantees is CPU time,
        // so on a loaded machine (a tenth of a core each) the wall time may be anything below
        // the timeout, which is set far above the two CPU-seconds the limits allow.
        expect(run.status?.limit).not.toBe("timeout");
        expect(run.status?.signal).toBe("SIGKILL");
        expect(run.status!.wallMs).toBeLessThan(90000);
      }, 120_000);

      it("CPU spin with --timeout-ms: SIGKILL at the wall-clock limit, limit timeout", () => {
        const run = py(mode, "while True: pass", ["--timeout-ms", "400"]);
        expectStatus(run, { exitCode: -1, signal: "SIGKILL", limit: "timeout", error: null });
        expect(run.code).toBe(128 + 9);
        expect(run.status!.wallMs).toBeGreaterThanOrEqual(400);
        // A timer, not a promise of promptness: a loaded machine may run it late.
        expect(run.status!.wallMs).toBeLessThan(400 + 5000);
      });

      it("disk fill of a --workspace-mb tmpfs: ENOSPC at its size", () => {
        const run = py(
          mode,
          `${ATTEMPT}
written = 0
try:
    with open("/workspace/fill", "wb") as f:
        while True:
            f.write(b"x" * 65536)
            f.flush()
            written += 65536
except OSError as e:
    print(errno.errorcode[e.errno], written)
`,
          ["--workspace-mb", "2"],
        );
        expectStatus(run, { exitCode: 0, signal: null });
        const [err, written] = run.stdout.trim().split(" ");
        expect(err).toBe("ENOSPC");
        expect(Number(written)).toBeLessThanOrEqual(2 * 1024 * 1024);
        expect(Number(written)).toBeGreaterThan(1024 * 1024);
      });

      it("disk fill of /tmp (--tmp-mb) and /dev/shm: ENOSPC", () => {
        const run = sh(
          mode,
          `dd if=/dev/zero of=/tmp/fill bs=64k 2>&1 | head -1; echo "tmp=$(stat -c %s /tmp/fill)"
         dd if=/dev/zero of=/dev/shm/fill bs=1M 2>&1 | head -1; echo "shm=$(stat -c %s /dev/shm/fill)"`,
          ["--tmp-mb", "2"],
        );
        expectStatus(run, { exitCode: 0, signal: null });
        expect(run.stdout).toMatch(/\/tmp\/fill'?: No space left on device/);
        expect(run.stdout).toMatch(/\/dev\/shm\/fill'?: No space left on device/);
        const kv = keyValues(run.stdout);
        expect(Number(kv.tmp)).toBeLessThanOrEqual(2 * 1024 * 1024);
        expect(Number(kv.shm)).toBeLessThanOrEqual(16 * 1024 * 1024);
      });

      it("--fsize-mb: a writer dies of SIGXFSZ (limit file_size), the host file stops at the limit", () => {
        const dir = nobodyDir(base, `fsize-${slug}`);
        const run = jail(
          mode,
          ["--workspace", dir, "--fsize-mb", "1"],
          ["/usr/bin/dd", "if=/dev/zero", "of=/workspace/big", "bs=1M", "count=4"],
        );
        expectStatus(run, { exitCode: -1, signal: "SIGXFSZ", limit: "file_size", error: null });
        expect(run.code).toBe(128 + 25);
        expect(statSync(path.join(dir, "big")).size).toBe(1024 * 1024);
      });

      it("--fsize-mb: Python (which ignores SIGXFSZ) gets EFBIG", () => {
        const run = py(
          mode,
          `${ATTEMPT}
f = open("/workspace/big", "wb", buffering=0)
print(attempt(lambda: f.write(b"x" * (3 << 20))), os.fstat(f.fileno()).st_size)
`,
          ["--workspace-mb", "8", "--fsize-mb", "1"],
        );
        expectStatus(run, { exitCode: 0, signal: null });
        // A short write of exactly the limit is fine; what must never happen is more than 1 MiB.
        const [, size] = run.stdout.trim().split(" ");
        expect(Number(size)).toBeLessThanOrEqual(1024 * 1024);
        const again = py(
          mode,
          `${ATTEMPT}
f = open("/workspace/big", "wb", buffering=0)
f.write(b"x" * (1 << 20))
print(attempt(lambda: f.write(b"x")))
`,
          ["--workspace-mb", "8", "--fsize-mb", "1"],
        );
        expect(again.stdout.trim()).toBe("EFBIG");
      });

      it("cgroup limits where delegated; otherwise the status line says why not", (ctx) => {
        const asked = jail(mode, ["--memory-mb", "48", "--pids", "16"], ["/bin/true"]);
        expectStatus(asked, { exitCode: 0, error: null });
        expect(asked.status!.cgroup).not.toBe("no cgroup limits asked for");
        if (asked.status!.cgroup !== "active") {
          expect(asked.status!.cgroup).toMatch(/not delegated|unavailable|cannot|no cgroup/);
          ctx.skip();
        }
        const run = py(mode, "held = []\nwhile True: held.append(b'x' * (16 << 20))", [
          "--memory-mb",
          "48",
          "--as-mb",
          "1024",
          "--timeout-ms",
          "5000",
        ]);
        expectStatus(run, { signal: "SIGKILL", limit: "memory" });
      });

      // --- The kernel's dangerous calls -------------------------------------------------------

      it("mount through libc: killed by SIGSYS at the call", () => {
        const run = py(
          mode,
          `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("calling", flush=True)
r = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
print("survived", r, ctypes.get_errno())
`,
        );
        expectStatus(run, { exitCode: -1, signal: "SIGSYS", limit: null, error: null });
        expect(run.code).toBe(128 + 31);
        expect(run.stdout).toBe("calling\n");
      });

      it.runIf(X86_64)("mount as a raw system call (165): killed by SIGSYS", () => {
        const run = py(
          mode,
          `${SYSCALL}\nprint("calling", flush=True)\nprint("survived", call(165))`,
        );
        expectStatus(run, { signal: "SIGSYS" });
        expect(run.stdout).toBe("calling\n");
      });

      it("the mount binary (setuid root on the host): killed by SIGSYS before it mounts anything", () => {
        const run = jail(mode, [], ["/usr/bin/mount", "-t", "tmpfs", "none", "/tmp"]);
        expectStatus(run, { signal: "SIGSYS" });
      });

      it("unshare -U: killed by SIGSYS", () => {
        const run = jail(mode, [], ["/usr/bin/unshare", "-U", "/bin/true"]);
        expectStatus(run, { exitCode: -1, signal: "SIGSYS" });
        expect(run.code).toBe(128 + 31);
      });

      it("unshare -r (a user namespace mapped to root): killed by SIGSYS, never runs id", () => {
        const run = jail(mode, [], ["/usr/bin/unshare", "-r", "/usr/bin/id", "-u"]);
        expectStatus(run, { exitCode: -1, signal: "SIGSYS" });
        expect(run.stdout).toBe("");
      });

      it("ptrace(PTRACE_ATTACH) of a sibling: the tracer is killed by SIGSYS, the sibling runs on", () => {
        const run = sh(
          mode,
          `/usr/bin/sleep 5 & victim=$!
         ${PYTHON} -c 'import ctypes, sys; print("attaching", flush=True); print("attached", ctypes.CDLL(None).ptrace(16, int(sys.argv[1]), 0, 0))' $victim
         echo "tracer=$?"
         kill -0 $victim && echo victim=alive
         kill $victim`,
        );
        expectStatus(run, { exitCode: 0, signal: null });
        expect(run.stdout).toContain("attaching");
        expect(run.stdout).not.toContain("attached");
        expect(keyValues(run.stdout)).toMatchObject({ tracer: String(128 + 31), victim: "alive" });
      });

      it("sockets: raw IP gets EPERM, ping sockets EACCES, packet/netlink/vsock EAFNOSUPPORT", () => {
        const run = py(
          mode,
          `${ATTEMPT}
import socket
s = socket.socket
print("raw4=" + attempt(lambda: s(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)))
print("raw6=" + attempt(lambda: s(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)))
print("ping=" + attempt(lambda: s(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)))
print("packet=" + attempt(lambda: s(socket.AF_PACKET, socket.SOCK_RAW, 0)))
print("netlink=" + attempt(lambda: s(socket.AF_NETLINK, socket.SOCK_RAW, 0)))
print("vsock=" + attempt(lambda: s(40, socket.SOCK_STREAM, 0)))
print("unix=" + attempt(lambda: s(socket.AF_UNIX, socket.SOCK_STREAM)))
print("tcp=" + attempt(lambda: s(socket.AF_INET, socket.SOCK_STREAM)))
`,
        );
        expectStatus(run, { exitCode: 0 });
        expect(keyValues(run.stdout)).toEqual({
          raw4: "EPERM",
          raw6: "EPERM",
          ping: "EACCES",
          packet: "EAFNOSUPPORT",
          netlink: "EAFNOSUPPORT",
          vsock: "EAFNOSUPPORT",
          unix: "OK",
          tcp: "OK",
        });
      });

      describe("the host's network", () => {
        let server: Server;
        let port = 0;
        let connections = 0;
        let unixServer: Server;
        let unixConnections = 0;
        const abstractName = `pbx-jail-test-${process.pid}-${randomBytes(4).toString("hex")}`;
        let abstractForm = "exact";
        beforeAll(async () => {
          server = createServer((c) => {
            connections++;
            c.end("HOST-SECRET\n");
          });
          await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
          port = (server.address() as { port: number }).port;
          unixServer = createServer((c) => {
            unixConnections++;
            c.end("HOST-SECRET\n");
          });
          await new Promise<void>((r) => unixServer.listen(`\0${abstractName}`, r));
          // Node 20 pads an abstract socket's name with NULs to 108 bytes; Node 22 on (a newer
          // libuv) gives it its exact length. Connect to the name it got, as the kernel lists it.
          const padded = readFileSync("/proc/net/unix", "utf8").includes(`@${abstractName}@`);
          abstractForm = padded ? "padded" : "exact";
        });
        afterAll(async () => {
          await new Promise((r) => server?.close(r));
          await new Promise((r) => unixServer?.close(r));
        });

        const connectScript = `${ATTEMPT}
import socket
def tcp():
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
    print("READ", s.recv(100))
def abstract():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = b"\\0" + sys.argv[2].encode()
    s.connect(name.ljust(108, b"\\0") if sys.argv[3] == "padded" else name)
    print("READ", s.recv(100))
print("tcp=" + attempt(tcp))
print("unix=" + attempt(abstract))
`;

        it("control: outside the jail the same script reaches both servers", async () => {
          const before = connections + unixConnections;
          const child = spawn(PYTHON, [
            "-c",
            connectScript,
            String(port),
            abstractName,
            abstractForm,
          ]);
          let out = "";
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString();
          });
          await new Promise((r) => child.on("close", r));
          expect(keyValues(out)).toEqual({ tcp: "OK", unix: "OK" });
          expect(out).toContain("HOST-SECRET");
          expect(connections + unixConnections).toBe(before + 2);
        });

        it("--net none: the host's 127.0.0.1 is unreachable (ENETUNREACH), its abstract sockets too", async () => {
          const before = connections + unixConnections;
          const run = py(mode, connectScript, [], [String(port), abstractName, abstractForm]);
          expectStatus(run, { exitCode: 0 });
          expect(keyValues(run.stdout)).toEqual({ tcp: "ENETUNREACH", unix: "ECONNREFUSED" });
          await sleep(100);
          expect(connections + unixConnections).toBe(before);
        });

        it("bash /dev/tcp to the host's server: fails, the server sees nothing", async () => {
          const before = connections;
          const run = sh(
            mode,
            `exec 5<>/dev/tcp/127.0.0.1/$1 && cat <&5; echo "rc=$?"`,
            [],
            [String(port)],
          );
          expect(run.stdout).not.toContain("HOST-SECRET");
          expect(run.stderr).toMatch(/Network is unreachable/);
          await sleep(100);
          expect(connections).toBe(before);
        });

        it("--net loopback: a server inside the jail works, the host's is still out of reach", async () => {
          const before = connections + unixConnections;
          const run = py(
            mode,
            `${connectScript}
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()
c = socket.create_connection(srv.getsockname())
a, _ = srv.accept()
c.sendall(b"inside")
print("loop=" + a.recv(6).decode())
print("ifaces=" + ",".join(l.split(":")[0].strip() for l in open("/proc/self/net/dev").readlines()[2:]))
`,
            ["--net", "loopback"],
            [String(port), abstractName, abstractForm],
          );
          expectStatus(run, { exitCode: 0 });
          expect(keyValues(run.stdout)).toEqual({
            tcp: "ECONNREFUSED",
            unix: "ECONNREFUSED",
            loop: "inside",
            ifaces: "lo",
          });
          await sleep(100);
          expect(connections + unixConnections).toBe(before);
        });
      });

      // --- The host's files -------------------------------------------------------------------

      it("the new root holds only the jail's own skeleton: no /home, /root, /var, /run, /sys...", () => {
        const run = py(
          mode,
          `${ATTEMPT}
import json
print(json.dumps(sorted(os.listdir("/"))))
for p in ["/home", "/root", "/var", "/run", "/sys", "/boot", "/mnt", "/opt", "/srv", "/media",
          "/etc/shadow", "/etc/ssh", "/var/run", "/root/.ssh", "/home/" + os.environ.get("USER", "x")]:
    print(p + "=" + attempt(lambda: os.stat(p)))
print("tmp=" + json.dumps(os.listdir("/tmp")))
`,
        );
        expectStatus(run, { exitCode: 0 });
        const [listing, ...rest] = run.stdout.trim().split("\n");
        const allowed = [
          "bin",
          "dev",
          "etc",
          "lib",
          "lib32",
          "lib64",
          "libx32",
          "proc",
          "sbin",
          "tmp",
          "usr",
          "workspace",
        ];
        for (const entry of JSON.parse(listing!) as string[]) expect(allowed).toContain(entry);
        const kv = keyValues(rest.join("\n"));
        expect(kv.tmp).toBe("[]");
        delete kv.tmp;
        for (const [p, result] of Object.entries(kv)) expect(`${p}=${result}`).toBe(`${p}=ENOENT`);
      });

      it("/proc shows only the jail: pids 1 and 2, init's root, cwd, environ and mem closed", () => {
        const run = py(
          mode,
          `${ATTEMPT}
print("pids=" + ",".join(sorted(p for p in os.listdir("/proc") if p.isdigit())))
print("root=" + attempt(lambda: os.listdir("/proc/1/root/..")))
print("rootdir=" + attempt(lambda: os.listdir("/proc/1/root")))
print("cwd=" + attempt(lambda: os.listdir("/proc/1/cwd")))
print("environ=" + attempt(lambda: open("/proc/1/environ", "rb").read()))
print("mem=" + attempt(lambda: open("/proc/1/mem", "rb").read(1)))
print("fds=" + attempt(lambda: os.listdir("/proc/1/fd")))
`,
        );
        expectStatus(run, { exitCode: 0 });
        expect(keyValues(run.stdout)).toEqual({
          pids: "1,2",
          root: "EACCES",
          rootdir: "EACCES",
          cwd: "EACCES",
          environ: "EACCES",
          mem: "EACCES",
          fds: "EACCES",
        });
      });

      it("another workspace on the host: unreachable by path, by .., by a planted symlink", () => {
        const mine = nobodyDir(base, `mine-${slug}`);
        const canary = path.join(other, "canary.txt");
        const link = path.join(mine, "link");
        rmSync(link, { force: true });
        symlinkSync(canary, link);
        const run = py(
          mode,
          `${ATTEMPT}
canary = sys.argv[1]
name = os.path.basename(os.path.dirname(canary))
def show(p):
    print(open(p).read())
print("host=" + attempt(lambda: show(canary)))
print("dotdot=" + attempt(lambda: show("/workspace/../" + name + "/canary.txt")))
print("tmp=" + attempt(lambda: show("/tmp/" + canary.split("/", 2)[2])))
print("link=" + attempt(lambda: show("/workspace/link")))
for top in ["/workspace", "/tmp", "/dev/shm"]:
    for d, _, files in os.walk(top):
        for f in files:
            try:
                print(open(os.path.join(d, f), errors="replace").read(200))
            except OSError:
                pass
`,
          ["--workspace", mine],
          [canary],
        );
        expectStatus(run, { exitCode: 0 });
        expect(readFileSync(canary, "utf8")).toContain(secret);
        expect(keyValues(run.stdout)).toMatchObject({
          host: "ENOENT",
          dotdot: "ENOENT",
          tmp: "ENOENT",
          link: "ENOENT",
        });
        expect(run.stdout + run.stderr).not.toContain(secret);
      });

      it("writing to /usr, /etc, /bin, /lib and / fails with EROFS; /proc/sys is closed", () => {
        const run = py(
          mode,
          `${ATTEMPT}
for p in ["/usr/pwned", "/usr/bin/pwned", "/etc/pwned", "/etc/passwd", "/bin/pwned", "/lib/pwned", "/pwned"]:
    print(p + "=" + attempt(lambda: open(p, "a").write("x")))
print("sysctl=" + attempt(lambda: open("/proc/sys/kernel/hostname", "w").write("x")))
print("workspace=" + attempt(lambda: open("/workspace/ok", "w").write("x")))
`,
          ["--workspace-mb", "1"],
        );
        expectStatus(run, { exitCode: 0 });
        expect(keyValues(run.stdout)).toEqual({
          "/usr/pwned": "EROFS",
          "/usr/bin/pwned": "EROFS",
          "/etc/pwned": "EROFS",
          "/etc/passwd": "EROFS",
          "/bin/pwned": "EROFS",
          "/lib/pwned": "EROFS",
          "/pwned": "EROFS",
          sysctl: "EACCES",
          workspace: "OK",
        });
      });

      it("no device nodes, no files given to root, in the workspace", () => {
        const run = py(
          mode,
          `${ATTEMPT}
import stat
print("mknod=" + attempt(lambda: os.mknod("/workspace/mem", 0o600 | stat.S_IFCHR, os.makedev(1, 1))))
open("/workspace/mine", "w").close()
print("chown=" + attempt(lambda: os.chown("/workspace/mine", 0, 0)))
`,
          ["--workspace-mb", "1"],
        );
        expect(keyValues(run.stdout)).toEqual({ mknod: "EPERM", chown: "EINVAL" });
      });

      // --- Privilege --------------------------------------------------------------------------

      it("no privilege at all: NoNewPrivs 1, every capability set empty, seccomp on, setuid(0) EPERM", () => {
        const run = py(
          mode,
          `${ATTEMPT}
for line in open("/proc/self/status"):
    k, v = line.split(":", 1)
    if k.startswith("Cap") or k in ("NoNewPrivs", "Seccomp", "Uid", "Gid"):
        print(k + "=" + " ".join(v.split()))
print("setuid=" + attempt(lambda: os.setuid(0)))
print("setresuid=" + attempt(lambda: os.setresuid(0, 0, 0)))
print("setgroups=" + attempt(lambda: os.setgroups([0])))
print("uid_map=" + " ".join(open("/proc/self/uid_map").read().split()))
`,
        );
        expectStatus(run, { exitCode: 0 });
        const outside = isRoot ? NOBODY : process.getuid?.();
        expect(keyValues(run.stdout)).toEqual({
          CapInh: "0000000000000000",
          CapPrm: "0000000000000000",
          CapEff: "0000000000000000",
          CapBnd: "0000000000000000",
          CapAmb: "0000000000000000",
          NoNewPrivs: "1",
          Seccomp: "2",
          Uid: "1000 1000 1000 1000",
          Gid: "1000 1000 1000 1000",
          setuid: "EPERM",
          setresuid: "EPERM",
          setgroups: "EPERM",
          uid_map: `1000 ${outside} 1`,
        });
      });

      it.runIf(isRoot)(
        "a setuid-root binary (working on the host) runs without privilege in the jail",
        () => {
          const dir = nobodyDir(base, `suid-${slug}`);
          const id = path.join(dir, "id");
          copyFileSync("/usr/bin/id", id);
          chownSync(id, 0, 0);
          chmodSync(id, 0o4755);
          // Outside the jail the copy does make nobody root: the attack has something to win.
          const host = spawnSync(
            "setpriv",
            [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", id, "-u"],
            {
              encoding: "utf8",
            },
          );
          expect(host.stdout.trim()).toBe("0");
          const run = jail(mode, ["--workspace", dir], ["/workspace/id", "-u"]);
          expectStatus(run, { exitCode: 0 });
          expect(run.stdout.trim()).toBe("1000");
        },
      );

      it.runIf(existsSync("/usr/bin/su"))(
        "su (setuid root on the host) fails and never runs as root",
        () => {
          const run = jail(
            mode,
            ["--timeout-ms", "5000"],
            ["/usr/bin/su", "-c", "/usr/bin/id -u", "root"],
            {
              input: "\n",
            },
          );
          expectStatus(run, { exitCode: 1, signal: null, limit: null });
          expect(run.stdout).not.toMatch(/^0$/m);
          expect(run.stderr).toMatch(/su: /);
        },
      );

      // --- Processes ---------------------------------------------------------------------------

      it("signalling a host process of the same host user: ESRCH, and it lives on", async () => {
        const t = tag("hostsleep");
        const victim = spawn(
          "setpriv",
          [
            `--reuid=${NOBODY}`,
            `--regid=${NOBODY}`,
            "--clear-groups",
            BASH,
            "-c",
            "sleep 30; true",
            t,
          ],
          { stdio: "ignore", detached: true },
        );
        cleanups.push(() => {
          try {
            victim.kill("SIGKILL");
          } catch {
            // gone
          }
        });
        expect(await waitFor(() => hostProcesses(t).includes(victim.pid!), 3000)).toBe(true);
        const run = py(
          mode,
          `${ATTEMPT}
import signal
pid = int(sys.argv[1])
print("kill9=" + attempt(lambda: os.kill(pid, signal.SIGKILL)))
print("kill0=" + attempt(lambda: os.kill(pid, 0)))
print("pidfd=" + attempt(lambda: os.pidfd_open(pid)))
print("pgrp=" + attempt(lambda: os.killpg(pid, signal.SIGKILL)))
print("all=" + attempt(lambda: os.kill(-1, signal.SIGKILL)))
`,
          [],
          [String(victim.pid)],
        );
        expectStatus(run, { exitCode: 0 });
        expect(keyValues(run.stdout)).toEqual({
          kill9: "ESRCH",
          kill0: "ESRCH",
          pidfd: "ESRCH",
          pgrp: "ESRCH",
          // kill(-1) reaches nothing: the jail has only init (immune) and the caller itself.
          all: "ESRCH",
        });
        await sleep(100);
        expect(hostProcesses(t)).toContain(victim.pid);
        victim.kill("SIGKILL");
      });

      it("killing or stopping the jail's init from inside: no effect, the status is the command's", () => {
        const run = py(
          mode,
          "import os, signal\nos.kill(1, signal.SIGKILL)\nos.kill(1, signal.SIGSTOP)\nprint('still here')\nraise SystemExit(7)",
        );
        expectStatus(run, { exitCode: 7, signal: null, limit: null, error: null });
        expect(run.stdout).toBe("still here\n");
      });

      it("escaping by double-forking (setsid, python daemon): gone as soon as the command exits", async () => {
        const [a, b] = [tag("dfork"), randomBytes(4).toString("hex")];
        const t = a + b; // the launcher's argv holds the halves apart; only the daemons carry t
        const live = startJail(
          mode,
          ["--timeout-ms", "10000"],
          [
            BASH,
            "-c",
            `setsid ${BASH} -c 'sleep 100; true' "$1$2" </dev/null &
         ${PYTHON} -c 'import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(100)
    os._exit(0)' "$1$2"
         sleep 0.5; echo spawned`,
            "bash",
            a,
            b,
          ],
        );
        expect(await waitFor(() => hostProcesses(t).length >= 2, 3000)).toBe(true);
        const run = await live.done;
        expectStatus(run, { exitCode: 0, signal: null, limit: null });
        expect(run.stdout).toBe("spawned\n");
        // The daemons held stdout open (for 100 s): the launcher still returned when the command
        // ended, not when they did.
        expect(run.ms).toBeLessThan(20_000);
        expect(hostProcesses(t)).toEqual([]);
      });

      it("escaping the timeout by double-forking: the timeout kills the daemons too", async () => {
        const [a, b] = [tag("dfork-timeout"), randomBytes(4).toString("hex")];
        const t = a + b;
        const live = startJail(
          mode,
          ["--timeout-ms", "800"],
          [
            BASH,
            "-c",
            `setsid ${BASH} -c 'trap "" HUP TERM; sleep 100; true' "$1$2" </dev/null >/dev/null 2>&1 &
         sleep 100`,
            "bash",
            a,
            b,
          ],
        );
        expect(await waitFor(() => hostProcesses(t).length >= 1, 3000)).toBe(true);
        const run = await live.done;
        expectStatus(run, { signal: "SIGKILL", limit: "timeout" });
        expect(run.ms).toBeLessThan(800 + 10_000);
        expect(hostProcesses(t)).toEqual([]);
      });

      it("the jail dies with its parent: SIGKILL the launcher, nothing of the jail survives", async () => {
        const t = tag("pdeath");
        const live = startJail(mode, [], [BASH, "-c", "sleep 100; true", t]);
        // The launcher, init and the command's bash all carry the marker.
        expect(await waitFor(() => hostProcesses(t).length >= 3, 3000)).toBe(true);
        live.child.kill("SIGKILL");
        await live.done;
        expect(await waitFor(() => hostProcesses(t).length === 0, 2000)).toBe(true);
      });

      it("the jail dies with its launcher however early it is killed: 60 kills during set-up", async () => {
        // Init changes credentials while it builds the jail, which clears its parent-death
        // signal; a launcher killed in that window must still take init down (through the sync
        // pipe's hang-up), or init and its command live on outside anyone's reach.
        const t = tag("early-death");
        for (let i = 0; i < 60; i++) {
          const live = startJail(mode, [], [BASH, "-c", "sleep 100; true", t]);
          // From right after the spawn to well into the command's start.
          await new Promise((r) => setTimeout(r, (i * 3) % 45));
          live.child.kill("SIGKILL");
          await live.done;
        }
        const gone = await waitFor(() => hostProcesses(t).length === 0, 5000);
        if (!gone) killTagged(t);
        expect(gone).toBe(true);
      });

      it.runIf(isRoot && existsSync("/usr/bin/unshare"))(
        "the launcher makes nothing in the host's /tmp, while it runs or after it is killed",
        async () => {
          // The launcher builds its root on a tmpfs over /tmp inside the jail's own mount
          // namespace. Give it a /tmp of its own (a bind in a private mount namespace around it)
          // so that anything it made there would be seen here.
          const hostTmp = path.join(base, `tmp-${slug}`);
          rmSync(hostTmp, { recursive: true, force: true });
          mkdirSync(hostTmp);
          chmodSync(hostTmp, 0o1777);
          const wrap = [
            "unshare",
            "-m",
            "sh",
            "-c",
            'mount --bind "$0" /tmp && exec "$@"',
            hostTmp,
          ];
          const leftovers = () => readdirSync(hostTmp);
          // The private /tmp hides a checkout that lives under /tmp: run a copy kept elsewhere.
          const copyDir = mkdtempSync("/var/tmp/polybox-launcher-");
          chmodSync(copyDir, 0o755);
          const launcher = path.join(copyDir, "polybox-jail");
          copyFileSync(LAUNCHER, launcher);
          chmodSync(launcher, 0o755);
          onTestFinished(() => rmSync(copyDir, { recursive: true, force: true }));

          const clean = startJail(mode, [], ["/bin/true"], wrap, launcher);
          expectStatus(await clean.done, { exitCode: 0 });
          expect(leftovers()).toEqual([]);

          const t = tag("pdeath-tmp");
          const live = startJail(mode, [], [BASH, "-c", "sleep 100; true", t], wrap, launcher);
          expect(await waitFor(() => hostProcesses(t).length >= 3, 3000)).toBe(true);
          expect(leftovers()).toEqual([]);
          live.child.kill("SIGKILL");
          await live.done;
          expect(await waitFor(() => hostProcesses(t).length === 0, 2000)).toBe(true);
          expect(leftovers()).toEqual([]);
        },
      );

      it("the launcher's SIGTERM ends the whole jail with limit terminated", async () => {
        const t = tag("sigterm");
        const live = startJail(mode, [], [BASH, "-c", "sleep 100; true", t]);
        expect(await waitFor(() => hostProcesses(t).length >= 3, 3000)).toBe(true);
        live.child.kill("SIGTERM");
        const run = await live.done;
        expectStatus(run, { exitCode: -1, signal: "SIGKILL", limit: "terminated", error: null });
        expect(hostProcesses(t)).toEqual([]);
      });

      it("descriptors the caller leaks (no CLOEXEC) never reach the command; --keep-fd does", () => {
        const file = path.join(base, `leak-${slug}.txt`);
        writeFileSync(file, `${secret}\n`);
        chmodSync(file, 0o644);
        const fd = openSync(file, "r");
        try {
          const script = `
import os
opened = []
for fd in range(3, 256):
    try:
        os.fstat(fd)
        opened.append(fd)
    except OSError:
        pass
print("open=" + ",".join(map(str, opened)))
for fd in opened:
    print(os.read(fd, 200).decode(errors="replace"))
`;
          // The extra descriptor lands at fd 4 of the launcher (fd 3 is its status channel).
          const run = jail(mode, [], [PYTHON, "-c", script], { extraFds: [fd] });
          expectStatus(run, { exitCode: 0 });
          expect(keyValues(run.stdout).open).toBe("");
          expect(run.stdout).not.toContain(secret);
          // The control: asked for, the same descriptor does get through, so the check can see one.
          const kept = jail(mode, ["--keep-fd", "4"], [PYTHON, "-c", script], { extraFds: [fd] });
          expect(keyValues(kept.stdout).open).toBe("4");
          expect(kept.stdout).toContain(secret);
        } finally {
          closeSync(fd);
        }
      });

      // --- The seccomp policy, family by family ------------------------------------------------

      describe.runIf(X86_64)("seccomp: killed families (x86_64 numbers)", () => {
        it.each(KILLED_FAMILIES)("%s: every call killed by SIGSYS", (_family, calls) => {
          const run = py(mode, killedCallsScript(calls));
          expectStatus(run, { exitCode: 0, signal: null });
          const outcome = JSON.parse(run.stdout) as Record<string, string>;
          expect(outcome).toEqual(Object.fromEntries(calls.map(([name]) => [name, "SIGSYS"])));
        });

        it("a killed call as the command itself: the status line reports SIGSYS", () => {
          const run = py(
            mode,
            `${SYSCALL}\nprint("calling", flush=True)\ncall(321)\nprint("survived")`,
          );
          expectStatus(run, { exitCode: -1, signal: "SIGSYS", limit: null, error: null });
          expect(run.stdout).toBe("calling\n");
        });

        it("calls refused without a kill: setuid family EPERM, clone3 and io_uring ENOSYS, unlisted EPERM, TIOCSTI EPERM", () => {
          const run = py(
            mode,
            `${SYSCALL}
import fcntl, os
for name, nr, *args in [("setuid", 105, 0), ("setgid", 106, 0), ("setresuid", 117, 0, 0, 0),
                        ("capset", 126), ("clone3", 435), ("setxattr", 188), ("pidfd_getfd", 438),
                        ("process_madvise", 440), ("memfd_secret", 447), ("lsetxattr", 189),
                        ("io_uring_setup", 425, 8), ("io_uring_enter", 426), ("io_uring_register", 427)]:
    r, err = call(nr, *args)
    print(name + "=" + (err if r < 0 else "OK"))
# TIOCSTI on /dev/null: the kernel would say ENOTTY; the filter answers first.
try:
    fcntl.ioctl(os.open("/dev/null", os.O_RDONLY), 0x5412, b"x")
    print("tiocsti=OK")
except OSError as e:
    print("tiocsti=" + errno.errorcode[e.errno])
`,
          );
          expectStatus(run, { exitCode: 0, signal: null });
          expect(keyValues(run.stdout)).toEqual({
            setuid: "EPERM",
            setgid: "EPERM",
            setresuid: "EPERM",
            capset: "EPERM",
            clone3: "ENOSYS",
            setxattr: "EPERM",
            pidfd_getfd: "EPERM",
            process_madvise: "EPERM",
            memfd_secret: "EPERM",
            lsetxattr: "EPERM",
            io_uring_setup: "ENOSYS",
            io_uring_enter: "ENOSYS",
            io_uring_register: "ENOSYS",
            tiocsti: "EPERM",
          });
        });
      });

      // --- The status line ---------------------------------------------------------------------

      it("status line, normal exit: the code, no signal, no limit, no error", () => {
        const run = sh(mode, "echo out; echo err >&2; exit 7");
        expect(run.code).toBe(7);
        expect(run.stdout).toBe("out\n");
        expect(run.stderr).toBe("err\n");
        expectStatus(run, { exitCode: 7, signal: null, limit: null, error: null });
        expect(run.status!.wallMs).toBeGreaterThanOrEqual(0);
        expect(run.status!.cgroup).toBe("no cgroup limits asked for");
        expect(run.statusText.endsWith("}\n")).toBe(true);
        expect(run.statusText.trim().split("\n")).toHaveLength(1);
      });

      it("status line, a signal: exitCode -1, the signal's name, the launcher exits 128+n", () => {
        const run = sh(mode, "kill -USR1 $$; echo survived");
        expectStatus(run, { exitCode: -1, signal: "SIGUSR1", limit: null, error: null });
        expect(run.code).toBe(128 + 10);
        expect(run.stdout).toBe("");
      });

      it("the command starts with no signal blocked (SIGTERM, SIGINT, SIGHUP, SIGCHLD work inside)", () => {
        const run = sh(
          mode,
          `grep -E '^Sig(Blk|Ign):' /proc/self/status | tr -d '\t' | tr : =
         start=$(date +%s%N); timeout 0.3 sleep 2; echo "timeout=$?"
         echo "ms=$(( ($(date +%s%N) - start) / 1000000 ))"`,
        );
        expectStatus(run, { exitCode: 0 });
        const kv = keyValues(run.stdout);
        expect(kv.SigBlk).toBe("0000000000000000");
        // timeout(1) stops its command with SIGTERM: it must take effect at once, not at 2 s.
        expect(kv.timeout).toBe("124");
        expect(Number(kv.ms)).toBeLessThan(2000);
      });

      it("status line, a command that does not exist: 127, no setup error", () => {
        const run = jail(mode, [], ["/usr/bin/no-such-command-here"]);
        expect(run.code).toBe(127);
        expectStatus(run, { exitCode: 127, signal: null, error: null });
        expect(run.stderr).toMatch(/cannot run/);
      });

      it("status line, setup errors: exit 125 and the failing step in error", () => {
        const ws = jail(mode, ["--workspace", "/nonexistent-pbx"], ["/bin/true"]);
        expect(ws.code).toBe(125);
        expectStatus(ws, { exitCode: 125, signal: null, limit: null });
        expect(ws.status!.error).toMatch(/workspace.*No such file or directory/);
        const cwd = jail(mode, ["--cwd", "/nonexistent-pbx"], ["/bin/true"]);
        expect(cwd.code).toBe(125);
        expect(cwd.status?.error).toMatch(/chdir.*No such file or directory/);
        const usage = jail(mode, ["--net", "everything"], ["/bin/true"]);
        expect(usage.code).toBe(125);
        expect(usage.stderr).toMatch(/--net is none or loopback/);
      });

      it("--probe: builds a jail, runs nothing, prints one JSON status line", () => {
        const [file, ...pre] = mode.prefix.length ? mode.prefix : [LAUNCHER];
        const args = mode.prefix.length ? [...pre, LAUNCHER, "--probe"] : ["--probe"];
        const ok = spawnSync(file!, args, { encoding: "utf8", timeout: 10_000 });
        expect(ok.status).toBe(0);
        const lines = ok.stdout.trim().split("\n");
        expect(lines).toHaveLength(1);
        expect(JSON.parse(lines[0]!)).toMatchObject({
          exitCode: 0,
          signal: null,
          limit: null,
          error: null,
        });
        const bad = spawnSync(file!, [...args, "--workspace", "/nonexistent-pbx"], {
          encoding: "utf8",
          timeout: 10_000,
        });
        expect(bad.status).toBe(125);
        expect(JSON.parse(bad.stdout.trim())).toMatchObject({ exitCode: 125 });
        expect(JSON.parse(bad.stdout.trim()).error).toMatch(/workspace/);
      });
    },
  );
});
