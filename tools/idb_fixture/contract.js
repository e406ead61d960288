// Helpers shared by sqlite.html and profile.html: promises over IndexedDB requests, typed keys,
// the JSON contract's mapping of a value (as values.html, whose copy these are), test values.
const req = r => new Promise((ok, no) => { r.onsuccess = () => ok(r.result); r.onerror = () => no(r.error); });
const done = tx => new Promise((ok, no) => { tx.oncomplete = ok; tx.onerror = () => no(tx.error); tx.onabort = () => no(tx.error); });
const hex = bytes => Array.from(bytes, b => b.toString(16).padStart(2, "0")).join("");
const tag = v => Object.prototype.toString.call(v).slice(8, -1);

function typedKey(k) {
  if (typeof k === "number") return {type: "number", value: Number.isFinite(k) ? k : String(k)};
  if (typeof k === "string") return {type: "string", value: k};
  if (k instanceof Date) return {type: "date", ms: k.getTime()};
  if (Array.isArray(k)) return {type: "array", value: k.map(typedKey)};
  return {type: "binary", hex: hex(new Uint8Array(k instanceof ArrayBuffer ? k : k.buffer))};
}

// ---- V8's object numbering: the order WriteObject first meets each object ----
const VIEWS = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
  "Int32Array", "Uint32Array", "Float16Array", "Float32Array", "Float64Array", "BigInt64Array",
  "BigUint64Array", "DataView"];
function numberObjects(root) {
  const ids = new Map();
  const walk = v => {
    if (v === null || (typeof v !== "object" && typeof v !== "function")) return;
    if (ids.has(v)) return;
    if (VIEWS.includes(tag(v)) && !ids.has(v)) walk(v.buffer);   // the buffer is written first
    ids.set(v, ids.size);
    const t = tag(v);
    if (t === "Map") for (const [k, x] of v) { walk(k); walk(x); }
    else if (t === "Set") for (const x of v) walk(x);
    else if (t === "Error") { if (Object.hasOwn(v, "cause")) walk(v.cause); }
    else if (t === "Object" || t === "Array") for (const k of Object.keys(v)) walk(v[k]);
  };
  walk(root);
  return ids;
}

// ---- the contract's mapping ----
function num(x) {
  if (Number.isNaN(x)) return {$type: "number", value: "NaN"};
  if (x === Infinity) return {$type: "number", value: "Infinity"};
  if (x === -Infinity) return {$type: "number", value: "-Infinity"};
  if (Object.is(x, -0)) return {$type: "number", value: "-0"};
  return x;
}
const isIndex = k => /^(0|[1-9][0-9]*)$/.test(k) && Number(k) <= 4294967294;
function mapValue(root) {
  const ids = numberObjects(root);
  const open = new Set();
  const conv = v => {
    if (v === undefined) return {$type: "undefined"};
    if (v === null || typeof v === "boolean" || typeof v === "string") return v;
    if (typeof v === "number") return num(v);
    if (typeof v === "bigint") return {$type: "bigint", value: v.toString()};
    if (open.has(v)) return {$ref: ids.get(v)};
    open.add(v);
    try { return convObject(v); } finally { open.delete(v); }
  };
  const convObject = v => {
    const t = tag(v);
    if (t === "Date") return {$type: "date", value: num(v.getTime())};
    if (t === "RegExp") return {$type: "regexp", source: v.source, flags: v.flags};
    if (["Boolean", "Number", "String", "BigInt"].includes(t)) return {$type: "boxed", value: conv(v.valueOf())};
    if (t === "Map") return {$type: "map", entries: [...v].map(([k, x]) => [conv(k), conv(x)])};
    if (t === "Set") return {$type: "set", values: [...v].map(conv)};
    if (t === "ArrayBuffer") return {$type: "ArrayBuffer", hex: hex(new Uint8Array(v))};
    if (VIEWS.includes(t)) return {$type: t, hex: hex(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))};
    if (t === "Error") return {$type: "error", name: v.name, message: v.message};
    if (t === "Blob") return {$type: "blob", size: v.size, mime: v.type};
    if (t === "File") return {$type: "file", size: v.size, mime: v.type, name: v.name, last_modified: v.lastModified};
    if (t === "FileList") return {$type: "filelist", files: [...v].map(f => ({$type: "file", size: f.size, mime: f.type, name: f.name, last_modified: f.lastModified}))};
    if (t === "DOMPoint" || t === "DOMPointReadOnly") return {$type: t, x: num(v.x), y: num(v.y), z: num(v.z), w: num(v.w)};
    if (t === "DOMRect" || t === "DOMRectReadOnly") return {$type: t, x: num(v.x), y: num(v.y), width: num(v.width), height: num(v.height)};
    if (t === "DOMMatrix" || t === "DOMMatrixReadOnly") return {$type: t, values: v.is2D ? [v.a, v.b, v.c, v.d, v.e, v.f]
      : [v.m11, v.m12, v.m13, v.m14, v.m21, v.m22, v.m23, v.m24, v.m31, v.m32, v.m33, v.m34, v.m41, v.m42, v.m43, v.m44]};
    if (t === "CryptoKey") return {$type: "CryptoKey", $subset: true, type: v.type, algorithm: v.algorithm.name, extractable: v.extractable, key_data: "$key_data"};
    if (t === "ImageData") return {$type: "ImageData", $subset: true, width: v.width, height: v.height, pixels: hex(v.data)};
    if (t === "Array") {
      const keys = Object.keys(v);
      const dense = keys.length === v.length && keys.every((k, i) => k === String(i));
      if (dense) return keys.map(k => conv(v[k]));
      const elements = {}, properties = {};
      for (const k of keys) (isIndex(k) ? elements : properties)[k] = conv(v[k]);
      return {$type: "array", length: v.length, elements, properties};
    }
    if (t === "Object") {
      const out = {};
      for (const k of Object.keys(v)) out[k] = conv(v[k]);
      return out;
    }
    return {$type: t, $subset: true};
  };
  return conv(root);
}

// ---- the values ----
function words(n, seed) {
  // Text from a vocabulary of pseudo-random words: snappy keeps it at about half its size.
  let x = seed;
  const rnd = () => (x = (x * 1103515245 + 12345) & 0x7fffffff);
  const vocab = Array.from({length: 3000}, () => Array.from({length: 3 + rnd() % 8}, () => String.fromCharCode(97 + rnd() % 26)).join(""));
  const out = [];
  let len = 0;
  while (len < n) { const w = vocab[rnd() % vocab.length]; out.push(w); len += w.length + 1; }
  return out.join(" ");
}
function noise(n, seed) {
  let x = seed;
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) & 0x7fffffff; b[i] = x >> 16; }
  return b;
}

async function values() {
  const shared = {shared: true};
  const cyc = {name: "cycle"}; cyc.self = cyc;
  const cycArr = [1]; cycArr.push(cycArr);
  const cycMap = new Map(); cycMap.set("me", cycMap);
  const holey = [1, , 3];
  const withProp = [1, 2]; withProp.extra = "x";
  const sparse = []; sparse[100] = "far"; sparse[3] = "near";
  const buf = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]).buffer;
  const errCause = new Error("outer", {cause: new TypeError("inner")});
  const named = new Error("renamed"); named.name = "Custom";
  const file = new File(["file contents"], "notes.txt", {type: "text/plain", lastModified: 1700000000123});
  const dt = new DataTransfer();
  dt.items.add(new File(["one"], "one.txt", {type: "text/plain", lastModified: 1600000000000}));
  dt.items.add(new File(["two!"], "two.bin", {type: "", lastModified: 1600000000999}));
  const key = await crypto.subtle.generateKey({name: "AES-GCM", length: 128}, true, ["encrypt", "decrypt"]);
  const img = new ImageData(new Uint8ClampedArray([255, 0, 0, 255, 0, 255, 0, 128]), 2, 1);
  const f16 = typeof Float16Array === "function" ? new Float16Array([1.5, -2]) : new Float32Array([1.5, -2]);
  return {
    records: [
      ["strings", {ascii: "hello", latin1: "caf\u00e9 \u00ff", wide: "\u65e5\u672c\u8a9e", emoji: "\ud83d\ude00!", lone: "a\ud800b", empty: "", ctrl: "tab\there\nquote\"back\\slash\u0001"}],
      ["numbers", [0, -0, 1.5, -7, 2147483647, -2147483648, 4294967295, 2 ** 53, 1e21, 1e-7, 0.1, NaN, Infinity, -Infinity, 5e-324]],
      ["oddballs", [true, false, null, undefined]],
      ["bigints", [0n, 123n, -123n, 2n ** 100n, -(2n ** 64n)]],
      ["dates", [new Date(0), new Date(1700000000123), new Date(-86400000), new Date(NaN)]],
      ["regexps", [/a+b/gi, /x/dmsy, /\p{L}+/u, /[\p{L}--a]/v, new RegExp("")]],
      ["boxed", [new Boolean(false), new Number(3.5), new Number(NaN), new String("boxed \u00e9"), Object(10n)]],
      ["collections", new Map([["k", new Set([1, "two", {three: 3}])], [{objKey: 1}, [null]], [NaN, -0]])],
      ["buffers", {buf, u8: new Uint8Array(buf, 2, 3), i16: new Int16Array(buf, 2, 2), dv: new DataView(buf, 1, 4),
                   f64: new Float64Array([1.25, -0]), b64: new BigInt64Array([-1n, 2n ** 62n]), bu64: new BigUint64Array([2n ** 64n - 1n]),
                   i8: new Int8Array([-1, 127]), u8c: new Uint8ClampedArray([0, 255]), u16: new Uint16Array([65535]),
                   i32: new Int32Array([-5]), u32: new Uint32Array([4294967295]), f32: new Float32Array([0.5]), f16,
                   empty: new ArrayBuffer(0)}],
      ["errors", [new Error("plain"), new TypeError("type"), new RangeError("range"), new SyntaxError(), new EvalError("e"),
                  new ReferenceError("r"), new URIError("u"), errCause, named]],
      ["arrays", {holey, withProp, sparse, nested: [[1, [2, [3, []]]], {}], empty: [], strings: ["a", "b"]}],
      ["objects", {1: "one", 10: "ten", b: {c: {d: {e: "deep"}}}, "with space": 1, "\u00e9": 2, "": "empty key", "__proto__x": 3}],
      ["cycles", {cyc, cycArr, cycMap}],
      ["shared", {a: shared, b: shared, list: [shared, shared]}],
      ["platform", [new DOMPoint(1, 2, 3, 4), new DOMPointReadOnly(-1, 0.5, 0, 1), new DOMRect(1, 2, 30, 40),
                    new DOMMatrix([1, 2, 3, 4, 5, 6]), new DOMMatrixReadOnly([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 7, 8, 9, 1]),
                    key, img]],
      ["top-level string", "just a string"],
      ["top-level number", 42],
      ["top-level null", null],
    ],
    blobs: [
      ["blob", new Blob(["blob \u00e9 text"], {type: "text/plain"})],
      ["file", file],
      ["filelist", dt.files],
      ["mixed", {blob: new Blob([new Uint8Array([0, 1, 2, 255])]), file, again: file, n: 1}],
    ],
    large: [
      ["compressed", "abcdefghij".repeat(10000)],                    // 100,000 bytes -> snappy
      ["in a blob", noise(70000, 7)],                                 // incompressible -> blob file
      ["compressed in a blob", words(180000, 11)],                    // snappy, still over 64 KiB -> blob
      ["small", "tiny"],
    ],
  };
}

