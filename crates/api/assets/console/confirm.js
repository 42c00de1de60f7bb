// Asking before an action that changes data: a modal <dialog> (focus kept inside it, Escape
// cancels, focus back where it was after) with Confirm and Cancel, built per question and
// removed once answered.

import { h } from "./dom.js";

let asked = 0;

/** Shows `question` and resolves to whether the person confirmed. */
export function confirmAction({ title, question, confirmLabel }) {
  asked += 1;
  const titleId = `confirm-title-${asked}`;
  const questionId = `confirm-question-${asked}`;
  return new Promise((resolve) => {
    const answer = (confirmed) => () => dialog.close(confirmed ? "confirm" : "cancel");
    const cancel = h("button", { type: "button", class: "secondary", onclick: answer(false),
      "data-testid": "confirm-cancel" }, "Cancel");
    const dialog = h("dialog", {
      class: "confirm", "aria-labelledby": titleId, "aria-describedby": questionId,
      "data-testid": "confirm-dialog",
      // Escape, or close() from a button: either way the dialog answers once, then goes.
      onclose: () => {
        dialog.remove();
        resolve(dialog.returnValue === "confirm");
      },
    },
    h("h2", { id: titleId }, title),
    h("p", { id: questionId }, question),
    h("p", { class: "toolbar actions" },
      cancel,
      h("button", { type: "button", onclick: answer(true), "data-testid": "confirm-ok" }, confirmLabel)));
    document.body.append(dialog);
    dialog.showModal();
    // Cancel first: Enter on an opened dialog does not change anything by accident.
    cancel.focus();
  });
}
