import * as z from "zod";
import { type Tool, tool } from "../tool";
import { ASK_USER_RULE } from "./approval-round";
import { MAX_HELD_TEXT_CHARS } from "./held-calls";

/**
 * The built-in question tool (the agent's `approvals.askUser` option): the model asks the
 * user a clarifying question, optionally with choices; the task waits `input-required`,
 * and the user's answer is the call's result. It is never run, only answered.
 */
export const askUserTool: Tool = tool({
  description:
    "Ask the user a clarifying question when you cannot go on without their answer. Optionally offer choices. Their answer is this call's result.",
  input: z.object({
    question: z.string().min(1).max(MAX_HELD_TEXT_CHARS),
    choices: z.array(z.string().min(1).max(200)).max(10).optional(),
  }),
  approval: ASK_USER_RULE,
  run: () => {
    throw new Error("ask_user is answered by the user, never run");
  },
});
