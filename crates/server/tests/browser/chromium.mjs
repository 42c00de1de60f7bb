// What the browser drivers share: finding the Chromium binary they are given by name.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** `name` as the shell finds it on PATH (playwright wants a path). */
export function onPath(name) {
  if (name.includes("/")) return name;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  throw new Error(`${name} is not on PATH (apt-get install chromium, or set BURROW_CHROMIUM)`);
}
