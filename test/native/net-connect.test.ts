// Native mode's CONNECT tunnels (docs/security.md, "Egress"): https:// through the jail's proxy
// becomes a tunnel the trusted side opens only to a granted host:port, after resolving the name
// itself and checking every address (loopback only when named literally), and relays as framed
// chunks for the run in progress. The record gets one CONNECT entry per tunnel; a tunnel to a
// host with `--net-header` headers or `--net-secret` secrets ends on the trusted side, which adds
// them; the run's limits bound the bytes; every tunnel closes with its run. The HTTPS server and
// its CA are made here (openssl), and the jailed clients are given the CA explicitly.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeCertificates } from "../helpers/certs.js";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";
import { usable } from "./helpers.js";

const CURL = existsSync("/usr/bin/curl");
const TUNNEL_TOKEN = "tunnel-secret-0a1b2c3d4e";
const REQUESTS = spawnSync("/usr/bin/python3", ["-c", "import requests"]).status === 0;
const NODE_PROXY = Number(process.versions.node.split(".")[0]) >= 24;
const tmp = mkdtempSync(path.join(os.tmpdir(), "polybox-connect-"));

/** An HTTPS server that records paths and counts connections. */
function httpsServer(certs: { key: string; cert: string }) {
  const seen: string[] = [];
  const auth: string[] = [];
  let connections = 0;
  const s = https.createServer(certs, (req, res) => {
    seen.push(req.url ?? "");
    auth.push(req.headers.authorization ?? "none");
    req.resume();
    req.on("end", () => {
      if (req.url?.startsWith("/bytes/")) res.end("x".repeat(Number(req.url.slice(7))));
      else if (req.headers["x-key"] !== undefined)
        res.end(
          `secure ${req.method} ${req.url} key=${req.headers["x-key"]} auth=${req.headers.authorization ?? "none"}`,
        );
      else res.end(`secure ${req.method} ${req.url}`);
    });
  });
  s.on("connection", () => {
    connections++;
  });
  return {
    seen,
    auth,
    get connections() {
      return connections;
    },
    get port() {
      return (s.address() as AddressInfo).port;
    },
    listen: () => new Promise<void>((r) => s.listen(0, "127.0.0.1", r)),
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  };
}

/** A plain TCP server: echoes with a prefix, and notes when each connection closes. */
const closedAt: number[] = [];
const echo = net.createServer((socket) => {
  socket.on("data", (d) => socket.write(`echo:${d.toString()}`));
  socket.on("error", () => undefined);
  socket.on("close", () => closedAt.push(Date.now()));
});

let secure: ReturnType<typeof httpsServer>;
let other: ReturnType<typeof httpsServer>;
let headered: ReturnType<typeof httpsServer>;
let CA = "";
let granted: Runtime;
let limited: Runtime;
let nothing: Runtime;
const echoPort = () => (echo.address() as AddressInfo).port;

/** Bash that writes the CA next to the code, so every client can be pointed at it. */
const withCa = (code: string) => `cat > /workspace/ca.pem <<'PEM'\n${CA}PEM\n${code}`;

/** Python that sends a CONNECT to the jail's proxy itself and prints the answer's first lines. */
const rawConnect = (target: string) => `import os, socket
host, port = os.environ["https_proxy"].rsplit("/", 1)[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=20)
s.sendall(b"CONNECT ${target} HTTP/1.1\\r\\nHost: ${target}\\r\\n\\r\\n")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode().split("\\r\\n")[0])
print(data.decode().split("\\r\\n\\r\\n", 1)[1].strip())`;

describe.runIf(usable)("native mode's CONNECT tunnels", () => {
  beforeAll(async () => {
    const certs = makeCertificates(tmp, "IP:127.0.0.1,DNS:localhost");
    CA = certs.ca;
    secure = httpsServer(certs);
    other = httpsServer(certs);
    headered = httpsServer(certs);
    await Promise.all([
      secure.listen(),
      other.listen(),
      headered.listen(),
      new Promise<void>((r) => echo.listen(0, "127.0.0.1", r)),
    ]);
    const pool = { python: 0, javascript: 0, bash: 0 };
    granted = await testRuntime({
      isolation: "auto",
      pool,
      permissions: {
        net: [
          `127.0.0.1:${secure.port}`,
          `127.0.0.1:${headered.port}`,
          `127.0.0.1:${echoPort()}`,
          `localhost:${other.port}`,
        ],
      },
      net: {
        headers: [{ host: `127.0.0.1:${headered.port}`, name: "X-Key", value: "k" }],
        secrets: [
          { name: "TUNNEL_TOKEN", value: TUNNEL_TOKEN, hosts: [`127.0.0.1:${headered.port}`] },
        ],
        // The trusted side's own connection to the host checks its certificate.
        ca: certs.ca,
      },
    });
    limited = await testRuntime({
      isolation: "auto",
      pool,
      permissions: { net: [`127.0.0.1:${secure.port}`] },
      net: { limits: { maxResponseBytes: 20_000 } },
    });
    nothing = await testRuntime({ isolation: "auto", pool });
  }, 60_000);

  afterAll(async () => {
    await Promise.all([granted?.close(), limited?.close(), nothing?.close()]);
    await Promise.all([secure, other, headered].map((s) => s?.close()));
    echo.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it.runIf(CURL)("curl https:// through the tunnel; the record has one CONNECT entry", async () => {
    await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
    const r = await sb.run(
      "bash",
      withCa(`curl -sS --cacert /workspace/ca.pem https://127.0.0.1:${secure.port}/curl; echo`),
    );
    expect(r.stdout, r.stderr).toBe(`secure GET /curl\n`);
    expect(secure.seen).toContain("/curl");
    expect(r.network).toHaveLength(1);
    const entry = r.network![0]!;
    expect(entry).toMatchObject({
      method: "CONNECT",
      host: `127.0.0.1:${secure.port}`,
      status: 200,
    });
    expect(entry.denied).toBeUndefined();
    // TLS both ways: the handshake alone is more than a kilobyte each way.
    expect(entry.bytesOut).toBeGreaterThan(200);
    expect(entry.bytesIn).toBeGreaterThan(1000);
  });

  it("Python urllib over HTTPS_PROXY, with the CA in SSL_CERT_FILE", async () => {
    await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
    const r = await sb.run(
      "bash",
      withCa(`SSL_CERT_FILE=/workspace/ca.pem /usr/bin/python3 -c '
import urllib.request
print(urllib.request.urlopen("https://127.0.0.1:${secure.port}/urllib").read().decode())'`),
    );
    expect(r.stdout, r.stderr).toBe("secure GET /urllib\n");
    expect(r.network?.map((n) => n.method)).toEqual(["CONNECT"]);
  });

  it.runIf(REQUESTS)("Python requests over HTTPS_PROXY, with REQUESTS_CA_BUNDLE", async () => {
    await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
    const r = await sb.run(
      "bash",
      withCa(`REQUESTS_CA_BUNDLE=/workspace/ca.pem /usr/bin/python3 -c '
import requests
r = requests.post("https://127.0.0.1:${secure.port}/requests", data=b"x")
print(r.status_code, r.text)'`),
    );
    expect(r.stdout, r.stderr).toBe("200 secure POST /requests\n");
  });

  // The jailed Node is the one running the tests: Node 24 reads the proxy variables when
  // NODE_USE_ENV_PROXY=1, which the agent sets; older Nodes ignore both. (A second Node started
  // from bash in the jail does not fit the run's memory limit, so the run is JavaScript.)
  it.runIf(NODE_PROXY)("Node fetch (Node 24, NODE_USE_ENV_PROXY=1 in the jail)", async () => {
    await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
    await sb.files.write("ca.pem", CA);
    const r = await sb.run(
      "javascript",
      `const tls = require("node:tls");
const fs = require("node:fs");
tls.setDefaultCACertificates([...tls.getCACertificates("default"), fs.readFileSync("/workspace/ca.pem", "utf8")]);
console.log(await (await fetch("https://127.0.0.1:${secure.port}/node")).text());`,
    );
    expect(r.stdout, r.stderr).toBe("secure GET /node\n");
    expect(r.network?.[0]).toMatchObject({ method: "CONNECT", status: 200 });
  });

  it("raw bytes both ways through a tunnel to a granted TCP port", async () => {
    await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
    const r = await sb.run(
      "python",
      `import os, socket
host, port = os.environ["https_proxy"].rsplit("/", 1)[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=20)
s.sendall(b"CONNECT 127.0.0.1:${echoPort()} HTTP/1.1\\r\\n\\r\\n")
head = b""
while b"\\r\\n\\r\\n" not in head:
    head += s.recv(1)
print(head.split(b"\\r\\n")[0].decode())
s.sendall(b"hello")
got = b""
while len(got) < len(b"echo:hello"):
    got += s.recv(4096)
print(got.decode())`,
    );
    expect(r.stdout, r.stderr).toBe("HTTP/1.1 200 Connection established\necho:hello\n");
    expect(r.network?.[0]).toMatchObject({ method: "CONNECT", bytesOut: 5, bytesIn: 10 });
  });

  describe("refusals: a 403 from the proxy naming the reason; nothing reaches the target", () => {
    it("a host that is not granted, and a granted host's other port", async () => {
      await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
      const before = other.connections + secure.connections;
      const host = await sb.run("python", rawConnect(`example.invalid:443`));
      expect(host.stdout).toMatch(/^HTTP\/1.1 403 Forbidden\n/);
      expect(host.stdout).toContain(
        "polybox: network access to example.invalid:443 is not granted; the server grants it with --allow-net=example.invalid",
      );
      const port = await sb.run("python", rawConnect(`127.0.0.1:${other.port}`));
      expect(port.stdout).toContain(
        `polybox: network access to 127.0.0.1:${other.port} is not granted`,
      );
      expect(port.network).toEqual([
        expect.objectContaining({
          method: "CONNECT",
          host: `127.0.0.1:${other.port}`,
          status: null,
          bytesOut: 0,
          bytesIn: 0,
          denied: expect.stringContaining("is not granted"),
        }),
      ]);
      expect(other.connections + secure.connections).toBe(before);
    });

    it.runIf(CURL)(
      "a name granted alone does not grant the loopback address it resolves to",
      async () => {
        await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
        const before = other.connections;
        const r = await sb.run(
          "bash",
          withCa(
            `curl -sS --cacert /workspace/ca.pem https://localhost:${other.port}/named; echo "rc=$?"`,
          ),
        );
        expect(r.stderr).toMatch(/CONNECT tunnel failed, response 403/);
        expect(r.stdout).toMatch(/rc=[1-9]/);
        expect(r.network?.[0]?.denied).toContain(
          `localhost resolves to 127.0.0.1, a private, loopback, link-local or metadata address, reachable only when granted literally (--allow-net=127.0.0.1:${other.port})`,
        );
        expect(other.connections).toBe(before);
        expect(other.seen).not.toContain("/named");
      },
    );

    // The tunnel to a host the boundary adds to ends on the trusted side (intercept.ts), which
    // answers as that host with its own authority's certificate (the jail's programs trust it
    // through the bundle the agent writes; no --cacert here) and makes each request itself,
    // verifying the real host against net.ca.
    it.runIf(CURL)(
      "a host with --net-header headers or --net-secret secrets: the tunnel ends on the trusted side, which adds them",
      async () => {
        await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
        const url = `https://127.0.0.1:${headered.port}`;
        const r = await sb.run(
          "bash",
          `curl -sS ${url}/curl; echo
curl -sS -H "Authorization: Bearer $TUNNEL_TOKEN" ${url}/token; echo
curl -sS -o /dev/null -w "%{http_code}\\n" -X TRACE ${url}/trace
curl -sS -o /dev/null -w "%{http_code}\\n" --request-target "https://127.0.0.1:${secure.port}/elsewhere" ${url}/
grep -c "PRIVATE KEY" /tmp/.polybox-ca-bundle.pem /tmp/.polybox-ca.pem || true`,
        );
        const lines = r.stdout.split("\n");
        expect(lines[0]).toBe("secure GET /curl key=k auth=none");
        // The host got the value; the guest's copy of its echo holds the placeholder.
        expect(lines[1]).toMatch(
          /^secure GET \/token key=k auth=Bearer POLYBOX_SECRET_TUNNEL_TOKEN_[0-9a-f]{32}$/,
        );
        expect(headered.auth).toContain(`Bearer ${TUNNEL_TOKEN}`);
        expect(lines[2]).toBe("403");
        // A target naming another host inside this host's tunnel goes nowhere.
        expect(lines[3]).toBe("400");
        expect(secure.seen).not.toContain("/elsewhere");
        // The jail holds the authority's certificate, never its key.
        expect(lines.slice(4, 6)).toEqual([
          "/tmp/.polybox-ca-bundle.pem:0",
          "/tmp/.polybox-ca.pem:0",
        ]);
        expect(JSON.stringify(r)).not.toContain(TUNNEL_TOKEN);
        // One CONNECT, then each request inside it as a request of the run.
        expect(r.network?.map((n) => `${n.method} ${n.status}`)).toEqual([
          "CONNECT 200",
          "GET 200",
          "CONNECT 200",
          "GET 200",
          "CONNECT 200",
          "TRACE null",
          "CONNECT 200",
        ]);
        const py = await sb.run(
          "python",
          `import os, urllib.request
print(urllib.request.urlopen(urllib.request.Request("${url}/py", headers={"Authorization": os.environ["TUNNEL_TOKEN"]})).read().decode().split(" auth=")[0])`,
        );
        expect(py.stdout, py.stderr).toBe("secure GET /py key=k\n");
        expect(headered.auth.at(-1)).toBe(TUNNEL_TOKEN);
      },
    );
  });

  it.runIf(CURL)(
    "maxResponseBytes ends a tunnel that brings more; the record says why",
    async () => {
      await using sb = await Sandbox.create({ runtime: limited, engine: "native" });
      const r = await sb.run(
        "bash",
        withCa(
          `curl -sS --cacert /workspace/ca.pem https://127.0.0.1:${secure.port}/bytes/200000 | wc -c; echo "rc=\${PIPESTATUS[0]}"`,
        ),
      );
      expect(r.stdout).toMatch(/rc=[1-9]/);
      expect(r.network?.[0]?.denied).toBe(
        "the tunnel received more than 20000 bytes (maxResponseBytes)",
      );
    },
  );

  it("a tunnel the guest leaves open closes when its run ends", async () => {
    await using sb = await Sandbox.create({ runtime: granted, engine: "native" });
    const closedBefore = closedAt.length;
    const r = await sb.run(
      "python",
      `import os, socket, time
host, port = os.environ["https_proxy"].rsplit("/", 1)[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), timeout=20)
s.sendall(b"CONNECT 127.0.0.1:${echoPort()} HTTP/1.1\\r\\n\\r\\nping")
print(s.recv(200).decode().split("\\r\\n")[0], flush=True)
time.sleep(60)`,
      { timeoutMs: 4_000 },
    );
    expect(r.status).toBe("timeout");
    expect(r.stdout).toContain("HTTP/1.1 200 Connection established");
    // The trusted side closed the server's connection when the run ended (generous slack).
    for (let i = 0; i < 100 && closedAt.length === closedBefore; i++)
      await new Promise((res) => setTimeout(res, 100));
    expect(closedAt.length).toBe(closedBefore + 1);
  });

  it.runIf(CURL)(
    "nothing granted: no proxy, and an HTTPS listener on the host sees nothing",
    async () => {
      const before = secure.connections;
      await using sb = await Sandbox.create({ runtime: nothing, engine: "native" });
      const r = await sb.run(
        "bash",
        withCa(
          `curl -sS --max-time 5 --cacert /workspace/ca.pem https://127.0.0.1:${secure.port}/none; echo "rc=$?"`,
        ),
      );
      expect(r.stdout).toMatch(/rc=[1-9]/);
      expect(secure.connections).toBe(before);
      expect(r.network ?? []).toEqual([]);
    },
  );
});
