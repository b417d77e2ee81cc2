/**
 * Trace files in the public formats a user brings, told apart by content; every bad row refused by line,
 * field and value. The rows are in each format's published shape (research/traces.md); the real Azure
 * and Mooncake files are read whole in test/sim/quality/traces.test.ts.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseTrace } from "../../../src/sim/engines/trace-formats.js";
import { loadTrace } from "../../../src/sim/quality/traces.js";

const times = (text: string, path = "t"): number[] => parseTrace(text, path).rows.map((r) => r.offsetSeconds);

describe("trace formats", () => {
  it("reads Azure 2024's zoned six-digit timestamps as 2023's, to the millisecond", () => {
    const parsed = parseTrace(
      [
        "TIMESTAMP,ContextTokens,GeneratedTokens",
        "2024-05-10 00:00:00.009930+00:00,4808,10",
        "2024-05-10 00:00:01.250000+00:00,3180,8",
        "2024-05-10 02:00:01.250000+02:00,100,1",
      ].join("\n"),
      "azure-2024.csv",
    );
    expect(parsed.format).toBe("azure");
    // The third row is 00:00:01.250 UTC written in +02:00: the same instant as the second.
    expect(parsed.rows.map((r) => r.offsetSeconds)).toEqual([0, 1.241, 1.241]);
    expect(parsed.rows.map((r) => r.promptTokens)).toEqual([4808, 3180, 100]);
  });

  it("reads Azure 2025 multimodal rows, saying the images are not modelled", () => {
    const parsed = parseTrace(
      "TIMESTAMP,NumImages,ContextTokens,GeneratedTokens\n2024-10-15 00:00:00.000000+00:00,2,900,50\n",
      "mm.csv",
    );
    expect(parsed.format).toBe("azure-multimodal");
    expect(parsed.rows).toEqual([{ offsetSeconds: 0, promptTokens: 900, outputTokens: 50 }]);
    expect(parsed.notes.join(" ")).toMatch(/NumImages not modelled/);
  });

  it("reads BurstGPT's six and eight columns, rebased to the first request, its whole seconds quantised", () => {
    const six = parseTrace(
      [
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type",
        "5270414,ChatGPT,472,18,490,Conversation log",
        "5270414,GPT-4,1087,230,1317,Conversation log",
        "5270420,ChatGPT,300,0,300,API log",
      ].join("\n"),
      "BurstGPT_2.csv",
    );
    expect(six.format).toBe("burstgpt");
    expect(six.quantised).toBe(true);
    expect(six.rows.map((r) => [r.offsetSeconds, r.promptTokens, r.outputTokens])).toEqual([
      [0, 472, 18],
      [0, 1087, 230],
      [6, 300, 0],
    ]);
    expect(six.notes.join(" ")).toMatch(/1 rows with 0 response tokens/);
    const eight = parseTrace(
      "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n" +
        "12,5b1c,3.5,ChatGPT,40,20,60,Conversation log\n",
      "BurstGPT_3.csv",
    );
    expect(eight.rows).toEqual([{ offsetSeconds: 0, promptTokens: 40, outputTokens: 20 }]);
  });

  it("reads Vidur's Splitwise CSV and the plain format, sorting rows into arrival order", () => {
    expect(times("arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,10,2\n2.25,20,3\n")).toEqual([0, 1.75]);
    const plain = parseTrace("arrival_seconds,prompt_tokens,output_tokens\n3,30,3\n1,10,1\n2,20,2\n", "p.csv");
    expect(plain.format).toBe("plain");
    expect(plain.rows.map((r) => [r.offsetSeconds, r.promptTokens])).toEqual([
      [0, 10],
      [1, 20],
      [2, 30],
    ]);
    // Extra columns and a quoted cell with a comma are fine.
    expect(times('prompt_tokens,note,arrival_seconds,output_tokens\n10,"a, b",7,1\n')).toEqual([0]);
  });

  it("tells Qwen Bailian's JSONL (seconds, 16-token blocks) from Mooncake's (milliseconds, 512)", () => {
    const bailian = parseTrace(
      '{"chat_id": 1, "parent_chat_id": -1, "timestamp": 61.5, "input_length": 40, "output_length": 9, "type": "text", "turn": 1, "hash_ids": [1, 2, 3]}\n' +
        '{"chat_id": 2, "parent_chat_id": 1, "timestamp": 64.0, "input_length": 60, "output_length": 5, "type": "text", "turn": 2, "hash_ids": [1, 2, 3, 4]}\n',
      "qwen_traceA_blksz_16.jsonl",
    );
    expect(bailian.format).toBe("qwen-bailian");
    expect(bailian.rows.map((r) => [r.offsetSeconds, r.blockTokens])).toEqual([
      [0, 16],
      [2.5, 16],
    ]);
    expect(
      parseTrace(
        '{"chat_id": 1, "timestamp": 1, "input_length": 1, "output_length": 1, "hash_ids": [1]}',
        "qwen_coder_blksz_32.jsonl",
      ).rows[0]?.blockTokens,
    ).toBe(32);
    const mooncake = parseTrace(
      '{"timestamp": 3000, "input_length": 7, "output_length": 2, "hash_ids": [5]}\n',
      "m.jsonl",
    );
    expect(mooncake.format).toBe("mooncake");
    expect(mooncake.quantised).toBe(true);
    expect(mooncake.rows[0]?.blockTokens).toBe(512);
  });

  it("refuses a bad row by line, field and value, skipping none", () => {
    expect(() =>
      parseTrace(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n16/11/2023,1,1\n",
        "a.csv",
      ),
    ).toThrow(/a\.csv: line 3: TIMESTAMP must be a time such as .*, got "16\/11\/2023"/);
    expect(() => parseTrace("arrival_seconds,prompt_tokens,output_tokens\n1,-4,1\n", "p.csv")).toThrow(
      /p\.csv: line 2: prompt_tokens must be a whole number of tokens, got "-4"/,
    );
    expect(() => parseTrace("arrival_seconds,prompt_tokens,output_tokens\n1,4\n", "p.csv")).toThrow(
      /p\.csv: line 2: 2 cells where the header has 3/,
    );
    expect(() =>
      parseTrace('{"timestamp": 1, "input_length": 2, "output_length": 1}\n{"timestamp": 2,', "m.jsonl"),
    ).toThrow(/m\.jsonl: line 2: not JSON/);
    expect(() => parseTrace('{"timestamp": "1", "input_length": 2, "output_length": 1}', "m.jsonl")).toThrow(
      /m\.jsonl: line 1: timestamp must be a non-negative number, got "1"/,
    );
    expect(() => parseTrace("time,a,b\n1,2,3\n", "bad.csv")).toThrow(
      /bad\.csv: line 1: the header "time,a,b" is no trace format read here: .*BurstGPT/,
    );
    expect(() => parseTrace("\n\n", "empty.csv")).toThrow(/empty\.csv: no requests in the trace/);
    expect(() => parseTrace("arrival_seconds,prompt_tokens,output_tokens\n", "h.csv")).toThrow(/h\.csv: no requests/);
  });

  it("reads bytes line by line as it reads text, CRLF and blank lines included, numbering lines as an editor does", () => {
    const text = "\r\narrival_seconds,prompt_tokens,output_tokens\r\n0,1,1\r\n\r\n2.5,4,2\r\n";
    expect(parseTrace(Buffer.from(text), "b.csv")).toEqual(parseTrace(text, "b.csv"));
    expect(parseTrace(Buffer.from(text), "b.csv").rows.map((r) => r.offsetSeconds)).toEqual([0, 2.5]);
    expect(() => parseTrace(Buffer.from(`${text}x,1,1\r\n`), "b.csv")).toThrow(/b\.csv: line 6: arrival_seconds/);
  });

  it("loads a gzipped file by content whatever its name, and says how it was read", () => {
    const dir = mkdtempSync(join(tmpdir(), "mds-trace-formats-"));
    const file = join(dir, "burst.data.gz");
    writeFileSync(
      file,
      gzipSync(
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n10,ChatGPT,5,5,10,x\n10,ChatGPT,6,6,12,x\n12,ChatGPT,7,7,14,x\n",
      ),
    );
    const trace = loadTrace(file);
    // Whole seconds spread within their step, as Mooncake's: two requests at 0 over the 2 s to the next.
    expect(trace.requests.map((r) => r.arrivalSeconds)).toEqual([0.5, 1.5, 3]);
    expect(trace.notes).toEqual(["read as BurstGPT CSV", "quantised timestamps spread evenly within their step"]);
  });
});
