// Trusted side: what kind of file a workspace file is, so that a reader can be given text as text
// and anything else as base64 with a mime type. Decided from the bytes first (PNG and friends
// have magic numbers; text is valid UTF-8 without NULs) and the extension second.

const MAGIC: [number[], string][] = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "image/png"],
  [[0xff, 0xd8, 0xff], "image/jpeg"],
  [[0x47, 0x49, 0x46, 0x38], "image/gif"],
  [[0x25, 0x50, 0x44, 0x46, 0x2d], "application/pdf"],
  [[0x50, 0x4b, 0x03, 0x04], "application/zip"],
  [[0x1f, 0x8b], "application/gzip"],
  [[0x00, 0x61, 0x73, 0x6d], "application/wasm"],
];

const BY_EXTENSION: Record<string, string> = {
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  json: "application/json",
  html: "text/html",
  htm: "text/html",
  xml: "application/xml",
  svg: "image/svg+xml",
  py: "text/x-python",
  js: "text/javascript",
  mjs: "text/javascript",
  ts: "text/typescript",
  sh: "application/x-sh",
  yaml: "application/yaml",
  yml: "application/yaml",
  css: "text/css",
  webp: "image/webp",
};

/** The file's mime type and, when it is text, its text. */
export function sniff(path: string, bytes: Uint8Array): { mimeType: string; text: string | null } {
  for (const [magic, mimeType] of MAGIC) {
    if (magic.every((b, i) => bytes[i] === b)) return { mimeType, text: null };
  }
  if (bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[8] === 0x57 && bytes[9] === 0x45) {
    return { mimeType: "image/webp", text: null };
  }
  const dot = path.lastIndexOf(".");
  const ext = dot < 0 ? "" : path.slice(dot + 1).toLowerCase();
  const text = decodeText(bytes);
  // Own keys only: a guest may name a file `x.constructor`.
  const byExt = Object.hasOwn(BY_EXTENSION, ext) ? BY_EXTENSION[ext] : undefined;
  if (text !== null) return { mimeType: byExt ?? "text/plain", text };
  return {
    mimeType: byExt && !byExt.startsWith("text/") ? byExt : "application/octet-stream",
    text: null,
  };
}

function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
