// Drives `tgp serve` (stdio) with the official MCP TypeScript SDK client,
// which declares the elicitation capability and answers each
// elicitation/create from a scripted queue. Used by mcp_ts_test.go:
//   node client.mjs '<plan JSON>'
// plan: {command, args, env, answers: ["allow_once", "deny", "decline", ...],
//        calls: [{name, arguments}]}
// Prints one JSON object: {results: [CallToolResult...], elicitations: [params...]}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(process.argv[2]);
const client = new Client({ name: "tgp-ts-e2e", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  elicitations.push(request.params);
  const answer = plan.answers.shift();
  if (answer === undefined || answer === "decline") {
    return { action: "decline" };
  }
  return { action: "accept", content: { decision: answer } };
});
const transport = new StdioClientTransport({ command: plan.command, args: plan.args, env: plan.env, stderr: "inherit" });
await client.connect(transport);
const results = [];
for (const call of plan.calls) {
  results.push(await client.callTool({ name: call.name, arguments: call.arguments }));
}
await client.close();
process.stdout.write(JSON.stringify({ results, elicitations }) + "\n");
