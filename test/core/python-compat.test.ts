// What CPython has and Pyodide's build lacks, put back (src/guest/engines/python/compat.py):
// each program's stdout must equal what the machine's own CPython prints for it, byte for byte.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

const PYTHON = "/usr/bin/python3";

const PROGRAMS: Record<string, string> = {
  "asyncio.run with gather, wait_for, a queue and tasks": `
import asyncio
async def work(n):
    await asyncio.sleep(0.01 * n)
    return n * n
async def main():
    r = await asyncio.gather(*(work(i) for i in range(1, 5)))
    try:
        await asyncio.wait_for(asyncio.sleep(5), timeout=0.02)
    except TimeoutError:
        r.append("timeout")
    q = asyncio.Queue()
    async def produce():
        for i in range(3):
            await q.put(i)
    asyncio.create_task(produce())
    r.append([await q.get() for _ in range(3)])
    return r
print(asyncio.run(main()))
print(asyncio.run(work(3)))
`,
  "asyncio.run propagates the coroutine's exception": `
import asyncio
async def boom():
    await asyncio.sleep(0)
    raise ValueError("boom")
try:
    asyncio.run(boom())
except ValueError as e:
    print("caught", e)
`,
  "hashlib.pbkdf2_hmac": `
import hashlib
for name, pw, salt, n, dklen in [
    ("sha256", b"password", b"salt", 1, None),
    ("sha256", b"password", b"salt", 4096, 32),
    ("sha1", b"passwordPASSWORDpassword", b"saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25),
    ("sha512", b"x" * 200, b"s", 10, 100),
    ("md5", bytearray(b"pw"), memoryview(b"salt"), 3, 7),
]:
    print(name, hashlib.pbkdf2_hmac(name, pw, salt, n, dklen).hex())
for bad in [(0, None), (1, 0)]:
    try:
        hashlib.pbkdf2_hmac("sha256", b"p", b"s", *bad)
    except ValueError as e:
        print(type(e).__name__)
`,
  "zoneinfo, with the host's IANA time-zone data": `
from zoneinfo import ZoneInfo, available_timezones
from datetime import datetime, timedelta, timezone
for key in ["Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "UTC"]:
    z = ZoneInfo(key)
    for month in (1, 7):
        d = datetime(2024, month, 15, 12, tzinfo=z)
        print(key, d.isoformat(), d.tzname(), d.astimezone(timezone.utc).isoformat())
print(datetime(2024, 3, 31, 0, 30, tzinfo=timezone.utc).astimezone(ZoneInfo("Europe/Paris")) + timedelta(hours=2))
print("Europe/Paris" in available_timezones(), "Not/AZone" in available_timezones())
try:
    ZoneInfo("Not/AZone")
except Exception as e:
    print(type(e).__name__)
`,
  "randomness: os.urandom, uuid4, secrets, SystemRandom, tempfile": `
import os, uuid, secrets, random, tempfile
print(len(os.urandom(16)), len(str(uuid.uuid4())), len(secrets.token_hex(8)))
print(0 <= random.SystemRandom().random() < 1)
with tempfile.NamedTemporaryFile("w+") as f:
    f.write("x"); f.flush(); f.seek(0); print(f.read())
`,
};

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { python: 1, javascript: 0, bash: 0 } });
});
afterAll(async () => {
  await runtime?.close();
});

describe("Python programs behave as on CPython", () => {
  it.each(Object.entries(PROGRAMS))("%s", async (_label, code) => {
    await using sb = await Sandbox.create({ runtime });
    const r = await sb.run("python", code);
    expect(r.stderr).toBe("");
    expect(r.status).toBe("ok");
    if (existsSync(PYTHON))
      expect(r.stdout).toBe(execFileSync(PYTHON, ["-c", code], { encoding: "utf8" }));
    else expect(r.stdout).not.toBe("");
  });

  it("asyncio.run leaves the cell's own loop working: top-level await still runs after it", async () => {
    await using sb = await Sandbox.create({ runtime });
    const first = await sb.run(
      "python",
      "import asyncio\nasync def f():\n    return 1\nx = asyncio.run(f())",
    );
    expect(first.status).toBe("ok");
    const r = await sb.run("python", "await asyncio.sleep(0.01)\nprint(x + 1)");
    expect(r.stdout).toBe("2\n");
  });

  it("the machine a program asks about is the sandbox's, the same in Python, Bash and JavaScript, not the server's", async () => {
    await using sb = await Sandbox.create({ runtime });
    const py = await sb.run(
      "python",
      `import getpass, os, pwd, socket, sys
print(sys.executable, sys.orig_argv, getpass.getuser(), os.getuid(), socket.gethostname())
print(pwd.getpwuid(os.getuid()).pw_dir, os.environ["PATH"], os.environ["PWD"], os.path.expanduser("~"))`,
    );
    expect(py.stdout).toBe(
      "/usr/bin/python3 ['python3', '-c'] user 1000 localhost\n/workspace /usr/bin:/bin /workspace /workspace\n",
    );
    const sh = await sb.run("bash", 'echo "$(whoami) $(id -u) $(hostname) $PATH $HOME"');
    expect(sh.stdout).toBe("user 1000 localhost /usr/bin:/bin /workspace\n");
    const js = await sb.run(
      "javascript",
      'const os = require("os"); const u = os.userInfo(); console.log(u.username, u.uid, os.hostname(), os.homedir(), process.platform)',
    );
    expect(js.stdout).toBe("user 1000 localhost /workspace linux\n");
  });
});
