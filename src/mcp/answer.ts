// MCP adapter: the type of a tool's answer, derived from the tool's one output shape (tool.ts).

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";

/**
 * What a tool's answer holds for programs, derived from the tool's one output shape: the same
 * zod object is the `outputSchema` clients validate against and the type its renderer must
 * produce, so a renderer that drifts from the schema does not compile.
 */
export type StructuredOf<O extends z.ZodRawShape> = z.input<z.ZodObject<O>>;

/** A tool's answer: content for the model, and structured content of the tool's output shape. */
export interface Answer<T> extends CallToolResult {
  structuredContent: T & Record<string, unknown>;
}
