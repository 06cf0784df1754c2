// Unit tests for the CLI's flag parsing (the built dist/cli/args.js): Deno-style permissions,
// limits with units, server options, and the mistakes that must be usage errors.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseArgs, UsageError } from "../../dist/cli/args.js";
import { runtimeOptions, serviceOptions } from "../../dist/cli/options.js";
import { languageOf } from "../../dist/cli/run.js";

describe("parseArgs", () => {
  it("denies everything by default", () => {
    expect(parseArgs(["mcp"])).toEqual({
      command: "mcp",
      flags: {
        allowRead: [],
        allowNet: [],
        denyNet: [],
        netHeaders: [],
        netSecrets: [],
        allowEnv: [],
        pythonPackages: [],
      },
    });
  });

  it("reads --deny-net lists and --net-header, whose value comes from the server's env", () => {
    const { flags } = parseArgs([
      "mcp",
      "--allow-net",
      "--deny-net=evil.example,10.0.0.1:22",
      "--net-header=api.example.com=Authorization:API_TOKEN",
      "--net-header=127.0.0.1:8080=X-Key:KEY",
    ]);
    expect(flags.denyNet).toEqual(["evil.example", "10.0.0.1:22"]);
    expect(flags.netHeaders).toEqual([
      { host: "api.example.com", name: "Authorization", env: "API_TOKEN" },
      { host: "127.0.0.1:8080", name: "X-Key", env: "KEY" },
    ]);
    const options = runtimeOptions(flags, { API_TOKEN: "Bearer t", KEY: "k" });
    expect(options.permissions).toMatchObject({
      net: ["*"],
      denyNet: ["evil.example", "10.0.0.1:22"],
    });
    expect(options.net?.headers).toEqual([
      { host: "api.example.com", name: "Authorization", value: "Bearer t" },
      { host: "127.0.0.1:8080", name: "X-Key", value: "k" },
    ]);
    expect(() => runtimeOptions(flags, { KEY: "k" })).toThrow(
      /--net-header=api.example.com=Authorization:API_TOKEN: the environment variable API_TOKEN is not set/,
    );
    for (const bad of ["api.example.com", "h=Name", "h=Na me:X", "h=N:1X"])
      expect(() => parseArgs(["mcp", `--net-header=${bad}`])).toThrow(/HOST=NAME:ENVVAR/);
  });

  it("reads --net-secret: the value from the server's env var of that name, or given; hosts after the last @; places after /", () => {
    const { flags } = parseArgs([
      "mcp",
      "--allow-net=api.example.com,127.0.0.1:8080",
      "--net-secret=API_TOKEN@api.example.com",
      "--net-secret=KEY=p@ss=word@127.0.0.1:8080,api.example.com/url,body",
    ]);
    expect(flags.netSecrets).toEqual([
      { name: "API_TOKEN", hosts: ["api.example.com"] },
      {
        name: "KEY",
        value: "p@ss=word",
        hosts: ["127.0.0.1:8080", "api.example.com"],
        in: ["headers", "url", "body"],
      },
    ]);
    const options = runtimeOptions(flags, { API_TOKEN: "Bearer t" });
    expect(options.net?.secrets).toEqual([
      { name: "API_TOKEN", value: "Bearer t", hosts: ["api.example.com"] },
      {
        name: "KEY",
        value: "p@ss=word",
        hosts: ["127.0.0.1:8080", "api.example.com"],
        in: ["headers", "url", "body"],
      },
    ]);
    expect(() => runtimeOptions(flags, {})).toThrow(
      /--net-secret=API_TOKEN@api.example.com: the environment variable API_TOKEN is not set/,
    );
    for (const bad of ["api.example.com", "1X@h", "X=v@", "@h"])
      expect(() => parseArgs(["mcp", `--net-secret=${bad}`])).toThrow(/NAME@HOST/);
  });

  it("reads comma lists, repeats, and bare --allow-X as allow-all (as Deno does)", () => {
    const { flags } = parseArgs([
      "serve",
      "--allow-read=/a,/b",
      "--allow-read=/c",
      "--allow-net=pypi.org,127.0.0.1:8080",
      "--allow-env",
    ]);
    expect(flags.allowRead).toEqual(["/a", "/b", "/c"]);
    expect(flags.allowNet).toEqual(["pypi.org", "127.0.0.1:8080"]);
    expect(flags.allowEnv).toEqual(["*"]);
    expect(parseArgs(["mcp", "--allow-read"]).flags.allowRead).toEqual([
      path.parse(process.cwd()).root,
    ]);
    expect(parseArgs(["mcp", "--allow-net"]).flags.allowNet).toEqual(["*"]);
  });

  it("reads the package flags: --cached-only, --pyodide-cdn (or POLYBOX_PYODIDE_CDN), warmup's", () => {
    const { flags } = parseArgs(["mcp", "--cached-only", "--pyodide-cdn=http://127.0.0.1:9/full/"]);
    expect(runtimeOptions(flags)).toMatchObject({
      cachedOnly: true,
      pyodideCdn: "http://127.0.0.1:9/full/",
    });
    expect(runtimeOptions(parseArgs(["mcp"]).flags)).not.toHaveProperty("cachedOnly");
    const fromEnv = parseArgs(["run", "-l", "python", "-e", "1"], {
      POLYBOX_PYODIDE_CDN: "http://mirror.example/pyodide/",
    });
    expect(fromEnv.flags.pyodideCdn).toBe("http://mirror.example/pyodide/");
    const warmup = parseArgs(["warmup", "--python-packages=numpy,./wheels", "--isolation=native"]);
    expect(warmup).toMatchObject({
      command: "warmup",
      flags: { pythonPackages: ["numpy", "./wheels"], isolation: "native" },
    });
    expect(() => parseArgs(["warmup", "--cached-only"])).toThrow(UsageError);
  });

  it("reads the Wasmer flags: --wasmer-registry, --wasmer-download-host, run's --wasmer-package", () => {
    const { flags } = parseArgs([
      "mcp",
      "--wasmer-registry=http://127.0.0.1:9/graphql",
      "--wasmer-download-host=cdn.example,files.example",
    ]);
    expect(runtimeOptions(flags)).toMatchObject({
      wasmerRegistry: "http://127.0.0.1:9/graphql",
      wasmerDownloadHosts: ["cdn.example", "files.example"],
    });
    // The package's command takes FILE's place; `--` gives its arguments, with or without it.
    expect(
      parseArgs(["run", "--wasmer-package", "ns/tool@1.0.0", "ls", "--", "-l", "/"]).flags,
    ).toMatchObject({ wasmerPackage: "ns/tool@1.0.0", file: "ls", args: ["-l", "/"] });
    const entry = parseArgs(["run", "--wasmer-package=ns/tool@1.0.0", "--", "x"]).flags;
    expect(entry).toMatchObject({ wasmerPackage: "ns/tool@1.0.0", args: ["x"] });
    expect(entry.file).toBeUndefined();
    expect(() => parseArgs(["run", "--wasmer-package=ns/t@1.0.0", "-e", "ls"])).toThrow(UsageError);
    expect(() => parseArgs(["run", "--wasmer-package=ns/t@1.0.0", "--lang=python"])).toThrow(
      UsageError,
    );
    expect(() => parseArgs(["mcp", "--wasmer-package=ns/t@1.0.0"])).toThrow(UsageError);
  });

  it("parses limits with units, with = or a separate value", () => {
    const { flags } = parseArgs([
      "mcp",
      "--timeout=300s",
      "--memory",
      "1G",
      "--max-output=64k",
      "--workspace-quota=100M",
      "--max-code=2M",
    ]);
    expect(flags).toMatchObject({
      timeoutMs: 300_000,
      memoryMb: 1024,
      maxOutputBytes: 65_536,
      workspaceQuotaBytes: 100 * 1024 ** 2,
      maxCodeBytes: 2 * 1024 ** 2,
    });
    expect(runtimeOptions(flags)).toMatchObject({
      limits: { timeoutMs: 300_000, memoryMb: 1024 },
      maxLimits: { timeoutMs: 300_000, memoryMb: 1024 },
    });
  });

  it("parses server options", () => {
    const { flags } = parseArgs([
      "serve",
      "--concurrency=3",
      "--max-sandboxes=5",
      "--idle-timeout=30m",
      "--rate-limit=10cpu-s/min",
      "--job-retention=10m",
      "--inline-output=32KiB",
      "--tools=execute_python,read_file",
      "--port=0",
      "--host=0.0.0.0",
      "--token=t",
    ]);
    expect(flags).toMatchObject({
      concurrency: 3,
      maxSandboxes: 5,
      idleTimeoutMs: 1_800_000,
      rateLimit: { cpuMs: 10_000, windowMs: 60_000 },
      jobRetentionMs: 600_000,
      inlineOutputBytes: 32 * 1024,
      tools: ["execute_python", "read_file"],
      port: 0,
      host: "0.0.0.0",
      token: "t",
    });
  });

  it("parses the data directory and its limits, and the maximum lifetime", () => {
    const { flags } = parseArgs([
      "mcp",
      "--data-dir=rel/state",
      "--data-quota=2G",
      "--max-snapshots=3",
      "--snapshot-quota=512M",
      "--max-lifetime=2h",
    ]);
    expect(flags).toMatchObject({
      dataDir: path.resolve("rel/state"),
      dataDirQuotaBytes: 2 * 1024 ** 3,
      maxSnapshotsPerSandbox: 3,
      maxSnapshotBytesPerSandbox: 512 * 1024 ** 2,
      maxLifetimeMs: 7_200_000,
    });
    expect(runtimeOptions(flags)).toMatchObject({
      dataDir: path.resolve("rel/state"),
      dataDirQuotaBytes: 2 * 1024 ** 3,
      maxSnapshotsPerSandbox: 3,
      maxSnapshotBytesPerSandbox: 512 * 1024 ** 2,
    });
    expect(serviceOptions(flags, "mcp")).toMatchObject({
      maxLifetimeMs: 7_200_000,
      recordLive: true,
    });
    expect(() => parseArgs(["run", "--data-dir=x", "a.py"])).toThrow(/does not apply/);
    expect(() => parseArgs(["mcp", "--data-dir="])).toThrow(UsageError);
  });

  it("reads --pool sizes per language and refuses unknown languages", () => {
    expect(parseArgs(["mcp", "--pool=python=2,javascript=4,bash=0"]).flags.pool).toEqual({
      python: 2,
      javascript: 4,
      bash: 0,
    });
    expect(runtimeOptions(parseArgs(["serve", "--pool", "typescript=1"]).flags).pool).toEqual({
      typescript: 1,
    });
    expect(() => parseArgs(["mcp", "--pool=cobol=1"])).toThrow(/unknown language "cobol"/);
    expect(() => parseArgs(["mcp", "--pool=python"])).toThrow(UsageError);
    expect(() => parseArgs(["run", "--pool=python=1", "x.py"])).toThrow(/does not apply/);
  });

  it("takes the token from POLYBOX_TOKEN unless --token is given", () => {
    expect(parseArgs(["serve"], { POLYBOX_TOKEN: "env" }).flags.token).toBe("env");
    expect(parseArgs(["serve", "--token=flag"], { POLYBOX_TOKEN: "env" }).flags.token).toBe("flag");
  });

  it("reads run's FILE, -e and --lang", () => {
    expect(parseArgs(["run", "--timeout=5s", "script.py"]).flags).toMatchObject({
      file: "script.py",
      timeoutMs: 5000,
    });
    expect(parseArgs(["run", "--lang", "bash", "-e", "echo -n hi"]).flags).toMatchObject({
      lang: "bash",
      eval: "echo -n hi",
    });
  });

  it("answers --help and --version anywhere", () => {
    expect(parseArgs([]).command).toBe("help");
    expect(parseArgs(["mcp", "--help"]).command).toBe("help");
    expect(parseArgs(["-V"]).command).toBe("version");
  });

  it.each([
    [["frobnicate"], /unknown command "frobnicate"/],
    [["mcp", "--allow-reed=/x"], /unknown flag --allow-reed/],
    [["mcp", "--timeout=soon"], /--timeout=soon: cannot read "soon" as a duration/],
    [["mcp", "--memory=100"], /memory is counted in MiB/],
    [["mcp", "--concurrency=0"], /--concurrency=0: must be a whole number of at least 1/],
    [["mcp", "--rate-limit=10/min"], /write it as N cpu-s\/min/],
    [["serve", "--port=70000"], /from 0 to 65535/],
    [["mcp", "--port=1"], /--port does not apply to "polybox mcp"/],
    [["run", "--concurrency=2", "x.py"], /--concurrency does not apply to "polybox run"/],
    [["run"], /needs a FILE, or -e CODE/],
    [["run", "a.py", "b.py"], /takes one FILE/],
    [["mcp", "extra"], /unexpected argument "extra"/],
    [["mcp", "--allow-read="], /needs at least one value/],
    [["mcp", "--timeout"], /--timeout needs a value/],
  ])("refuses %j", (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });
});

describe("languageOf", () => {
  it("maps extensions, and --lang wins", () => {
    expect(["a.py", "a.js", "a.mjs", "a.ts", "a.sh"].map((f) => languageOf(f, undefined))).toEqual([
      "python",
      "javascript",
      "javascript",
      "typescript",
      "bash",
    ]);
    expect(languageOf("script", "python")).toBe("python");
    expect(languageOf("a.rb", undefined)).toBe("ruby");
    expect(languageOf("app.wasm", undefined)).toBe("wasm");
    expect(() => languageOf("a.pl", undefined)).toThrow(
      /cannot tell the language of "a.pl".*pass --lang/,
    );
    // -e CODE has no file name to go by.
    expect(() => languageOf(undefined, undefined)).toThrow(
      /^-e CODE needs --lang=L \(one of python, /,
    );
    expect(() => languageOf(undefined, "cobol")).toThrow(
      /unsupported language "cobol"; supported: python, javascript/,
    );
  });
});

describe("polybox CMD --help", () => {
  it("names the command whose help was asked for, and that help is the command's own", async () => {
    const { commandHelp } = await import("../../dist/cli/help.js");
    const { flagCommands } = await import("../../dist/cli/args.js");
    expect(parseArgs(["run", "--help"]).topic).toBe("run");
    expect(parseArgs(["--help"]).topic).toBeUndefined();
    const help = commandHelp("run", flagCommands);
    expect(help).toMatch(/polybox run \[flags\] --lang L -e CODE/);
    expect(help).toMatch(/--eval=CODE/);
    expect(help).not.toMatch(/polybox serve|--port=|--token=/);
    expect(commandHelp("serve", flagCommands)).toMatch(/--allow-host=/);
  });
});
