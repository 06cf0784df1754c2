// The one table of the languages polybox runs. Everything that names languages — the CLI's help
// and --lang, file extensions, the MCP schemas and instructions, warm pools, doctor, the engines
// a host boots — reads it here, so adding a language is one entry (the compiler then points at
// every Record<Language, …> that needs it).

export const LANGUAGES = [
  "python",
  "javascript",
  "typescript",
  "bash",
  "ruby",
  "wasm",
  "wasix",
] as const;
export type Language = (typeof LANGUAGES)[number];

export interface LanguageInfo {
  /** The name people write. */
  title: string;
  /** What runs it in the WebAssembly engine host. */
  engine: string;
  /** File extensions `polybox run FILE` recognises, lower case with the dot. */
  extensions: readonly string[];
  /** Other names `--lang` accepts. */
  aliases: readonly string[];
  /** What a run's `value` holds. */
  value: string;
  /** The machine's interpreter native mode runs it with, or null: WebAssembly engines only. */
  native: "python" | "bash" | "node" | null;
}

export const LANGUAGE_INFO = {
  python: {
    title: "Python",
    engine: "Pyodide (CPython compiled to WebAssembly)",
    extensions: [".py"],
    aliases: ["py", "python3"],
    value: "repr() of the last expression",
    native: "python",
  },
  javascript: {
    title: "JavaScript",
    engine: "QuickJS (quickjs-emscripten)",
    extensions: [".js", ".mjs", ".cjs"],
    aliases: ["js", "node"],
    value: "inspection of the last expression",
    native: "node",
  },
  typescript: {
    title: "TypeScript",
    engine: "QuickJS, types stripped by amaro",
    extensions: [".ts", ".mts", ".cts"],
    aliases: ["ts"],
    value: "inspection of the last expression",
    native: "node",
  },
  bash: {
    title: "Bash",
    engine: "just-bash (Bash and coreutils in TypeScript)",
    extensions: [".sh", ".bash"],
    aliases: ["sh", "shell"],
    value: "none",
    native: "bash",
  },
  ruby: {
    title: "Ruby",
    engine: "CRuby 3.4 (ruby.wasm, WASI)",
    extensions: [".rb"],
    aliases: ["rb"],
    value: "inspect of the last expression",
    native: null,
  },
  wasm: {
    title: "WebAssembly",
    engine: "WASI preview 1 modules (code is the module's workspace path)",
    extensions: [".wasm"],
    aliases: ["wasi"],
    value: "none",
    native: null,
  },
  wasix: {
    title: "WASIX",
    engine: "@wasmer/sdk (WASIX and WASI modules; code is the module's workspace path)",
    extensions: [],
    aliases: ["wasmer"],
    value: "none",
    native: null,
  },
} as const satisfies Record<Language, LanguageInfo>;

/** Languages whose `code` names a module in the workspace (and whose runs take `args`). */
export const MODULE_LANGUAGES: readonly Language[] = ["wasm", "wasix"];

export function takesModule(language: Language): boolean {
  return MODULE_LANGUAGES.includes(language);
}

/** Languages only the WebAssembly engines run (native mode has no interpreter for them). */
export type WasmOnlyLanguage = {
  [L in Language]: (typeof LANGUAGE_INFO)[L]["native"] extends null ? L : never;
}[Language];

/** Languages only the WebAssembly engines run (native mode has no interpreter for them). */
export const WASM_ONLY_LANGUAGES: readonly Language[] = LANGUAGES.filter(
  (l) => LANGUAGE_INFO[l].native === null,
);

export function isLanguage(name: unknown): name is Language {
  return typeof name === "string" && (LANGUAGES as readonly string[]).includes(name);
}

/** A language by its name or one of its aliases (any case), or undefined. */
export function languageNamed(name: string): Language | undefined {
  const wanted = name.toLowerCase();
  if (isLanguage(wanted)) return wanted;
  return LANGUAGES.find((l) => (LANGUAGE_INFO[l].aliases as readonly string[]).includes(wanted));
}

/** The language of a file by its extension (`.py` → python), or undefined. */
export function languageOfExtension(extension: string): Language | undefined {
  const wanted = extension.toLowerCase();
  return LANGUAGES.find((l) => (LANGUAGE_INFO[l].extensions as readonly string[]).includes(wanted));
}

/** "Python, JavaScript, TypeScript, Bash, Ruby and WebAssembly". */
export function languageTitles(): string {
  const titles = LANGUAGES.map((l) => LANGUAGE_INFO[l].title);
  return `${titles.slice(0, -1).join(", ")} and ${titles.at(-1)}`;
}

/** ".py .js .mjs …": every extension `polybox run` recognises. */
export function knownExtensions(): string {
  return LANGUAGES.flatMap((l) => LANGUAGE_INFO[l].extensions).join(" ");
}
