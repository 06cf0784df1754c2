// Cluster: a node runs routed calls through its own MCP server, in memory, as the caller the
// router vouched for. So a routed call is answered by the very tool code a direct one is (same
// checks, same answer shape, same budget), and the cluster adds routing, not a second API.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Caller } from "../index.js";

/** In-memory clients kept, one per caller; the oldest is closed past this. */
const MAX_CLIENTS = 256;

export class LocalClients {
  private readonly clients = new Map<string, Promise<Client>>();
  private closed = false;

  constructor(private readonly makeServer: (caller: Caller) => McpServer) {}

  get(caller: Caller): Promise<Client> {
    const id = `${caller.owner}\n${caller.scope ?? ""}`;
    const found = this.clients.get(id);
    if (found) {
      // Most recently used last, so eviction takes the least recently used.
      this.clients.delete(id);
      this.clients.set(id, found);
      return found;
    }
    const made = this.connect(caller);
    this.clients.set(id, made);
    made.catch(() => this.clients.delete(id));
    if (this.clients.size > MAX_CLIENTS) {
      const [oldest, client] = this.clients.entries().next().value!;
      this.clients.delete(oldest);
      void client.then((c) => c.close()).catch(() => {});
    }
    return made;
  }

  private async connect(caller: Caller): Promise<Client> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await this.makeServer(caller).connect(serverSide);
    const client = new Client({ name: "polybox-cluster", version: "1" });
    await client.connect(clientSide);
    // Lists the tools once: the client then checks every answer against its output schema.
    await client.listTools();
    return client;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.allSettled(all.map((c) => c.then((client) => client.close())));
  }
}
