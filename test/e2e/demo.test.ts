import { describe, expect, it } from "vitest";
import { MESSAGE_TYPES } from "../../src/messages/schemas.js";
import { SCHEME_NAMES } from "../../src/signing/schemes.js";
import { jsonEvents, runInProcess } from "../helpers/run-cli.js";

describe("webhook-cli demo", () => {
  it("sends all seven types signed to its own receiver and shows each verified; exit 0", async () => {
    const result = await runInProcess(["demo"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(/^Listening on http:\/\/127\.0\.0\.1:\d+ /);
    const verified = lines.filter((line) => line.startsWith("✓ verified"));
    expect(verified.map((line) => /POST \/webhook {2}(\w+) /.exec(line)?.[1])).toEqual([...MESSAGE_TYPES]);
    for (const line of verified) expect(line).toContain("signature ok");
    expect(result.stdout).toContain("All 7 message types arrived and verified");
  });

  it("--json: one request event per type, each verified, and a summary", async () => {
    const result = await runInProcess(["demo", "--json", "--alias-keys", "camel"]);
    expect(result.code).toBe(0);
    const events = jsonEvents(result.stdout);
    expect(events[0]).toMatchObject({ event: "listening" });
    const requests = events.filter((e) => e["event"] === "request");
    expect(requests.map((e) => e["type"])).toEqual([...MESSAGE_TYPES]);
    for (const e of requests) expect(e).toMatchObject({ signatureValid: true, shapeErrors: [], status: 200, verified: true });
    expect(events.at(-1)).toEqual({ event: "summary", sent: 7, verified: 7, exitCode: 0 });
  });

  it.each(SCHEME_NAMES.filter((scheme) => scheme !== "default"))(
    "--scheme %s: signed and verified by that scheme, and the next steps name it",
    async (scheme) => {
      const result = await runInProcess(["demo", "--scheme", scheme]);
      expect(result, result.stderr).toMatchObject({ code: 0, stderr: "" });
      const verified = result.stdout.split("\n").filter((line) => line.startsWith("✓ verified"));
      expect(verified).toHaveLength(MESSAGE_TYPES.length);
      for (const line of verified) expect(line).toContain(`signature ok (${scheme}`);
      expect(result.stdout).toContain(`All 7 message types arrived and verified (${scheme} signatures`);
      expect(result.stdout).toMatch(new RegExp(`listen --scheme ${scheme}\\n.*send --type track --url http://127\\.0\\.0\\.1:8080/hook --scheme ${scheme}`));
    },
  );
});
