import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { estimateTokens, messagesJson, toJson, toolNames, wellFormedJson } from "../src/sanitize.ts";

describe("toJson", () => {
  test("drops functions, symbols, undefined and signals; keeps data", () => {
    const value = {
      a: 1,
      b: "x",
      c: null,
      d: true,
      fn: () => 1,
      sym: Symbol("s"),
      undef: undefined,
      signal: new AbortController().signal,
      nested: { llm: { complete: async () => "" }, keep: [1, "two"] },
    };
    assert.deepEqual(toJson(value), { a: 1, b: "x", c: null, d: true, nested: { llm: {}, keep: [1, "two"] } });
  });

  test("Sets become sorted arrays, Maps objects, Dates ISO strings", () => {
    const date = new Date(Date.UTC(2026, 10, 23, 6, 41));
    assert.deepEqual(toJson({ s: new Set(["write", "exec", "read"]), m: new Map([["k", 1]]), t: date }), {
      s: ["exec", "read", "write"],
      m: { k: 1 },
      t: "2026-11-23T06:41:00.000Z",
    });
  });

  test("numbers that JSON cannot hold, bigints, cycles and array holes", () => {
    const cyclic: Record<string, unknown> = { name: "a" };
    cyclic.self = cyclic;
    assert.deepEqual(toJson({ n: Number.NaN, i: Number.POSITIVE_INFINITY, big: 12n, cyclic }), {
      n: null,
      i: null,
      big: 12,
      cyclic: { name: "a" },
    });
    assert.deepEqual(toJson([1, undefined, () => 2, "x"]), [1, null, null, "x"]);
    assert.equal(toJson(2n ** 70n), "1180591620717411303424");
  });

  test("a shared (non-cyclic) object is kept everywhere it appears", () => {
    const shared = { k: 1 };
    assert.deepEqual(toJson({ a: shared, b: [shared] }), { a: { k: 1 }, b: [{ k: 1 }] });
  });

  test("the result always survives JSON.stringify unchanged", () => {
    const out = toJson({ x: [new Set([3, 1]), { y: new Map([[1, new Set(["b", "a"])]]) }] });
    assert.deepEqual(JSON.parse(JSON.stringify(out)), out);
  });
});

describe("wellFormedJson", () => {
  const REPLACEMENT = "\ufffd";

  test("a lone surrogate, high or low, anywhere in the body becomes U+FFFD", () => {
    const body = {
      messages: [{ role: "assistant", content: [{ type: "text", text: "cut inside an emoji \ud83d" }] }],
      prompt: "\udc00 at the start",
      ["key \ud800"]: ["x\udbffy", "\udfff"],
    };
    assert.deepEqual(JSON.parse(wellFormedJson(body)), {
      messages: [{ role: "assistant", content: [{ type: "text", text: `cut inside an emoji ${REPLACEMENT}` }] }],
      prompt: `${REPLACEMENT} at the start`,
      [`key ${REPLACEMENT}`]: [`x${REPLACEMENT}y`, REPLACEMENT],
    });
  });

  test("the result is what String.prototype.toWellFormed makes of every string", () => {
    const texts = ["a\ud83d\ude42b", "\ud83d\ud83d\ude42", "\ude42\ud83d", "\ud83d", "plain", "中文\udc00"];
    for (const text of texts) {
      assert.equal(JSON.parse(wellFormedJson({ text })).text, text.toWellFormed(), JSON.stringify(text));
    }
  });

  test("well-formed text is unchanged: pairs, and backslashes followed by u d in the text itself", () => {
    const body = { a: "smile \ud83d\ude42", b: "C:\\udev\\ud800", c: "\\\\ud8ff", d: "\\\ud800" };
    const out = JSON.parse(wellFormedJson(body));
    assert.deepEqual(out, { ...body, d: `\\${REPLACEMENT}` });
    assert.equal(wellFormedJson({ a: body.a, b: body.b, c: body.c }), JSON.stringify({ a: body.a, b: body.b, c: body.c }));
  });
});

describe("helpers", () => {
  test("toolNames: any iterable of names, sorted and unique", () => {
    assert.deepEqual(toolNames(new Set(["b", "a"])), ["a", "b"]);
    assert.deepEqual(toolNames(["b", "b", "", 3, "a"]), ["a", "b"]);
    assert.equal(toolNames(undefined), undefined);
    assert.equal(toolNames("read"), undefined);
  });

  test("messagesJson keeps only message objects", () => {
    assert.deepEqual(messagesJson([{ role: "user", content: "x", f: () => 1 }, null, "s", 3]), [{ role: "user", content: "x" }]);
    assert.deepEqual(messagesJson(undefined), []);
  });

  test("estimateTokens is about a quarter of the JSON size", () => {
    const messages = [{ role: "user", content: "x".repeat(400) }];
    const tokens = estimateTokens(messages);
    assert.ok(tokens >= 100 && tokens <= 110, String(tokens));
    assert.equal(estimateTokens([]), 0);
  });
});
