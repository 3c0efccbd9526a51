import { spawn, spawnSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { BIN, collect, waitForLine } from "../helpers/cli.js";
import { runInProcess } from "../helpers/run-cli.js";
import { closeServersAfterEach, killChildrenAfterEach } from "../helpers/setup.js";

const SECRET = "e2e-keys-secret";
// util-linux `script` gives listen a real terminal on stdin; without it there is nothing to press keys on.
const hasScript = spawnSync("script", ["--version"]).status === 0;
const { server } = closeServersAfterEach();
const children = killChildrenAfterEach();

describe.skipIf(!hasScript)("listen on a terminal", { tags: ["smoke"] }, () => {
  it("r resends the latest request to the forward target; Ctrl-C stops with the summary", async () => {
    const app = await server();
    const command = [process.execPath, BIN, "listen", "--port", "0", "--secret", SECRET, "--forward-to", app.url].map((arg) => `'${arg}'`).join(" ");
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      env: { ...process.env, NO_COLOR: "1", WEBHOOK_SECRET: "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    const done = collect(child, 30_000);
    const [, url] = await waitForLine(child, /Listening on (\S+)\s[\s\S]*Press r to resend/, 15_000);
    expect((await runInProcess(["send", "--type", "track", "--url", url as string, "--secret", SECRET])).code).toBe(0);
    await expect.poll(() => app.requests.length).toBe(1);
    child.stdin.write("r");
    await waitForLine(child, /↻ R1 resend of #1 → \S+ {2}200/);
    expect(app.requests).toHaveLength(2);
    expect(app.requests[1]?.body.equals(app.requests[0]?.body ?? Buffer.alloc(0))).toBe(true);
    expect(app.requests[1]?.headers["x-signature"]).toBe(
      createHmac("sha1", SECRET)
        .update(app.requests[1]?.body ?? "")
        .digest("hex"),
    );
    // Again: the resent row does not push the latest request out.
    child.stdin.write("r");
    await waitForLine(child, /↻ R2 resend of #1 → \S+ {2}200/);
    expect(app.requests).toHaveLength(3);
    child.stdin.write("\u0003");
    const result = await done;
    expect(result.stdout).toContain("Summary: 1 request, 1 valid, 0 invalid");
    expect(result.code).toBe(0);
  });
});
