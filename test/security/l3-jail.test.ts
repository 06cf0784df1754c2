// T18 the OS jail (L3) around the WASM engine host on Linux: checked from outside, through /proc,
// the way the server starts it by default. The host runs in its own user, pid, mount, network,
// ipc and uts namespaces, with no capabilities, no_new_privs and the seccomp filter, as a user
// that is not the server's, and sees none of the host's files but its own assets.
import { readFileSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ATTACK_LIMITS,
  hostPid,
  newSandbox,
  type Runtime,
  type Sandbox,
  securityRuntime,
} from "../helpers/security-env.js";

let rt: Runtime;
/** A sandbox that has run code, so that its own engine host is up to be inspected. */
let probe: Sandbox;

beforeAll(async () => {
  rt = await securityRuntime();
  probe = await newSandbox(rt);
  await probe.run("javascript", "1");
});

afterAll(async () => {
  await rt?.close();
});

const status = (pid: number) => readFileSync(`/proc/${pid}/status`, "utf8");
const field = (text: string, name: string) =>
  new RegExp(`^${name}:\\s+(.*)$`, "m").exec(text)?.[1]?.trim();

describe.runIf(process.platform === "linux")("T18 L3 engine host jail", () => {
  it("T18 L3 is on by default where the launcher works", () => {
    expect(rt.osJail?.active, rt.osJail?.detail).toBe(true);
  });

  it("T18 L3 namespaces: none shared with the server", () => {
    const pid = hostPid(probe);
    for (const ns of ["user", "pid", "mnt", "net", "ipc", "uts", "cgroup"]) {
      expect(readlinkSync(`/proc/${pid}/ns/${ns}`), ns).not.toBe(
        readlinkSync(`/proc/self/ns/${ns}`),
      );
    }
  });

  it("T18 L3 privileges: no capabilities, no_new_privs, seccomp filter, not the server's user", () => {
    const text = status(hostPid(probe));
    for (const set of ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"]) {
      expect(field(text, set), set).toBe("0000000000000000");
    }
    expect(field(text, "NoNewPrivs")).toBe("1");
    expect(field(text, "Seccomp")).toBe("2");
    const uid = field(text, "Uid")?.split(/\s+/)[0];
    if (process.getuid?.() === 0) expect(uid).toBe("65534");
    else expect(uid).toBe(String(process.getuid?.()));
  });

  it("T18 L3 file system: the host's root is not the jail's", () => {
    const pid = hostPid(probe);
    // The jail's root is a private tmpfs: /proc/<pid>/root/etc holds the jail's own passwd.
    const passwd = readFileSync(`/proc/${pid}/root/etc/passwd`, "utf8");
    expect(passwd).toMatch(/^sandbox:x:1000:/m);
    expect(passwd).not.toBe(readFileSync("/etc/passwd", "utf8"));
    expect(() => readFileSync(`/proc/${pid}/root/etc/shadow`)).toThrow(/ENOENT/);
  });

  it("T18 L3 every engine still runs inside the jail", async () => {
    const sb = await newSandbox(rt);
    for (const [language, code] of [
      ["python", "print(6 * 7)"],
      ["javascript", "console.log(6 * 7)"],
      ["bash", "echo $((6 * 7))"],
    ] as const) {
      const r = await sb.run(language, code, ATTACK_LIMITS);
      expect(r, language).toMatchObject({ status: "ok", stdout: "42\n" });
    }
    await sb.close();
  });
});
