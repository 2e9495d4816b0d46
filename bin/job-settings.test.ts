import { describe, expect, it } from "vitest";
import { ConfigError } from "../core/config.js";
import { DEFAULT_JOB_MAX_IN_FLIGHT, jobSettingsFromEnv } from "./job-settings.js";

describe("jobSettingsFromEnv", () => {
  it("defaults, and reads DOCVERIFY_JOB_MAX_IN_FLIGHT", () => {
    expect(jobSettingsFromEnv({})).toEqual({ maxInFlight: DEFAULT_JOB_MAX_IN_FLIGHT });
    expect(jobSettingsFromEnv({ DOCVERIFY_JOB_MAX_IN_FLIGHT: "3" })).toEqual({ maxInFlight: 3 });
  });

  it("refuses a value that is not a whole number ≥ 1, naming the variable", () => {
    for (const bad of ["0", "-2", "2.5", "many"]) {
      expect(() => jobSettingsFromEnv({ DOCVERIFY_JOB_MAX_IN_FLIGHT: bad })).toThrow(ConfigError);
      expect(() => jobSettingsFromEnv({ DOCVERIFY_JOB_MAX_IN_FLIGHT: bad })).toThrow(
        /DOCVERIFY_JOB_MAX_IN_FLIGHT/,
      );
    }
  });
});
