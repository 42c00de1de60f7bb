// Launching a draft survey and stopping a running one from its page, as PostHog's console does:
// each asks first, then POSTs …/launch/ or …/stop/ and hands the survey the API answered to the
// page. Only for keys with survey:write; an archived survey gets neither (the API refuses both
// until it is unarchived), nor does a stopped one.

import { post } from "./api.js";
import { confirmAction } from "./confirm.js";
import { allows, fill, h, problem } from "./dom.js";
import { status } from "./surveys.js";

/** What each state offers: the API's action, the button and the question asked first. */
const ACTIONS = {
  draft: {
    path: "launch",
    label: "Launch",
    title: "Launch this survey?",
    question: (name) => `“${name}” starts now: people it targets will be shown it.`,
    done: "The survey was launched.",
  },
  running: {
    path: "stop",
    label: "Stop",
    title: "Stop this survey?",
    question: (name) => `“${name}” ends now: nobody will be shown it any more. Its responses stay.`,
    done: "The survey was stopped.",
  },
};

/** The Launch or Stop button for `survey` (null when none applies), with where a refusal is
 * shown. `onChange(survey, message)` gets the survey as the API answered it. */
export function lifecycleControls(survey, { base, scopes, onChange }) {
  const action = ACTIONS[status(survey)];
  if (!action || !allows(scopes, "survey:write")) return null;
  const refusal = h("div", { "aria-live": "polite" });
  const button = h("button", {
    type: "button", "data-testid": `${action.path}-survey`,
    onclick: async () => {
      const confirmed = await confirmAction({
        title: action.title, question: action.question(survey.name), confirmLabel: action.label,
      });
      if (!confirmed) return;
      button.disabled = true;
      try {
        onChange(await post(`${base}/${action.path}/`), action.done);
      } catch (error) {
        button.disabled = false;
        fill(refusal, problem(error));
      }
    },
  }, action.label);
  return h("div", { class: "lifecycle" }, h("p", { class: "toolbar" }, button), refusal);
}
