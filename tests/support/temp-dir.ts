import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** A fresh directory under the system's temporary directory, its name starting with `prefix`. */
export const tempDir = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), prefix));
