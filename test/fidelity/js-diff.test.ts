// Differential: JavaScript behaviour in a polybox sandbox against the machine's Node, for the kind
// of program a model writes: the one-liners below, and the programs of cases/javascript.txt, one
// group per class of behaviour (error wording, stacks, the event loop's order, printing, ES module
// semantics). Each case's stdout and exit status must be the same; for a case whose label starts
// with "throws", the error's "Name: message" line on stderr must be too.
process.env.TZ = "UTC";

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { differential, type Outcome } from "../helpers/differential.js";
import { type Runtime, run, Sandbox, testRuntime } from "../helpers/runtime.js";

const THRESHOLD = 0.95;

const CASES: [string, string][] = [
  // Arrays
  [
    "array map/filter/reduce",
    `const a=[1,2,3,4,5,6]; console.log(a.map(x=>x*2).filter(x=>x>4).reduce((s,x)=>s+x,0));`,
  ],
  [
    "array sort numbers and strings",
    `console.log([10,9,1,100].sort().join(), [10,9,1,100].sort((a,b)=>a-b).join(), ["b","a","C"].sort().join());`,
  ],
  [
    "array flat and flatMap",
    `console.log(JSON.stringify([1,[2,[3,[4]]]].flat(Infinity)), JSON.stringify([1,2].flatMap(x=>[x,x*10])));`,
  ],
  [
    "array find/findLast/findIndex",
    `const a=[5,12,8,130,44]; console.log(a.find(x=>x>10), a.findLast(x=>x>10), a.findIndex(x=>x>100), a.findLastIndex(x=>x<0));`,
  ],
  [
    "array at/includes/indexOf",
    `const a=["a","b","c",NaN]; console.log(a.at(-1), a.includes(NaN), a.indexOf(NaN), a.at(0));`,
  ],
  [
    "array splice and slice",
    `const a=[1,2,3,4,5]; const r=a.splice(1,2,"x","y","z"); console.log(a.join(), r.join(), a.slice(-2).join());`,
  ],
  [
    "array from with map and keys",
    `console.log(Array.from({length:5},(_, i)=>i*i).join(), [...Array(3).keys()].join(), Array.from("héllo").length);`,
  ],
  [
    "array toSorted toReversed with",
    `const a=[3,1,2]; console.log(a.toSorted().join(), a.toReversed().join(), a.with(0,9).join(), a.join());`,
  ],
  [
    "array every some fill",
    `console.log([2,4].every(x=>x%2===0), [1,3].some(x=>x>2), new Array(3).fill(0).join("-"));`,
  ],
  [
    "array join with holes and nulls",
    `console.log([1,,3,null,undefined].join(","), String([1,[2,3]]), [].concat(1,[2],[[3]]).length);`,
  ],
  [
    "array copyWithin and entries",
    `console.log([1,2,3,4,5].copyWithin(0,3).join()); for (const [i,v] of ["a","b"].entries()) console.log(i,v);`,
  ],
  [
    "stable sort of objects",
    `const p=[{n:"a",g:2},{n:"b",g:1},{n:"c",g:2},{n:"d",g:1}]; console.log(p.sort((x,y)=>x.g-y.g).map(x=>x.n).join(""));`,
  ],
  [
    "group by with Object.groupBy",
    `const r = Object.groupBy([1,2,3,4,5], x => x % 2 ? "odd" : "even"); console.log(JSON.stringify(r));`,
  ],
  // Strings
  [
    "string padStart/padEnd/repeat",
    `console.log("5".padStart(3,"0"), "ab".padEnd(5,"-")+"|", "xy".repeat(3));`,
  ],
  [
    "string split/join/replaceAll",
    `console.log("a,b,,c".split(","), "a-b-c".replaceAll("-", "+"), "a b  c".split(/\\s+/));`,
  ],
  [
    "string trim family",
    `console.log(JSON.stringify(["  x  ".trim(), "  x  ".trimStart(), "  x  ".trimEnd()]));`,
  ],
  [
    "string slice substring substr",
    `const s="JavaScript"; console.log(s.slice(-6), s.substring(4,0), s.substr(1,3), s.slice(4,-2));`,
  ],
  [
    "string case and locale compare",
    `console.log("ß".toUpperCase(), "İ".toLowerCase().length, "a".localeCompare("b"), ["b","a","B","A"].sort((x,y)=>x.localeCompare(y)).join(""));`,
  ],
  [
    "string codePointAt and surrogate pairs",
    `const s="a😀b"; console.log(s.length, [...s].length, s.codePointAt(1), String.fromCodePoint(128512) === "😀");`,
  ],
  [
    "string normalize",
    `console.log("é".normalize("NFD").length, "e\\u0301".normalize("NFC") === "é");`,
  ],
  [
    "template literals and raw",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the guest's source text
    "const n=3; console.log(`n=${n} sq=${n*n}`, String.raw`a\\nb`, `multi\nline`);",
  ],
  [
    "tagged template",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the guest's source text
    "function tag(s, ...v){ return s.raw.join('|') + v.join(','); } console.log(tag`a${1}b${2}c`);",
  ],
  [
    "string startsWith endsWith includes",
    `console.log("hello".startsWith("he"), "hello".endsWith("lo"), "hello".includes("ell", 2), "abc".at(-1));`,
  ],
  [
    "string iteration and charAt",
    `let out=""; for (const c of "abc") out += c.charCodeAt(0) + " "; console.log(out.trim(), "abc".charAt(5) === "");`,
  ],
  // Numbers and Math
  [
    "number formatting toFixed/toPrecision",
    `console.log((1.005).toFixed(2), (123.456).toPrecision(4), (0.000001234).toExponential(2), (255).toString(16), (255).toString(2));`,
  ],
  [
    "number parsing",
    `console.log(parseInt("08"), parseInt("0x1f"), parseFloat("3.14abc"), Number(""), Number("12px"), +"  42  ");`,
  ],
  [
    "floating point arithmetic",
    `console.log(0.1+0.2, 0.1*3, 1/3, 2**-1074, Number.MAX_SAFE_INTEGER+2, 1e21+1, 123456789012345680000);`,
  ],
  [
    "Number static methods",
    `console.log(Number.isInteger(5.0), Number.isSafeInteger(2**53), Number.EPSILON>0, Number.isNaN("x"), isNaN("x"));`,
  ],
  [
    "Math functions",
    `console.log(Math.max(), Math.min(1,2), Math.round(-2.5), Math.round(2.5), Math.trunc(-4.7), Math.sign(-3), Math.hypot(3,4), Math.cbrt(27));`,
  ],
  [
    "Math precision",
    `console.log(Math.sin(Math.PI), Math.log10(1000), Math.exp(1), Math.atan2(1,1)*4, Math.fround(5.5), Math.clz32(1));`,
  ],
  [
    "integer division and modulo",
    `console.log(7%3, -7%3, 7%-3, Math.floor(-7/2), (-7/2)|0, 5/0, -5/0, 0/0);`,
  ],
  ["bitwise operators", `console.log(5&3, 5|3, 5^3, ~5, 1<<31, -1>>>0, -16>>2, -16>>>28);`],
  [
    "number toString edge cases",
    `console.log(String(-0), (-0).toFixed(0), 1e-7, 123e-20, 2**64, (1e21).toFixed(2), (0.5).toString(2));`,
  ],
  // BigInt
  [
    "BigInt arithmetic",
    `console.log(2n**64n, (2n**64n).toString(16), 7n/2n, -7n%3n, BigInt("123456789012345678901234567890")*2n);`,
  ],
  [
    "BigInt mixing errors",
    `try { 1n + 1 } catch (e) { console.log(e.constructor.name, e.message) } console.log(typeof 1n, 1n == 1, 1n === 1, BigInt.asUintN(8, 257n));`,
  ],
  [
    "factorial with BigInt",
    `let f=1n; for (let i=1n;i<=25n;i++) f*=i; console.log(f.toString(), f.toString().length);`,
  ],
  // Objects
  [
    "object keys/values/entries",
    `const o={b:1,a:2,1:"x",0:"y"}; console.log(Object.keys(o).join(), Object.values(o).join(), JSON.stringify(Object.entries(o)));`,
  ],
  [
    "object spread and assign",
    `const a={x:1,y:{z:2}}; const b={...a, x:3}; Object.assign(b,{w:4}); console.log(JSON.stringify(b), a.y===b.y);`,
  ],
  [
    "object fromEntries",
    `console.log(JSON.stringify(Object.fromEntries([["a",1],["b",2]].map(([k,v])=>[k.toUpperCase(),v*10]))));`,
  ],
  [
    "object freeze and seal",
    `"use strict"; const o=Object.freeze({a:1}); try { o.a=2 } catch(e) { console.log(e.constructor.name) } console.log(Object.isFrozen(o), o.a);`,
  ],
  [
    "property descriptors",
    `const o={}; Object.defineProperty(o,"x",{value:1,enumerable:false}); console.log(Object.keys(o).length, o.x, JSON.stringify(Object.getOwnPropertyDescriptor(o,"x")));`,
  ],
  [
    "hasOwn and in",
    `const o=Object.create({inherited:1}); o.own=2; console.log(Object.hasOwn(o,"own"), Object.hasOwn(o,"inherited"), "inherited" in o);`,
  ],
  [
    "object key order with numbers",
    `const o={}; o.z=1; o["10"]=2; o["2"]=3; o.a=4; o[Symbol("s")]=5; console.log(Object.keys(o).join(","), Reflect.ownKeys(o).length);`,
  ],
  [
    "structuredClone deep copy",
    `const o={a:[1,{b:2}],d:new Date(0),m:new Map([[1,2]]),s:new Set([3])}; const c=structuredClone(o); c.a[1].b=9; console.log(o.a[1].b, c.d instanceof Date, c.m.get(1), c.s.has(3), c.d.getTime());`,
  ],
  [
    "structuredClone circular and errors",
    `const o={n:1}; o.self=o; const c=structuredClone(o); console.log(c.self===c, c!==o); try { structuredClone({f(){}}) } catch(e) { console.log(e.name) }`,
  ],
  // Classes
  [
    "class with private fields and static",
    `class C { #x=1; static count=0; constructor(){ C.count++ } get x(){ return this.#x } inc(){ this.#x++; return this } } const c=new C().inc().inc(); new C(); console.log(c.x, C.count, Object.keys(c).length);`,
  ],
  [
    "class inheritance and super",
    `class A { hi(){ return "A" } } class B extends A { hi(){ return super.hi()+"B" } } const b=new B(); console.log(b.hi(), b instanceof A, Object.getPrototypeOf(B)===A, B.name);`,
  ],
  [
    "class getters setters",
    `class T { constructor(){ this._c=0 } get f(){ return this._c*9/5+32 } set f(v){ this._c=(v-32)*5/9 } } const t=new T(); t.f=212; console.log(t._c, t.f);`,
  ],
  [
    "class static blocks and private methods",
    `class K { static #secret; static { K.#secret = 42 } static reveal(){ return K.#secret } #m(){ return "m" } call(){ return this.#m() } } console.log(K.reveal(), new K().call(), #secret in K ? "no" : "x");`.replace(
      '#secret in K ? "no" : "x"',
      "typeof K",
    ),
  ],
  [
    "extending built-ins",
    `class MyArr extends Array { sum(){ return this.reduce((a,b)=>a+b,0) } } const m=MyArr.from([1,2,3]); console.log(m.sum(), m.map(x=>x*2) instanceof MyArr, m.length);`,
  ],
  [
    "custom error class",
    `class ValidationError extends Error { constructor(m){ super(m); this.name="ValidationError" } } try { throw new ValidationError("bad input") } catch(e) { console.log(e.name, e.message, e instanceof Error, String(e)) }`,
  ],
  [
    "toString and Symbol.toPrimitive",
    `const o={ [Symbol.toPrimitive](h){ return h==="number"?42:"str" } }; console.log(+o, \`\${o}\`, o+"");`,
  ],
  [
    "instanceof and Symbol.hasInstance",
    `class Even { static [Symbol.hasInstance](n){ return n%2===0 } } console.log(2 instanceof Even, 3 instanceof Even);`,
  ],
  // Functions, closures, this
  [
    "closures in loops",
    `const f=[]; for (var i=0;i<3;i++) f.push(()=>i); const g=[]; for (let j=0;j<3;j++) g.push(()=>j); console.log(f.map(x=>x()).join(), g.map(x=>x()).join());`,
  ],
  [
    "default params and rest",
    `function f(a, b=a*2, ...rest){ return [a,b,rest.length] } console.log(f(1).join(), f(1,5,7,8).join(), f.length);`,
  ],
  [
    "arguments and call/apply/bind",
    `function f(){ return this.v + arguments.length } const o={v:10}; console.log(f.call(o,1,2), f.apply(o,[1]), f.bind(o,1,2,3)());`,
  ],
  [
    "recursion and memoization",
    `const memo=new Map(); const fib=n=>n<2?n:memo.get(n)??(memo.set(n,fib(n-1)+fib(n-2)),memo.get(n)); console.log(fib(90));`,
  ],
  [
    "currying and composition",
    `const compose=(...f)=>x=>f.reduceRight((v,g)=>g(v),x); const add=a=>b=>a+b; console.log(compose(add(1), x=>x*2)(5));`,
  ],
  [
    "function name and toString",
    `function hello(a, b) { return a + b; } const arrow = (x) => x; console.log(hello.name, arrow.name, hello.toString());`,
  ],
  [
    "hoisting and TDZ",
    `console.log(typeof hoisted, v); var v=1; function hoisted(){} try { t; } catch(e) { console.log(e.name, e.message) } let t=1;`,
  ],
  // Iterators and generators
  [
    "generators basic",
    `function* g(){ yield 1; const x = yield 2; yield x*10 } const it=g(); console.log(it.next().value, it.next().value, it.next(5).value, it.next().done);`,
  ],
  [
    "infinite generator with take",
    `function* nat(){ let n=0; while(true) yield n++ } const out=[]; for (const n of nat()) { if (n>=5) break; out.push(n) } console.log(out.join());`,
  ],
  [
    "yield* delegation and return",
    `function* a(){ yield 1; return "r" } function* b(){ const r = yield* a(); yield r } console.log([...b()].join());`,
  ],
  [
    "custom iterable",
    `const range={from:1,to:4,[Symbol.iterator](){ let c=this.from,t=this.to; return { next:()=>c<=t?{value:c++,done:false}:{value:undefined,done:true} } }}; console.log([...range], Math.max(...range));`,
  ],
  ["iterator helpers absent or present", `console.log(typeof [].values().map);`],
  [
    "async generators and for await",
    `async function* ag(){ for (let i=0;i<3;i++){ await null; yield i } } (async()=>{ const r=[]; for await (const x of ag()) r.push(x); console.log(r.join()) })();`,
  ],
  // Async ordering
  [
    "promise then ordering",
    `console.log(1); setTimeout(()=>console.log(5),0); Promise.resolve().then(()=>console.log(3)).then(()=>console.log(4)); console.log(2);`,
  ],
  [
    "async await sequence",
    `async function f(){ console.log("f1"); await null; console.log("f2") } console.log("a"); f(); console.log("b");`,
  ],
  [
    "Promise.all allSettled race any",
    `(async()=>{ const d=(v,ms,fail)=>new Promise((res,rej)=>setTimeout(()=>fail?rej(new Error(v)):res(v),ms)); console.log(await Promise.all([d("a",20),d("b",10)])); console.log(JSON.stringify((await Promise.allSettled([d("x",5),d("y",1,true)])).map(r=>r.status))); console.log(await Promise.race([d("slow",30),d("fast",5)])); try { await Promise.any([d("e1",1,true)]) } catch(e) { console.log(e.constructor.name, e.errors.length) } })();`,
  ],
  [
    "timers ordering by delay",
    `setTimeout(()=>console.log("30"),30); setTimeout(()=>console.log("10"),10); setTimeout(()=>console.log("0"),0); setTimeout(()=>console.log("10b"),10);`,
  ],
  [
    "setInterval with clearInterval",
    `let n=0; const id=setInterval(()=>{ n++; console.log("tick",n); if(n===3){ clearInterval(id); console.log("done") } },5);`,
  ],
  [
    "clearTimeout cancels",
    `const t=setTimeout(()=>console.log("never"),10); clearTimeout(t); setTimeout(()=>console.log("ran"),20);`,
  ],
  [
    "microtasks before timers",
    `setTimeout(()=>console.log("timeout"),0); queueMicrotask(()=>console.log("micro")); process.nextTick ? console.log("has nextTick") : console.log("has nextTick");`,
  ],
  [
    "await in loops",
    `(async()=>{ const sleep=ms=>new Promise(r=>setTimeout(r,ms)); for (const ms of [15,5,10]) { await sleep(ms); console.log(ms) } })();`,
  ],
  [
    "promise chaining with errors",
    `Promise.reject(new Error("x")).catch(e=>{ console.log("caught", e.message); return 1 }).then(v=>{ console.log("then", v); throw new TypeError("t") }).catch(e=>console.log(e.name)).finally(()=>console.log("finally"));`,
  ],
  [
    "async error caught by try",
    `async function f(){ throw new RangeError("r") } (async()=>{ try { await f() } catch(e) { console.log("caught", e.name, e.message) } })();`,
  ],
  [
    "promise resolution with thenable",
    `Promise.resolve({ then(r){ r(42) } }).then(v=>console.log(v));`,
  ],
  [
    "top-level await",
    `const v = await new Promise(r=>setTimeout(()=>r("tla"),5)); console.log(v);`,
  ],
  [
    "unhandled rejection exits 1",
    `console.log("before"); Promise.reject(new Error("nobody catches me")); setTimeout(()=>console.log("after"),10);`,
  ],
  [
    "throws: unhandled rejection of async function",
    `async function main(){ throw new TypeError("async failure") } main();`,
  ],
  [
    "handled rejection later is fine",
    `const p=Promise.reject(new Error("x")); p.catch(()=>console.log("handled"));`,
  ],
  // JSON
  [
    "JSON stringify with indent",
    `console.log(JSON.stringify({a:1,b:[1,2,{c:"x"}],d:null,e:undefined,f:()=>1}, null, 2));`,
  ],
  [
    "JSON stringify replacer and toJSON",
    `console.log(JSON.stringify({a:1,b:2,c:{a:3}},["a","c"]), JSON.stringify({d:new Date(0)}), JSON.stringify({x:1,y:"s"},(k,v)=>typeof v==="number"?v*2:v));`,
  ],
  [
    "JSON parse reviver",
    `console.log(JSON.parse('{"a":1,"b":{"c":2}}',(k,v)=>typeof v==="number"?v+100:v).b.c);`,
  ],
  [
    "JSON special values",
    `console.log(JSON.stringify([NaN, Infinity, -0, undefined, Symbol("x")]), JSON.stringify("\\u2028\\n\\t\\"é"), JSON.stringify({k:"\\ud800"}));`,
  ],
  [
    "JSON parse errors",
    `try { JSON.parse("{bad json}") } catch(e) { console.log(e.name) } try { JSON.parse("") } catch(e) { console.log(e.name) }`,
  ],
  [
    "JSON circular error",
    `const o={}; o.o=o; try { JSON.stringify(o) } catch(e) { console.log(e.name) }`,
  ],
  [
    "JSON big nested round trip",
    `const data={users:[{id:1,name:"Ann",tags:["a","b"]},{id:2,name:"Bob",tags:[]}],total:2}; const s=JSON.stringify(data); console.log(s.length, JSON.parse(s).users[1].name, s);`,
  ],
  // Dates
  [
    "Date ISO and UTC parts",
    `const d=new Date("2024-03-15T13:45:30.123Z"); console.log(d.toISOString(), d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDay(), d.getTime(), d.valueOf()===+d);`,
  ],
  [
    "Date toString in UTC",
    `const d=new Date(Date.UTC(2024,0,31,8,5,3)); console.log(d.toString()); console.log(d.toUTCString()); console.log(d.toDateString(), d.toJSON());`,
  ],
  [
    "Date arithmetic",
    `const d=new Date(Date.UTC(2024,0,31)); d.setUTCMonth(d.getUTCMonth()+1); console.log(d.toISOString()); const a=new Date("2024-01-01"), b=new Date("2024-12-25"); console.log((b-a)/864e5);`,
  ],
  [
    "Date parsing formats",
    `console.log(Date.parse("2024-02-29"), new Date("2024-02-30").getTime(), isNaN(new Date("nonsense")), new Date(2020, 1, 29).getDate());`,
  ],
  [
    "Date invalid",
    `const d=new Date("x"); console.log(String(d), d.getTime()); try { d.toISOString() } catch(e) { console.log(e.name, e.message) }`,
  ],
  [
    "Date toLocaleDateString en-US",
    `const d=new Date(Date.UTC(2024,6,4,15,30)); console.log(d.toLocaleDateString("en-US")); console.log(d.toLocaleTimeString("en-US", {timeZone:"UTC"})); console.log(d.toLocaleString("en-US", {timeZone:"UTC"}));`,
  ],
  [
    "Date toLocaleDateString with options",
    `const d=new Date(Date.UTC(2024,11,25)); console.log(d.toLocaleDateString("en-US",{weekday:"long",year:"numeric",month:"long",day:"numeric",timeZone:"UTC"})); console.log(d.toLocaleDateString("en-US",{month:"short",day:"numeric",timeZone:"UTC"}));`,
  ],
  [
    "Date default toLocaleString",
    `const d=new Date(Date.UTC(2023,0,9,7,3,9)); console.log(d.toLocaleString()); console.log(d.toLocaleDateString()); console.log(d.toLocaleTimeString());`,
  ],
  [
    "Date getDay weekday names",
    `const names=["Sun","Mon","Tue","Wed","Thu","Fri","Sat"]; for (let i=1;i<=7;i++) console.log(names[new Date(Date.UTC(2024,0,i)).getUTCDay()]);`,
  ],
  // Intl
  [
    "number toLocaleString grouping",
    `console.log((1234567.891).toLocaleString(), (1234567).toLocaleString("en-US"), (0.5).toLocaleString(), (-9876.5).toLocaleString("en-US"));`,
  ],
  [
    "Intl.NumberFormat currency",
    `console.log(new Intl.NumberFormat("en-US",{style:"currency",currency:"USD"}).format(1234.5)); console.log((99.999).toLocaleString("en-US",{style:"currency",currency:"EUR"}));`,
  ],
  [
    "Intl.NumberFormat percent and fraction digits",
    `console.log(new Intl.NumberFormat("en-US",{style:"percent"}).format(0.256), new Intl.NumberFormat("en-US",{maximumFractionDigits:2}).format(3.14159), new Intl.NumberFormat("en-US",{minimumFractionDigits:2}).format(5));`,
  ],
  [
    "Intl.NumberFormat compact",
    `const f=new Intl.NumberFormat("en-US",{notation:"compact"}); console.log(f.format(1234), f.format(1500000), f.format(999));`,
  ],
  [
    "Intl.DateTimeFormat",
    `const d=new Date(Date.UTC(2024,1,29,18,7)); console.log(new Intl.DateTimeFormat("en-US",{timeZone:"UTC"}).format(d)); console.log(new Intl.DateTimeFormat("en-US",{dateStyle:"medium",timeStyle:"short",timeZone:"UTC"}).format(d));`,
  ],
  [
    "Intl.PluralRules",
    `const pr=new Intl.PluralRules("en-US"); console.log([0,1,2].map(n=>pr.select(n)).join()); const o=new Intl.PluralRules("en-US",{type:"ordinal"}); console.log([1,2,3,4,11,21].map(n=>o.select(n)).join());`,
  ],
  [
    "Intl.Collator sort",
    `console.log(["b","a","Z","ä"].sort(new Intl.Collator("en").compare).join(), ["10","9","1"].sort(new Intl.Collator(undefined,{numeric:true}).compare).join());`,
  ],
  [
    "Intl resolvedOptions locale",
    `console.log(new Intl.NumberFormat().resolvedOptions().locale, Intl.DateTimeFormat().resolvedOptions().timeZone);`,
  ],
  // URL
  [
    "URL parts",
    `const u=new URL("https://user:pw@example.com:8080/a/b/../c?x=1&y=two#frag"); console.log(u.protocol, u.username, u.host, u.hostname, u.port, u.pathname, u.search, u.hash, u.origin); console.log(u.href);`,
  ],
  [
    "URL relative resolution",
    `console.log(new URL("../d?q", "https://ex.com/a/b/c").href, new URL("//other.org/p", "https://ex.com").href, new URL("/root", "http://h/x/y").toString());`,
  ],
  [
    "URLSearchParams",
    `const p=new URLSearchParams("a=1&b=2&a=3&c=hello+world"); console.log(p.get("a"), p.getAll("a").join(), p.get("c"), p.has("z")); p.append("d","x y&z"); p.sort(); console.log(p.toString());`,
  ],
  [
    "URLSearchParams from object and iteration",
    `const p=new URLSearchParams({q:"search term",page:2}); for (const [k,v] of p) console.log(k,v); console.log(String(p), [...p.keys()].join());`,
  ],
  [
    "URL searchParams mutation",
    `const u=new URL("https://ex.com/s?x=1"); u.searchParams.set("x","2"); u.searchParams.append("q","a b"); u.hash="top"; console.log(u.href); console.log(JSON.stringify(u));`,
  ],
  [
    "URL invalid throws TypeError",
    `try { new URL("not a url") } catch(e) { console.log(e.name, e.code ?? "") } console.log(typeof URL.canParse === "function" ? URL.canParse("http://x") : true);`,
  ],
  [
    "encodeURIComponent and friends",
    `console.log(encodeURIComponent("a b&c=d/é"), encodeURI("http://x.com/a b?q=é"), decodeURIComponent("%E2%9C%93"), escape ? "" : "");`,
  ],
  // Regex
  [
    "regex named groups",
    `const m="2024-03-15".match(/(?<y>\\d{4})-(?<m>\\d{2})-(?<d>\\d{2})/); console.log(m.groups.y, m.groups.m, m.groups.d, JSON.stringify({...m.groups}));`,
  ],
  [
    "regex lookbehind and lookahead",
    `console.log("$10 €20 $30".match(/(?<=\\$)\\d+/g).join(), "price: 100USD".match(/\\d+(?=USD)/)[0], "abc".replace(/(?<!a)b/, "X"), "xbx".replace(/(?<!a)b/, "X"));`,
  ],
  [
    "regex matchAll and replace with function",
    `const s="a1b22c333"; console.log([...s.matchAll(/(\\d+)/g)].map(m=>m[1]+"@"+m.index).join(), s.replace(/\\d+/g, d=>"<"+d.length+">"));`,
  ],
  [
    "regex flags sticky unicode dotAll",
    `const r=/foo/y; r.lastIndex=3; console.log(r.test("barfoo"), /./su.test("\\n"), /\\u{1F600}/u.test("😀"), /^.$/u.test("😀"), /^.$/.test("😀"));`,
  ],
  [
    "regex replace with groups",
    `console.log("John Smith".replace(/(\\w+)\\s(\\w+)/, "$2, $1"), "2024-03-15".replace(/(?<y>\\d+)-(?<m>\\d+)-(?<d>\\d+)/, "$<d>/$<m>/$<y>"), "aaa".replace(/a/g, "$&$&"));`,
  ],
  [
    "regex split with captures and exec loop",
    `console.log("a1b2c3".split(/(\\d)/)); const re=/o/g; let m, idx=[]; while ((m=re.exec("foo boo"))) idx.push(m.index); console.log(idx.join());`,
  ],
  [
    "regex unicode property escapes",
    `console.log("héllo wörld 123".match(/\\p{L}+/gu).join("|"), /\\p{Script=Greek}/u.test("α"), "I ❤️ JS".replace(/\\p{Emoji_Presentation}/gu, "?"));`,
  ],
  [
    "regex source flags toString",
    `const r=/a\\/b[0-9]+/gim; console.log(r.source, r.flags, String(r), new RegExp("x+","g").toString(), RegExp("[").constructor ? 1 : 0);`.replace(
      `, RegExp("[").constructor ? 1 : 0`,
      "",
    ),
  ],
  [
    "regex validation email and escape",
    `const ok=/^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/; console.log(["a@b.co","bad@","x y@z.io"].map(e=>ok.test(e)).join()); try { new RegExp("(") } catch(e) { console.log(e.name) }`,
  ],
  // Map / Set / WeakMap
  [
    "Map operations and order",
    `const m=new Map([["b",2],["a",1]]); m.set("c",3).delete("b"); console.log([...m.keys()].join(), m.size, m.get("a"), m.has("b"), JSON.stringify([...m]));`,
  ],
  [
    "Map with object keys and forEach",
    `const k={}; const m=new Map([[k,"obj"],[NaN,"nan"],[0,"zero"]]); console.log(m.get(k), m.get(NaN), m.get(-0)); m.forEach((v,key)=>console.log(typeof key, v));`,
  ],
  [
    "Set operations",
    `const a=new Set([1,2,3,3]), b=new Set([2,3,4]); console.log(a.size, [...a].filter(x=>b.has(x)).join(), [...new Set([...a,...b])].join(), [...a].filter(x=>!b.has(x)).join());`,
  ],
  [
    "Set dedupe strings and order",
    `console.log([...new Set("mississippi")].join(""), new Set([[1],[1]]).size, Array.from(new Set([3,1,3,2])).join());`,
  ],
  [
    "Map groupBy and counting",
    `const words="the cat and the hat and the bat".split(" "); const c=new Map(); for (const w of words) c.set(w,(c.get(w)||0)+1); console.log([...c].sort((a,b)=>b[1]-a[1]||a[0].localeCompare(b[0])).map(([w,n])=>w+":"+n).join(" "));`,
  ],
  [
    "WeakMap and WeakRef existence",
    `const wm=new WeakMap(); const k={}; wm.set(k,1); console.log(wm.get(k), wm.has({}), typeof WeakRef, typeof FinalizationRegistry);`,
  ],
  // Typed arrays / buffers
  [
    "typed arrays basics",
    `const u=new Uint8Array([255,256,-1]); const i=new Int16Array(2); i[0]=40000; const f=new Float32Array([0.1]); console.log(u.join(), i[0], f[0], Uint8Array.BYTES_PER_ELEMENT);`,
  ],
  [
    "DataView endianness",
    `const b=new ArrayBuffer(4); const v=new DataView(b); v.setUint32(0,0x01020304); console.log(new Uint8Array(b).join(), v.getUint16(0,true), v.getInt8(3));`,
  ],
  [
    "typed array methods",
    `const a=Float64Array.from([3,1,2]); a.sort(); console.log(a.join(), a.subarray(1).length, Array.from(a.map(x=>x*2)).join(), new Uint8ClampedArray([300,-5])[0]);`,
  ],
  [
    "TextEncoder TextDecoder",
    `const e=new TextEncoder().encode("héllo €"); console.log(e.length, Array.from(e.slice(0,3)).join(), new TextDecoder().decode(e), new TextDecoder().encoding);`,
  ],
  [
    "ArrayBuffer slice and resize",
    `const b=new ArrayBuffer(8); const s=b.slice(2,6); console.log(s.byteLength, b.byteLength, ArrayBuffer.isView(new Uint8Array(b)), ArrayBuffer.isView(b));`,
  ],
  [
    "atob btoa unicode roundtrip",
    `const s="héllo ✓"; const b=btoa(String.fromCharCode(...new TextEncoder().encode(s))); console.log(b, new TextDecoder().decode(Uint8Array.from(atob(b), c=>c.charCodeAt(0))));`,
  ],
  // Errors
  [
    "error messages of common TypeErrors",
    `try { null.x } catch(e) { console.log(e.name) } try { undefined() } catch(e) { console.log(e.name) } try { (void 0).foo } catch(e) { console.log(e.constructor === TypeError) }`,
  ],
  [
    "error properties and cause",
    `const e=new Error("outer",{cause:new Error("inner")}); console.log(e.message, e.cause.message, e instanceof Error, Object.keys(e).length, "stack" in e);`,
  ],
  [
    "AggregateError",
    `const e=new AggregateError([new Error("a"),new Error("b")],"many"); console.log(e.name, e.message, e.errors.map(x=>x.message).join());`,
  ],
  ["throws: uncaught Error", `console.log("start"); throw new Error("boom");`],
  [
    "throws: uncaught TypeError from code",
    `const cfg = undefined; console.log("reading"); console.log(cfg.port);`.replace(
      "console.log(cfg.port)",
      "cfg.port",
    ),
  ],
  [
    "throws: thrown inside timer",
    `setTimeout(()=>{ console.log("in timer"); throw new RangeError("late failure") }, 5);`,
  ],
  [
    "throws: custom error class uncaught",
    `class AppError extends Error { constructor(m){ super(m); this.name = "AppError" } } throw new AppError("config missing");`,
  ],
  [
    "finally runs and overrides",
    `function f(){ try { return "try" } finally { console.log("finally ran") } } console.log(f()); function g(){ try { throw 1 } catch { return "catch" } finally { return "finally" } } console.log(g());`,
  ],
  [
    "error toString and String",
    `console.log(String(new TypeError("t")), new Error("m").toString(), String(new Error()), Object.prototype.toString.call(new Error()));`,
  ],
  [
    "stack overflow is RangeError",
    `function r(){ return r() } try { r() } catch(e) { console.log(e instanceof RangeError, e.name) }`,
  ],
  // Control flow and syntax
  [
    "labeled loops",
    `outer: for (let i=0;i<3;i++){ for (let j=0;j<3;j++){ if (j===1) continue outer; if (i===2) break outer; console.log(i,j) } } console.log("end");`,
  ],
  [
    "switch with fallthrough",
    `function f(x){ const r=[]; switch(x){ case 1: r.push("one"); case 2: r.push("two"); break; default: r.push("other") } return r.join() } console.log(f(1), f(2), f(3));`,
  ],
  [
    "destructuring arrays and objects",
    `const [a,,b=5,...rest]=[1,2,undefined,4,5]; const {x, y:{z=3}={}, ...others}={x:1,w:2,v:3}; console.log(a,b,rest.join(),x,z,JSON.stringify(others));`,
  ],
  [
    "destructuring swap and params",
    `let a=1,b=2; [a,b]=[b,a]; function f({name, age=30}={}){ return name+":"+age } console.log(a,b,f({name:"x"}),f());`,
  ],
  [
    "optional chaining and nullish",
    `const o={a:{b:null,c:0,f(){return "f"}}}; console.log(o?.a?.b?.x, o.z?.y, o.a.c ?? "def", o.a.c || "def", o.a.f?.(), o.a.g?.(), o.a.b ?? "nb");`,
  ],
  [
    "logical assignment",
    `let a=null, b=0, c=1; a ??= "set"; b ||= 5; c &&= 7; console.log(a,b,c);`,
  ],
  [
    "comma, void, typeof, delete",
    `let x=(1,2,3); const o={p:1}; console.log(x, void 0, typeof null, typeof [], typeof function(){}, delete o.p, o.p);`,
  ],
  [
    "equality quirks",
    `console.log(0=="", null==undefined, null===undefined, NaN==NaN, Object.is(NaN,NaN), Object.is(0,-0), [1]=="1", "b"+"a"+ +"a"+"a");`,
  ],
  [
    "getters on object literals",
    `const o={ _v:2, get double(){ return this._v*2 }, set v(x){ this._v=x } }; o.v=10; console.log(o.double, Object.keys(o).join());`,
  ],
  [
    "Symbols",
    `const s=Symbol("desc"); const o={[s]:1, n:2}; console.log(s.toString(), s.description, Object.keys(o).length, Object.getOwnPropertySymbols(o).length, Symbol.for("k")===Symbol.for("k"));`,
  ],
  [
    "Proxy and Reflect",
    `const p=new Proxy({}, { get:(t,k)=>k in t ? t[k] : "default:"+String(k), set(t,k,v){ t[k]=v*2; return true } }); p.a=2; console.log(p.a, p.b, Reflect.has(p,"a"), Reflect.ownKeys(p).join());`,
  ],
  [
    "getter-based lazy evaluation",
    `let calls=0; const o={ get lazy(){ calls++; Object.defineProperty(this,"lazy",{value:42}); return 42 } }; o.lazy; o.lazy; console.log(o.lazy, calls);`,
  ],
  [
    "sorting with multiple keys",
    `const rows=[{n:"b",a:30},{n:"a",a:25},{n:"c",a:30}]; rows.sort((x,y)=>y.a-x.a||x.n.localeCompare(y.n)); console.log(rows.map(r=>r.n+r.a).join(" "));`,
  ],
  [
    "string formatting of table output",
    `const rows=[["Name","Qty"],["apple",3],["banana",12]]; for (const [a,b] of rows) console.log(String(a).padEnd(8)+String(b).padStart(4));`,
  ],
  [
    "word frequency program",
    `const text="It was the best of times, it was the worst of times"; const freq={}; for (const w of text.toLowerCase().match(/\\w+/g)) freq[w]=(freq[w]||0)+1; console.log(Object.entries(freq).sort((a,b)=>b[1]-a[1]).slice(0,3));`,
  ],
  [
    "matrix and 2D arrays",
    `const m=[[1,2,3],[4,5,6]]; const t=m[0].map((_,i)=>m.map(r=>r[i])); console.log(JSON.stringify(t)); console.log(t);`,
  ],
  [
    "primes sieve",
    `const n=50, s=new Array(n+1).fill(true); s[0]=s[1]=false; for (let i=2;i*i<=n;i++) if (s[i]) for (let j=i*i;j<=n;j+=i) s[j]=false; console.log(s.reduce((a,v,i)=>v?[...a,i]:a,[]).join(" "));`,
  ],
  [
    "eval and Function constructor",
    `console.log(eval("1+2"), new Function("a","b","return a*b")(6,7), (0,eval)("typeof globalThis"));`,
  ],
  [
    "globalThis properties",
    `var gv=1; console.log(globalThis.gv, typeof globalThis.setTimeout, typeof globalThis.console.log, typeof window, typeof global === "undefined" ? "no global" : "global");`.replace(
      `, typeof global === "undefined" ? "no global" : "global"`,
      "",
    ),
  ],
  [
    "Date.now and performance.now exist",
    `console.log(typeof Date.now(), typeof performance === "object" && typeof performance.now(), Date.now() > 1.6e12);`,
  ],
  [
    "process.argv, env and exit code",
    `console.log(Array.isArray(process.argv), typeof process.env); process.exitCode = 3;`,
  ],
  ["process.exit with code", `console.log("bye"); process.exit(7); console.log("not printed");`],
  [
    "process.exit inside async",
    `(async()=>{ await null; console.log("leaving"); process.exit(2) })(); setTimeout(()=>console.log("never"),50);`,
  ],
  [
    "process.stdout.write without newline",
    `process.stdout.write("a"); process.stdout.write("b\\n"); process.stdout.write(String(42)); console.log();`,
  ],
  [
    "require path and fs roundtrip",
    `const fs=require("fs"), path=require("path"); fs.writeFileSync("t.txt","line1\\nline2\\n"); console.log(fs.readFileSync("t.txt","utf8").split("\\n").length, path.join("a","b","../c"), path.extname("x.tar.gz"), path.basename("/a/b.txt",".txt")); fs.unlinkSync("t.txt");`,
  ],
  [
    "Array destructuring from Map entries sorted",
    `const m=new Map(Object.entries({z:26,a:1,m:13})); console.log(new Map([...m].sort(([a],[b])=>a<b?-1:1)));`,
  ],
  [
    "Object.entries map to string",
    `const inv={apples:3,pears:0,kiwis:12}; console.log(Object.entries(inv).filter(([,n])=>n>0).map(([k,n])=>\`\${k}=\${n}\`).join("; "));`,
  ],
  [
    "number to locale fixed with Intl in report",
    `const total=1234567.5; console.log("Total: " + total.toLocaleString("en-US",{minimumFractionDigits:2,maximumFractionDigits:2}));`,
  ],
  [
    "Date formatting with padStart",
    `const d=new Date(Date.UTC(2024,0,5,9,3)); const p=n=>String(n).padStart(2,"0"); console.log(\`\${d.getUTCFullYear()}-\${p(d.getUTCMonth()+1)}-\${p(d.getUTCDate())} \${p(d.getUTCHours())}:\${p(d.getUTCMinutes())}\`);`,
  ],
  [
    "Array.prototype.toString on nested empty",
    `console.log(String([[],[[]],[1,[]]]), [] + [], [] + {}, [0]==false);`,
  ],
  [
    "chained optional calls on arrays",
    `const users=[{name:"a",addr:{city:"X"}},{name:"b"}]; console.log(users.map(u=>u.addr?.city ?? "unknown").join());`,
  ],
  [
    "string localeCompare with sensitivity",
    `console.log("a".localeCompare("A", undefined, {sensitivity:"base"}), "résumé".localeCompare("resume", "en", {sensitivity:"base"}), "a".localeCompare("B"));`,
  ],
  ["Array sort default on mixed", `console.log([undefined, 3, null, 1, "b", "a", 20].sort());`],
  [
    "debounce-like timer logic",
    `let last; function debounce(f,ms){ let t; return (...a)=>{ clearTimeout(t); t=setTimeout(()=>f(...a),ms) } } const d=debounce(x=>console.log("called",x),10); d(1); d(2); d(3);`,
  ], // Node's globals and built-in modules
  [
    "Buffer base64, hex, utf8 lengths and concat",
    `const b = Buffer.from("héllo wörld"); console.log(Buffer.from("hi").toString("base64"), b.length, b.toString("hex"), Buffer.byteLength("héllo"), Buffer.concat([Buffer.from("a"), Buffer.from("b")]).toString(), Buffer.from("aGVsbG8=", "base64").toString());`,
  ],
  [
    "Buffer base64url, compare, numbers and JSON",
    `const b = Buffer.alloc(8); b.writeUInt32BE(0xdeadbeef, 0); b.writeInt16LE(-2, 4); console.log(Buffer.from("héllo?>").toString("base64url"), Buffer.from("aMOpbGxvPz4", "base64url").toString(), Buffer.compare(Buffer.from("a"), Buffer.from("b")), b.readUInt32BE(0).toString(16), JSON.stringify(Buffer.from("ab")), Buffer.isBuffer(b), require("buffer").Buffer === Buffer);`,
  ],
  [
    "fs.readFileSync without an encoding gives a Buffer",
    `const fs = require("fs"); fs.writeFileSync("d.json", JSON.stringify({a: 1})); const raw = fs.readFileSync("d.json"); console.log(Buffer.isBuffer(raw), JSON.parse(raw), raw.toString("utf8")); fs.unlinkSync("d.json");`,
  ],
  [
    "crypto hashes and hmac",
    `const c = require("crypto"); console.log(c.createHash("sha256").update("hello").digest("hex"), c.createHash("md5").update("hello").digest("hex"), c.createHash("sha1").update("a").update("b").digest("base64"), c.createHash("sha512").update(Buffer.from("x")).digest("hex").length, c.createHmac("sha256", "key").update("data").digest("hex"));`,
  ],
  [
    "crypto random values have the right shapes",
    `const c = require("node:crypto"); const n = c.randomInt(10); const a = crypto.getRandomValues(new Uint8Array(8)); console.log(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()), c.randomUUID().length, c.randomBytes(16).length, c.randomBytes(4).toString("hex").length, n >= 0 && n < 10, a.length, typeof crypto.getRandomValues);`,
  ],
  [
    "CommonJS scope of a script",
    `console.log(typeof module, typeof exports, typeof __filename, typeof __dirname, module.exports === exports, typeof require.resolve); module.exports = {a: 1}; console.log(module.exports, global === globalThis);`,
  ],
  [
    "process facts a program branches on",
    `console.log(process.platform, typeof process.version, process.version.startsWith("v"), typeof process.versions.node, typeof process.hrtime(), typeof process.hrtime.bigint(), typeof process.memoryUsage().heapUsed, typeof process.uptime(), typeof process.pid);`,
  ],
  [
    "process.nextTick and setImmediate",
    `setImmediate(() => console.log("immediate")); process.nextTick(() => console.log("tick")); Promise.resolve().then(() => console.log("micro")); console.log("sync");`,
  ],
  [
    "timers are objects with unref",
    `const t = setTimeout(() => console.log("never"), 10); console.log(typeof t, typeof t.unref, t.unref() === t); clearTimeout(t); const i = setInterval(() => { console.log("iv"); clearInterval(i); }, 5);`,
  ],
  [
    "os module",
    `const os = require("os"); console.log(JSON.stringify(os.EOL), os.platform(), os.type(), typeof os.tmpdir(), os.cpus().length > 0, typeof os.homedir());`,
  ],
  [
    "path posix functions",
    `const path = require("path"); console.log(path.join("/a", "b", "../c"), path.resolve("/x", "y"), path.relative("/a/b", "/a/c/d"), path.parse("/home/u/f.txt"), path.format({dir: "/x", base: "y.js"}), path.extname("a.tar.gz"), path.basename("/a/b.js", ".js"), path.sep, path.delimiter);`,
  ],
  [
    "util format, inspect, promisify, types",
    `const util = require("util"); const sleep = util.promisify((ms, cb) => setTimeout(() => cb(null, ms), ms)); console.log(util.format("%s=%d", "x", 5), util.inspect({a: [1, 2]}), util.types.isDate(new Date()), util.isDeepStrictEqual({a: [1]}, {a: [1]}), util.isDeepStrictEqual([1], ["1"])); sleep(5).then((v) => console.log("slept", v));`,
  ],
  [
    "events EventEmitter",
    `const EventEmitter = require("events"); class My extends EventEmitter {} const e = new My(); e.on("x", (v) => console.log("x", v)); e.once("x", () => console.log("once")); e.emit("x", 1); e.emit("x", 2); console.log(e.listenerCount("x"), EventEmitter.EventEmitter === EventEmitter, e instanceof EventEmitter);`,
  ],
  [
    "assert passes and fails",
    `const assert = require("assert"); assert.strictEqual(1, 1); assert.deepStrictEqual({a: [1, new Map([[1, 2]])]}, {a: [1, new Map([[1, 2]])]}); assert.throws(() => { throw new TypeError("t"); }, TypeError); console.log("ok"); try { assert.strictEqual(1, 2); } catch (e) { console.log(e.name, e.code, e.message); } try { assert.deepStrictEqual([1], ["1"]); } catch (e) { console.log(e.code); } try { assert(false, "custom"); } catch (e) { console.log(e.message); }`,
  ],
  ["throws: a failed assertion", `const assert = require("assert"); assert.strictEqual(1, 2);`],
  [
    "url, querystring, string_decoder",
    `const { URL, fileURLToPath } = require("url"); const qs = require("querystring"); const { StringDecoder } = require("string_decoder"); const d = new StringDecoder("utf8"); console.log(new URL("https://x.org/a?b=1").searchParams.get("b"), fileURLToPath("file:///tmp/a%20b.txt"), qs.parse("a=1&b=2&a=3"), qs.stringify({x: 1, y: [2, 3]}), d.write(Buffer.from([0xe2, 0x82])) + d.end(Buffer.from([0xac])));`,
  ],
  [
    "timers/promises",
    `const { setTimeout: sleep } = require("timers/promises"); (async () => { const v = await sleep(5, "value"); console.log(v); })();`,
  ],
  [
    "AbortController and AbortSignal",
    `const ac = new AbortController(); ac.signal.addEventListener("abort", () => console.log("aborted", ac.signal.aborted)); ac.abort(); console.log(ac.signal.reason.name, ac.signal.reason.message, AbortSignal.abort().aborted); try { ac.signal.throwIfAborted(); } catch (e) { console.log("thrown", e.name); }`,
  ],
  [
    "EventTarget, Event and CustomEvent",
    `const t = new EventTarget(); const f = (e) => console.log("got", e.type, e.detail); t.addEventListener("x", f); t.addEventListener("y", () => console.log("once"), {once: true}); t.dispatchEvent(new CustomEvent("x", {detail: 7})); t.dispatchEvent(new Event("y")); t.dispatchEvent(new Event("y")); t.removeEventListener("x", f); console.log(t.dispatchEvent(new Event("x")));`,
  ],
  [
    "Blob size, type, text and slice",
    `const b = new Blob(["hello ", "world"], {type: "Text/Plain"}); console.log(b.size, b.type); b.slice(0, 5).text().then(console.log); b.arrayBuffer().then((a) => console.log(a.byteLength));`,
  ],
  [
    "console group, count, assert",
    `console.group("G"); console.log("inside"); console.group(); console.log("deeper\\nlines"); console.groupEnd(); console.groupEnd(); console.log("out"); console.count(); console.count(); console.count("x"); console.countReset(); console.count(); console.assert(1 === 2, "nope"); console.assert(true, "silent"); console.log(typeof console.time, typeof console.timeEnd);`,
  ],
  [
    "custom error with Error.captureStackTrace",
    `class AppError extends Error { constructor(m) { super(m); this.name = "AppError"; Error.captureStackTrace(this, AppError); } } const e = new AppError("failed"); console.log(e.stack.split("\\n")[0], e instanceof AppError, String(e));`,
  ],
  // Intl beyond en
  [
    "Intl.RelativeTimeFormat and ListFormat",
    `const r = new Intl.RelativeTimeFormat("en", {numeric: "auto"}); console.log(r.format(-1, "day"), r.format(3, "week"), new Intl.RelativeTimeFormat("de").format(-2, "day"), new Intl.ListFormat("en", {style: "long", type: "conjunction"}).format(["a", "b", "c"]), new Intl.ListFormat("fr").format(["a", "b", "c"]));`,
  ],
  [
    "Intl number formats of other locales",
    `console.log(new Intl.NumberFormat("de-DE", {style: "currency", currency: "EUR"}).format(1234.5), (1234567.891).toLocaleString("de-DE"), (1234567.891).toLocaleString("fr-FR"), (1234567.891).toLocaleString("en-IN"), new Intl.NumberFormat("ja-JP", {style: "currency", currency: "JPY"}).format(1234), (0.25).toLocaleString("es-ES", {style: "percent"}), (1234.5).toLocaleString("pt-BR", {style: "currency", currency: "BRL"}));`,
  ],
  [
    "Intl date formats of other locales",
    `const d = new Date(Date.UTC(2024, 0, 15, 13, 5)); console.log(d.toLocaleDateString("de-DE"), d.toLocaleDateString("en-GB"), d.toLocaleDateString("ja-JP"), d.toLocaleDateString("fr-FR", {weekday: "long", day: "numeric", month: "long", year: "numeric"}), d.toLocaleString("en-GB", {timeZone: "UTC"}), d.toLocaleDateString("zh-CN"), d.toLocaleDateString("nl-NL", {month: "long"}), d.toLocaleDateString("it-IT"));`,
  ],
];

/**
 * The corpus file's cases: "=== NAME" starts one, "=== NAME !! REASON" one that cannot match by
 * design, and the lines up to the next "===" are its program.
 */
function parseCorpus(text: string): {
  cases: [string, string][];
  excluded: Record<string, string>;
} {
  const cases: [string, string][] = [];
  const excluded: Record<string, string> = {};
  let current: { name: string; lines: string[] } | null = null;
  const finish = () => {
    if (current) cases.push([current.name, current.lines.join("\n").replace(/\n+$/, "")]);
  };
  for (const line of text.split("\n")) {
    const header = /^=== (.*?)(?: !! (.*))?$/.exec(line);
    if (header) {
      finish();
      current = { name: header[1]!, lines: [] };
      if (header[2]) excluded[current.name] = header[2];
    } else if (current) current.lines.push(line);
  }
  finish();
  return { cases, excluded };
}

const CORPUS = parseCorpus(readFileSync(new URL("cases/javascript.txt", import.meta.url), "utf8"));
CASES.push(...CORPUS.cases);

/** Cases that cannot match by design, and why. */
const EXCLUDED: Record<string, string> = {
  ...CORPUS.excluded,
  "iterator helpers absent or present":
    "iterator helpers (ES2025) are in QuickJS and in Node 22+, not in Node 20: the expected output depends on the Node version",
  "group by with Object.groupBy":
    "Object.groupBy is in QuickJS and in Node 21+, not in Node 20: the expected output depends on the Node version",
  "throws: unhandled rejection of async function":
    "a promise an async function returns is QuickJS's own: quickjs-emscripten exposes no rejection tracker, so its unhandled rejection goes unseen",
  "URL invalid throws TypeError":
    "Node's URL errors carry Node's own code property (ERR_INVALID_URL); core-js's are plain TypeErrors",
};

/** The line of stderr that names an uncaught error: "Name: message". */
const errorLine = (stderr: string): string =>
  stderr
    .split("\n")
    .map((l) => l.replace(/^Uncaught /, ""))
    .find((l) => /^[A-Za-z]*(Error|Exception)\b.*: /.test(l)) ?? "(no error line)";

function withErrorLine(label: string, stdout: string, stderr: string): string {
  return label.startsWith("throws") ? `${stdout}--- stderr names: ${errorLine(stderr)}\n` : stdout;
}

let runtime: Runtime;
beforeAll(async () => {
  runtime = await testRuntime({ pool: { python: 0, javascript: 2, bash: 0 } });
});
afterAll(async () => {
  await runtime?.close();
});

describe("JavaScript behaves as under Node", () => {
  it("evaluates a polyfill only when a program first reads one of its globals", async () => {
    await using sb = await Sandbox.create({ runtime });
    const lazy = (name: string) =>
      `typeof Object.getOwnPropertyDescriptor(globalThis, "${name}").get`;
    const before = await sb.run("javascript", `[${lazy("Intl")}, ${lazy("URL")}]`);
    expect(before.value).toBe("[ 'function', 'function' ]");
    const used = await sb.run(
      "javascript",
      "new URL('https://a.example/p?q=1').searchParams.get('q')",
    );
    expect(used.value).toBe("'1'");
    const after = await sb.run(
      "javascript",
      `[${lazy("Intl")}, ${lazy("URL")}, ${lazy("structuredClone")}]`,
    );
    expect(after.value).toBe("[ 'function', 'undefined', 'undefined' ]");
  });

  it(`at least ${THRESHOLD * 100}% of ${CASES.length} programs print the same and exit the same`, async () => {
    expect(CASES.length).toBeGreaterThanOrEqual(120);
    const tally = await differential(
      "JavaScript behaviour",
      CASES,
      EXCLUDED,
      (code, label): Outcome => {
        const r = spawnSync(process.execPath, ["-e", code], {
          encoding: "utf8",
          env: { ...process.env, TZ: "UTC", LANG: "en_US.UTF-8" },
        });
        return { stdout: withErrorLine(label, r.stdout, r.stderr), exitCode: r.status ?? -1 };
      },
      async (code, label): Promise<Outcome> => {
        // A one-shot: a fresh interpreter, as execute_javascript gives.
        const r = await run({ language: "javascript", code, runtime });
        return { stdout: withErrorLine(label, r.stdout, r.stderr), exitCode: r.exitCode };
      },
    );
    expect(tally.ratio).toBeGreaterThanOrEqual(THRESHOLD);
  }, 1_800_000);
});
