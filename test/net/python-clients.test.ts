// Python's other HTTP clients in WASM mode (docs/security.md, "Egress"): http.client's
// HTTPConnection / HTTPSConnection and `requests` go through the same bridge as urllib, so the
// trusted side checks every request, adds `--net-header` headers the guest never holds, and a
// refusal names the host and the flag. `requests` is Debian's (python3-requests 2.28 with
// urllib3 1.26, six, idna, certifi, chardet), packed here into pure-Python wheels and installed from
// a local package source: no network beyond the loopback servers this test starts.

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCertificates } from "../helpers/certs.js";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { zip } from "../helpers/wheel.js";

const SECRET = "py-clients-boundary-secret";
const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-pyclients-"));
const wheels = path.join(tmp, "wheels");
const DIST = "/usr/lib/python3/dist-packages";
/** Debian's requests and what it imports, as (distribution, version, package directory). */
const DEBIAN = [
  ["requests", "2.28.1", "requests"],
  ["urllib3", "1.26.12", "urllib3"],
  ["idna", "3.3", "idna"],
  ["certifi", "2022.9.24", "certifi"],
  ["chardet", "5.1.0", "chardet"],
  // Debian's urllib3 imports six rather than its own copy; a module, not a package.
  ["six", "1.16.0", "six.py"],
] as const;
const HAVE_REQUESTS = DEBIAN.every(([, , dir]) =>
  existsSync(path.join(DIST, dir.endsWith(".py") ? dir : `${dir}/__init__.py`)),
);

/** A pure-Python wheel holding one installed package directory or module (no caches). */
function packWheel(name: string, version: string, dir: string): void {
  const files: Record<string, Buffer | string> = {};
  if (dir.endsWith(".py")) files[dir] = readFileSync(path.join(DIST, dir));
  const walk = (at: string, rel: string) => {
    for (const entry of readdirSync(at)) {
      if (entry === "__pycache__") continue;
      const full = path.join(at, entry);
      if (statSync(full).isDirectory()) walk(full, `${rel}/${entry}`);
      else if (!entry.endsWith(".pyc")) files[`${rel}/${entry}`] = readFileSync(full);
    }
  };
  if (!dir.endsWith(".py")) walk(path.join(DIST, dir), dir);
  const info = `${name}-${version}.dist-info`;
  files[`${info}/METADATA`] = `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`;
  files[`${info}/WHEEL`] =
    "Wheel-Version: 1.0\nGenerator: polybox-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n";
  files[`${info}/RECORD`] = "";
  writeFileSync(path.join(wheels, `${name}-${version}-py3-none-any.whl`), zip(files));
}

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function server(secure?: { key: string; cert: string }) {
  const seen: Seen[] = [];
  let connections = 0;
  const handler: http.RequestListener = (req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const url = req.url ?? "/";
      if (url.startsWith("/redirect?to=")) {
        res.writeHead(302, { location: decodeURIComponent(url.slice("/redirect?to=".length)) });
        res.end();
      } else if (url === "/json") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ hello: "world", n: 42 }));
      } else if (url === "/echo-key") {
        // Says whether the key came, never its value (a server that echoes it would leak it).
        res.end(req.headers["x-api-key"] ? "key=present" : "key=none");
      } else if (url === "/missing") {
        res.writeHead(404, "Nope", { "x-served-by": "polybox-test" });
        res.end("not here");
      } else {
        res.setHeader("x-served-by", "polybox-test");
        res.setHeader("set-cookie", "flavour=oat");
        res.end(`${req.method} ${url} ${body}`);
      }
    });
  };
  const s = secure ? https.createServer(secure, handler) : http.createServer(handler);
  s.on("connection", () => {
    connections++;
  });
  return {
    seen,
    get connections() {
      return connections;
    },
    get port() {
      return (s.address() as AddressInfo).port;
    },
    listen: () => new Promise<void>((r) => s.listen(0, "127.0.0.1", r)),
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections?.();
        s.close(() => r());
      }),
  };
}

const web = server();
const refused = server();
let secure: ReturnType<typeof server>;
let rt: Runtime;
let sb: Sandbox;
const base = () => `http://127.0.0.1:${web.port}`;

beforeAll(async () => {
  mkdirSync(wheels);
  if (HAVE_REQUESTS) for (const [name, version, dir] of DEBIAN) packWheel(name, version, dir);
  const certs = makeCertificates(tmp);
  secure = server(certs);
  await Promise.all([web.listen(), refused.listen(), secure.listen()]);
  rt = await testRuntime({
    pool: { python: 1, javascript: 0, bash: 0 },
    pythonPackages: [wheels],
    permissions: { net: [`127.0.0.1:${web.port}`, `127.0.0.1:${secure.port}`] },
    net: {
      ca: certs.ca,
      headers: [{ host: `127.0.0.1:${web.port}`, name: "X-Api-Key", value: SECRET }],
    },
  });
  sb = await Sandbox.create({ runtime: rt });
}, 120_000);

afterAll(async () => {
  await sb?.close();
  await rt?.close();
  await Promise.all([web, refused, secure].map((s) => s?.close()));
  rmSync(tmp, { recursive: true, force: true });
});

describe("http.client", () => {
  it("GET and POST with a body and headers; the response reads, iterates and has headers", async () => {
    const r = await sb.run(
      "python",
      `import http.client, json
c = http.client.HTTPConnection("127.0.0.1", ${web.port}, timeout=10)
c.request("GET", "/get?x=1", headers={"X-Mine": "one"})
g = c.getresponse()
out = [g.status, g.reason, g.getheader("x-served-by"), g.read().decode()]
c.request("POST", "/post", body=json.dumps({"a": 1}), headers={"Content-Type": "application/json"})
p = c.getresponse()
out += [p.status, p.headers["content-type"] is None, p.read(5), p.read()]
c.putrequest("PUT", "/put")
c.putheader("X-Step", "two")
c.putheader("Content-Length", "3")
c.endheaders()
c.send(b"abc")
u = c.getresponse()
out += [b"".join(u).decode(), dict(u.getheaders())["x-served-by"]]
c.request("GET", "/missing")
m = c.getresponse()
out += [m.status, m.reason, m.read()]
c.close()
out`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toBe(
      `[200, 'OK', 'polybox-test', 'GET /get?x=1 ', 200, True, b'POST ', b'/post {"a": 1}', 'PUT /put abc', 'polybox-test', 404, 'Nope', b'not here']`,
    );
    const get = web.seen.find((s) => s.url === "/get?x=1")!;
    expect(get.headers["x-mine"]).toBe("one");
    expect(get.headers["x-api-key"]).toBe(SECRET);
    const post = web.seen.find((s) => s.url === "/post")!;
    expect(post.headers["content-type"]).toBe("application/json");
    expect(web.seen.find((s) => s.url === "/put")!.headers["x-step"]).toBe("two");
    expect(r.network?.map((n) => [n.method, n.status])).toEqual([
      ["GET", 200],
      ["POST", 200],
      ["PUT", 200],
      ["GET", 404],
    ]);
  });

  it("HTTPSConnection, with the CA given to the runtime", async () => {
    const r = await sb.run(
      "python",
      `import http.client, ssl
c = http.client.HTTPSConnection("127.0.0.1", ${secure.port}, context=ssl.create_default_context() if hasattr(ssl, "create_default_context") else None)
c.request("GET", "/tls")
res = c.getresponse()
(res.status, res.read().decode())`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toBe("(200, 'GET /tls ')");
  });

  it("a host that is not granted: the error names the host and the flag; nothing is sent", async () => {
    const before = refused.connections;
    const r = await sb.run(
      "python",
      `import http.client
c = http.client.HTTPConnection("127.0.0.1", ${refused.port})
try:
    c.request("GET", "/x")
    c.getresponse()
except OSError as e:
    print(type(e).__name__, e)`,
    );
    expect(r.stdout).toContain(`network access to 127.0.0.1:${refused.port} is not granted`);
    expect(r.stdout).toContain(`--allow-net=127.0.0.1`);
    expect(refused.connections).toBe(before);
  });
});

describe.runIf(HAVE_REQUESTS)("requests and urllib3 (Debian's 2.28 and 1.26)", () => {
  beforeAll(async () => {
    await sb.installPackages([
      "requests==2.28.1",
      "urllib3==1.26.12",
      "idna==3.3",
      "certifi==2022.9.24",
      "chardet==5.1.0",
      "six==1.16.0",
    ]);
  }, 120_000);

  it("get, post, json, status, headers, cookies, a followed redirect", async () => {
    const r = await sb.run(
      "python",
      `import requests
g = requests.get("${base()}/rq", params={"q": "1"}, headers={"X-Mine": "r"})
p = requests.post("${base()}/rqpost", data={"k": "v"})
j = requests.get("${base()}/json").json()
m = requests.get("${base()}/missing")
d = requests.get("${base()}/redirect?to=%2Flanded")
s = requests.Session()
s.get("${base()}/cookie")
(g.status_code, g.text, g.headers["X-Served-By"], p.text, j["n"], m.status_code, m.ok,
 d.status_code, d.url.endswith("/landed"), [h.status_code for h in d.history],
 s.cookies.get("flavour"))`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toBe(
      "(200, 'GET /rq?q=1 ', 'polybox-test', 'POST /rqpost k=v', 42, 404, False, 200, True, [302], 'oat')",
    );
    expect(web.seen.find((s) => s.url === "/rq?q=1")!.headers["x-mine"]).toBe("r");
  });

  it("urllib3 on its own: PoolManager GET, POST, a redirect, and a refusal as MaxRetryError", async () => {
    const before = refused.connections;
    const r = await sb.run(
      "python",
      `import urllib3
pm = urllib3.PoolManager()
g = pm.request("GET", "${base()}/u3", headers={"X-Mine": "u"})
p = pm.request("POST", "${base()}/u3post", body=b"abc")
d = pm.request("GET", "${base()}/redirect?to=%2Fu3landed")
try:
    pm.request("GET", "http://127.0.0.1:${refused.port}/u3")
    refusal = "reached"
except urllib3.exceptions.MaxRetryError as e:
    refusal = str(e.reason)
(g.status, g.data.decode(), g.headers["X-Served-By"], p.data.decode(), d.status, d.data.decode(), refusal)`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(r.value).toContain(
      "(200, 'GET /u3 ', 'polybox-test', 'POST /u3post abc', 200, 'GET /u3landed ', ",
    );
    expect(r.value).toContain(`127.0.0.1:${refused.port} is not granted`);
    expect(r.value).toContain("--allow-net=127.0.0.1");
    expect(web.seen.find((s) => s.url === "/u3")!.headers["x-mine"]).toBe("u");
    expect(refused.connections).toBe(before);
  });

  it("a redirect to a host that is not granted raises ConnectionError naming the host and the flag", async () => {
    const before = refused.connections;
    const target = encodeURIComponent(`http://127.0.0.1:${refused.port}/stolen`);
    const r = await sb.run(
      "python",
      `import requests
try:
    requests.get("${base()}/redirect?to=${target}")
except requests.exceptions.ConnectionError as e:
    print("ConnectionError", e)`,
    );
    expect(r.stdout).toContain("ConnectionError");
    expect(r.stdout).toContain(`127.0.0.1:${refused.port} is not granted`);
    expect(r.stdout).toContain("--allow-net=127.0.0.1");
    expect(refused.connections).toBe(before);
  });

  it("the --net-header secret reaches the server and nothing the guest can read", async () => {
    const r = await sb.run(
      "python",
      `import requests, os
res = requests.get("${base()}/echo-key")
seen = res.text
visible = " ".join([str(dict(res.headers)), str(dict(res.request.headers)), str(os.environ)])
print(seen, "${SECRET}" in visible)`,
    );
    expect(r.stdout, r.stderr).toBe("key=present False\n");
    expect(web.seen.find((s) => s.url === "/echo-key")!.headers["x-api-key"]).toBe(SECRET);
  });
});
