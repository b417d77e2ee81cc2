/**
 * The subcommand table. To add one, write `src/cli/<name>.ts` exporting a
 * `Command` (or a `run<Name>(args, io)` function) and register it below.
 */
import { runController } from "../app/main.js";
import { allSettings, describeSettings } from "../app/settings.js";
import { calibrateCommand } from "./calibrate.js";
import { exitCodes, type CliIo, type Command } from "./io.js";
import { observeCommand } from "./observe.js";
import { planCommand } from "./plan.js";
import { simulateCommand } from "./simulate.js";
import { validateCommand } from "./validate.js";

export const commands: Readonly<Record<string, Command>> = {
  validate: validateCommand,
  plan: planCommand,
  observe: observeCommand,
  controller: {
    summary: "run the control loop (on the elected leader), the admission webhooks and /metrics",
    usage: `usage: mds-scaler controller [flags]\n\nEvery setting is a flag or an environment variable (flags win):\n${describeSettings(allSettings)}\n`,
    run: (args, io) => {
      if (args.includes("--help") || args.includes("-h")) {
        io.stdout(commands["controller"]?.usage ?? "");
        return exitCodes.ok;
      }
      // The composition root reads the environment through loadConfig only.
      return runController(args, process.env, io);
    },
  },
  simulate: simulateCommand,
  calibrate: calibrateCommand,
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(12)}${c.summary}`);
  return ["usage: mds-scaler <command> [flags]", "", "commands:", ...lines, ""].join("\n");
}

/** Runs one command line; returns the exit code. */
export async function runCli(args: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    io.stdout(usage());
    return name === undefined ? exitCodes.usage : exitCodes.ok;
  }
  const command = commands[name];
  if (command === undefined) {
    io.stderr(`unknown command ${JSON.stringify(name)}\n${usage()}`);
    return exitCodes.usage;
  }
  return command.run(rest, io);
}
