// MCP adapter: workspace files — list_files, read_file, write_file, and upload_file (a host file
// copied in; the service allows only paths under the operator's --allow-read grants).

import { z } from "zod";
import { PolyboxError } from "../../index.js";
import { responseBytes } from "../budget.js";
import { result } from "../render.js";
import { argSchemas, decodeBase64 } from "../schemas.js";
import { READS, REPLACES, type ToolContext, type ToolDef, tool } from "../tool.js";

const INLINE_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

const path = z
  .string()
  .describe(
    'Workspace path, relative to /workspace (e.g. "data.csv" or "out/plot.png"); ".." may not leave the workspace',
  );

export function fileTools({ service, caller, maxResponseBytes }: ToolContext): ToolDef[] {
  const a = argSchemas(service.runtime.maxLimits);
  return [
    tool({
      name: "list_files",
      title: "List sandbox files",
      description:
        "List the files and directories in a sandbox's workspace (recursively), with sizes and modification times.",
      input: {
        sandbox_id: a.sandboxId,
        path: path.optional().describe("Directory to list; the whole workspace if omitted"),
      },
      output: {
        files: z.array(
          z.object({
            path: z.string(),
            type: z.enum(["file", "directory"]),
            size: z.number(),
            modified_at: z.string(),
          }),
        ),
      },
      annotations: READS,
      run: async ({ sandbox_id, path: dir }) => {
        const files = (await service.listFiles(caller, sandbox_id, dir)).map((f) => ({
          path: f.path,
          type: f.type,
          size: f.size,
          modified_at: new Date(f.mtimeMs).toISOString(),
        }));
        const text =
          files.length === 0
            ? "(no files)"
            : files
                .map((f) => (f.type === "directory" ? `${f.path}/` : `${f.path}  ${f.size} bytes`))
                .join("\n");
        return result({ files }, text);
      },
    }),
    tool({
      name: "read_file",
      title: "Read a sandbox file",
      description:
        "Read a file from a sandbox's workspace. Text comes back as text (encoding utf8); binary files as base64 with their mime type; PNG, JPEG, GIF and WebP images are also attached as images.",
      input: { sandbox_id: a.sandboxId, path },
      output: {
        path: z.string(),
        size: z.number(),
        mime_type: z.string(),
        encoding: z.enum(["utf8", "base64"]),
        content: z.string(),
      },
      annotations: READS,
      run: async ({ sandbox_id, path: p }) => {
        const file = await service.readFile(caller, sandbox_id, p);
        const head = `${file.path} (${file.mimeType}, ${file.size} bytes)`;
        if (file.text !== null) {
          const bare = responseBytes({
            content: [{ type: "text", text: head }],
            structuredContent: { content: file.text },
          });
          if (bare > maxResponseBytes) {
            throw new PolyboxError(
              "INVALID_ARGUMENT",
              `${file.path} is ${file.size} bytes, over the response limit of ${maxResponseBytes} bytes (--max-response) for one answer; read parts of it inside the sandbox (head, tail, sed -n) instead`,
            );
          }
          return result(
            {
              path: file.path,
              size: file.size,
              mime_type: file.mimeType,
              encoding: "utf8" as const,
              content: file.text,
            },
            `--- ${head} ---\n${file.text}`,
          );
        }
        const data = Buffer.from(file.bytes).toString("base64");
        const structured = {
          path: file.path,
          size: file.size,
          mime_type: file.mimeType,
          encoding: "base64" as const,
          content: data,
        };
        // The content itself must fit: a cut base64 string would be a corrupt file, not a file.
        const bare = responseBytes({
          content: [{ type: "text", text: head }],
          structuredContent: structured,
        });
        if (bare > maxResponseBytes) {
          throw new PolyboxError(
            "INVALID_ARGUMENT",
            `${file.path} is ${file.size} bytes, ${bare} bytes as base64 in an answer, over the response limit of ${maxResponseBytes} bytes (--max-response); process it inside the sandbox, or split it (e.g. split -b) and read the parts`,
          );
        }
        if (INLINE_IMAGES.has(file.mimeType)) {
          return result(structured, `${head}: image attached`, [
            { type: "image", data, mimeType: file.mimeType },
          ]);
        }
        return result(structured, `${head}, binary, base64:\n${data}`);
      },
    }),
    tool({
      name: "write_file",
      title: "Write a sandbox file",
      description:
        "Create or overwrite a file in a sandbox's workspace (parent directories are created). content is text, or base64 with encoding: base64 for binary data.",
      input: {
        sandbox_id: a.sandboxId,
        path,
        content: z.string().describe("The file's content"),
        encoding: z
          .enum(["utf8", "base64"])
          .optional()
          .describe("How content is encoded: utf8 (default) or base64"),
      },
      output: { path: z.string(), size: z.number() },
      // Overwrites a file of the same path; the same content twice leaves the same file.
      annotations: REPLACES,
      run: async ({ sandbox_id, path: p, content, encoding }) => {
        const data: string | Uint8Array =
          encoding === "base64"
            ? decodeBase64(
                content,
                "content (encoding base64; send text with encoding utf8 instead)",
              )
            : content;
        const written = await service.writeFile(caller, sandbox_id, p, data);
        return result(written, `wrote ${written.path} (${written.size} bytes)`);
      },
    }),
    tool({
      name: "upload_file",
      title: "Upload a host file",
      description:
        "Copy a file from the server's machine into a sandbox's workspace. Only files under directories the operator granted with --allow-read are readable; anything else is refused.",
      input: {
        sandbox_id: a.sandboxId,
        local_path: z.string().describe("Absolute path of the file on the server's machine"),
        path: path.optional().describe("Destination in the workspace; defaults to the file's name"),
      },
      output: { path: z.string(), size: z.number() },
      // As write_file: the copy replaces a workspace file of the same path. It reads only the
      // server's own disk, never the network.
      annotations: REPLACES,
      run: async ({ sandbox_id, local_path, path: dest }) => {
        const copied = await service.uploadFile(caller, sandbox_id, local_path, dest);
        return result(copied, `uploaded ${local_path} to ${copied.path} (${copied.size} bytes)`);
      },
    }),
  ];
}
