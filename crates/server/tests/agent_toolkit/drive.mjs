// Drives PostHog's own @posthog/agent-toolkit against a running Burrow, as an agent framework
// would: build the toolkit's context from a personal key, ask which tools it offers, and call
// their handlers directly (no model involved). Prints one JSON object; exits 1 on any failure.
//
// Environment: TOOLKIT_DIR (where the npm package is installed), BURROW_URL, BURROW_KEY.
// Argument: `offered` (only list the tools offered) or `all` (call every tool in turn).
import { createRequire } from "node:module";

const require = createRequire(`${process.env.TOOLKIT_DIR}/`);
const { PostHogAgentToolkit, getToolsFromContext } = require("@posthog/agent-toolkit/tools");

const toolkit = new PostHogAgentToolkit({
  posthogApiToken: process.env.BURROW_KEY,
  posthogApiBaseUrl: process.env.BURROW_URL,
});
const context = toolkit.getContext();
const tools = await getToolsFromContext(context);
const offered = tools.map((tool) => tool.name).sort();

/** Calls one tool's handler and returns its answer, parsed when it is JSON. */
async function call(name, params = {}) {
  const tool = tools.find((candidate) => candidate.name === name);
  if (!tool) throw new Error(`the toolkit did not offer ${name}; it offered ${offered.join(", ")}`);
  const result = await tool.handler(context, params);
  const text = result.content[0].text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function everyTool() {
  const calls = {};
  calls.organizations = await call("organizations-get");
  calls.organization = await call("organization-details-get");
  calls.projects = await call("projects-get");
  const filters = { groups: [{ properties: [], rollout_percentage: 50 }] };
  calls.flagCreated = await call("create-feature-flag", {
    name: "Agent flag", key: "agent-flag", description: "made by an agent", filters, active: true,
  });
  calls.flags = await call("feature-flag-get-all");
  calls.flag = await call("feature-flag-get-definition", { flagKey: "agent-flag" });
  calls.flagUpdated = await call("update-feature-flag", { flagKey: "agent-flag", data: { name: "Renamed by an agent" } });
  calls.flagDeleted = await call("delete-feature-flag", { flagKey: "agent-flag" });
  calls.surveyCreated = await call("survey-create", {
    name: "Agent survey", type: "popover", questions: [{ type: "open", question: "Why?" }],
  });
  const surveyId = calls.surveyCreated.id;
  calls.surveys = await call("surveys-get-all", {});
  calls.survey = await call("survey-get", { surveyId });
  calls.surveyUpdated = await call("survey-update", { surveyId, name: "Renamed survey" });
  calls.surveyDeleted = await call("survey-delete", { surveyId });
  return calls;
}

try {
  const mode = process.argv[2];
  const output = mode === "all" ? { offered, calls: await everyTool() } : { offered };
  console.log(JSON.stringify(output));
} catch (error) {
  console.error(error?.stack ?? String(error));
  process.exit(1);
}
