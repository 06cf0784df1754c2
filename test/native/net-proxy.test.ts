// Native mode's guest network (docs/security.md, "Egress"): with a grant, each jail's agent runs
// an HTTP proxy on the jail's own loopback (the jail has no other interface) and sets
// HTTP_PROXY/HTTPS_PROXY/ALL_PROXY, so the machine's curl and Python reach granted hosts through
// the trusted side, which checks each request and adds `--net-header` headers the jail never
// holds. CONNECT tunnels are tested in net-connect.test.ts; here, that a tunnel to a host with
// such headers ends on the trusted side and never goes out without them. Without a grant
// there is no proxy and no loopback: a listener on the host sees nothing.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { usable } from "./helpers.js";

const SECRET = "native-boundary-secret";
const TOKEN = "native-token-5e6f7a8b9c";
const CURL = existsSync("/usr/bin/curl");
const REQUESTS = spawnSync("/usr/bin/python3", ["-c", "import requests"]).status === 0;
const seen: { url: string; key: string | undefined; auth?: string | undefined }[] = [];
let connections = 0;
const site = http.createServer((req, res) => {
  seen.push({
    url: req.url ?? "",
    key: req.headers["x-key"] as string | undefined,
    auth: req.headers.authorization,
  });
  if (req.url === "/moved") {
    res.writeHead(302, { location: "/landed" });
    res.end();
  } else {
    // An echo of the credential, as a debugging endpoint gives it.
    if (req.headers.authorization) res.setHeader("x-echo", req.headers.authorization);
    res.end(`hello ${req.url}`);
  }
});
site.on("connection", () => {
  connections++;
});
let port = 0;
let granted: Runtime;
let nothing: Runtime;

describe.runIf(usable)("native mode's proxy", () => {
  beforeAll(async () => {
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    port = (site.address() as AddressInfo).port;
    const pool = { python: 0, javascript: 0, bash: 0 };
    granted = await testRuntime({
      isolation: "auto",
      pool,
      permissions: { net: [`127.0.0.1:${port}`] },
      net: {
        headers: [{ host: `127.0.0.1:${port}`, name: "X-Key", value: SECRET }],
        secrets: [{ name: "API_TOKEN", value: TOKEN, hosts: [`127.0.0.1:${port}`] }],
      },
    });
    nothing = await testRuntime({ isolation: "auto", pool });
  });
  afterAll(async () => {
    await Promise.all([granted?.close(), nothing?.close()]);
    site.closeAllConnections();
    await new Promise((r) => site.close(r));
  });

  it.runIf(CURL)("curl reaches a granted host; the header is added outside the jail", async () => {
    const sb = await Sandbox.create({ runtime: granted, engine: "native" });
    const r = await sb.run(
      "bash",
      `curl -sS http://127.0.0.1:${port}/curl; echo; curl -sS -L http://127.0.0.1:${port}/moved; echo
       env | grep -c ${SECRET.slice(0, 8)} || true`,
    );
    await sb.close();
    expect(r.stdout).toBe(`hello /curl\nhello /landed\n0\n`);
    expect(seen.find((s) => s.url === "/curl")?.key).toBe(SECRET);
    expect(r.network?.map((n) => n.status)).toEqual([200, 302, 200]);
  });

  it("Python's urllib goes through the proxy; a refused request names the host and the flag", async () => {
    const sb = await Sandbox.create({ runtime: granted, engine: "native" });
    const r = await sb.run(
      "python",
      `import os, urllib.request, urllib.error
print(urllib.request.urlopen("http://127.0.0.1:${port}/py").read().decode())
try:
    urllib.request.urlopen("http://169.254.169.254/latest/meta-data/")
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
print(any("${SECRET.slice(0, 8)}" in v for v in os.environ.values()))`,
    );
    await sb.close();
    expect(r.stdout).toContain("hello /py\n");
    expect(r.stdout).toContain(
      "403 polybox: network access to 169.254.169.254:80 is not granted; the server grants it with --allow-net=169.254.169.254",
    );
    expect(r.stdout).toContain("False\n");
  });

  it.runIf(REQUESTS)("Python requests, which reads the proxy variables itself", async () => {
    const sb = await Sandbox.create({ runtime: granted, engine: "native" });
    const r = await sb.run(
      "python",
      `import requests
r = requests.post("http://127.0.0.1:${port}/requests", data=b"x=1")
print(r.status_code, r.text)`,
    );
    await sb.close();
    expect(r.stdout, r.stderr).toBe("200 hello /requests\n");
  });

  it.runIf(CURL)(
    "https:// to a host with --net-header headers ends on the trusted side, whose own TLS to it must hold: never a request without the header",
    async () => {
      const sb = await Sandbox.create({ runtime: granted, engine: "native" });
      const r = await sb.run(
        "bash",
        `curl -sS -o /dev/null -w "%{http_code}" https://127.0.0.1:${port}/tls; echo " rc=$?"`,
      );
      await sb.close();
      // This host speaks plain HTTP: the trusted side's TLS to it fails, and the guest's client
      // gets the boundary's 502 (net-connect.test.ts covers hosts that speak TLS).
      expect(r.stdout, r.stderr).toBe("502 rc=0\n");
      expect(r.network?.map((n) => n.method)).toEqual(["CONNECT", "GET"]);
      expect(r.network?.[1]?.denied).toMatch(/request failed/);
      expect(seen.some((s) => s.url === "/tls")).toBe(false);
    },
  );

  // T34 in native mode: the jail's environment holds the placeholder; the proxy's request to the
  // secret's host carries the value, and its echo comes back as the placeholder (https://, whose
  // tunnel ends on the trusted side, is net-connect.test.ts's).
  it.runIf(CURL)(
    "a --net-secret: the env holds a placeholder, the host gets the value, its echo the placeholder",
    async () => {
      const sb = await Sandbox.create({ runtime: granted, engine: "native" });
      const r = await sb.run(
        "bash",
        `echo "$API_TOKEN" | cut -c1-25
         curl -sS -D - -o /dev/null -H "Authorization: Bearer $API_TOKEN" http://127.0.0.1:${port}/secret | grep -ci "^x-echo: Bearer $API_TOKEN" || true`,
      );
      const py = await sb.run(
        "python",
        `import os, urllib.request, urllib.error
try:
    urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:${port}/elsewhere", headers={"X": os.environ["API_TOKEN"]}))
    print("sent")
except urllib.error.HTTPError as e:
    print(e.code)`,
      );
      await sb.close();
      expect(r.stdout, r.stderr).toBe("POLYBOX_SECRET_API_TOKEN_\n1\n");
      expect(seen.find((s) => s.url === "/secret")?.auth).toBe(`Bearer ${TOKEN}`);
      // The same host is the secret's: the placeholder goes there as the value.
      expect(py.stdout, py.stderr).toBe("sent\n");
      expect(JSON.stringify([r, py])).not.toContain(TOKEN);
    },
  );

  it.runIf(CURL)(
    "nothing granted: no proxy, and a loopback listener on the host sees nothing",
    async () => {
      const before = connections;
      const sb = await Sandbox.create({ runtime: nothing, engine: "native" });
      const r = await sb.run(
        "bash",
        `env | grep -ci proxy || true; curl -sS --max-time 5 http://127.0.0.1:${port}/none; echo "rc=$?"`,
      );
      const py = await sb.run(
        "python",
        `import urllib.request
try:
    urllib.request.urlopen("http://127.0.0.1:${port}/none-py", timeout=5)
except Exception as e:
    print(type(e).__name__)`,
      );
      await sb.close();
      expect(r.stdout).toMatch(/^0\n/);
      expect(r.stdout).toMatch(/rc=[1-9]/);
      expect(py.stdout).toBe("URLError\n");
      expect(connections).toBe(before);
      expect(seen.some((s) => s.url.startsWith("/none"))).toBe(false);
    },
  );
});
